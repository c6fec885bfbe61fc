"""Episode routes: create, read, change, suspend, reset, delete, and the event log."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import AfterValidator, ValidationError

from api.analysis.attribution import attribute
from api.analysis.page_check import UpstreamRefused, fetch_and_check
from api.analysis.summary import summarise
from api.analysis.verdicts import Unchecked, unchecked
from api.dependencies import EvidenceDep, KnowledgeDep, SettingsDep, StoreDep
from api.episodes.evidence import REPLAY_LABELS, Evidence
from api.episodes.lifecycle import (
    change_episode,
    describe,
    load_episode,
    store_new_episode,
    unbind_listener_defaults,
)
from api.failures import Invalid, NotFound, Refused, validation_message
from api.models import AgentEvent, EpisodeCreate, EpisodePatch
from api.service.settings import Settings
from proxy.episode import ASKED, Episode
from proxy.events import event
from proxy.store import EpisodeStore
from proxy.store.base import parse_event_id

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/episodes", tags=["episodes"])


@router.post("", status_code=201)
async def create_episode(
    store: StoreDep,
    settings: SettingsDep,
    knowledge: KnowledgeDep,
    evidence: EvidenceDep,
    body: EpisodeCreate | None = None,
) -> dict[str, Any]:
    """Every field is optional: no body at all is an episode of the defaults, as `{}` is."""
    body = body or EpisodeCreate()
    config = body.model_dump(exclude={"id"}, exclude_unset=True)
    server_fields: dict[str, Any] = {}
    if body.replay_of is not None:
        config, server_fields = await _replay_config(evidence, config, body.replay_of)
    episode = await store_new_episode(
        store, settings, config, body.id, knowledge.store, **server_fields
    )
    return describe(episode, settings)


async def _replay_config(
    evidence: Evidence, config: dict[str, Any], replayed_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A replay shows the recorded episode under its own labels (condition, seed, site: for
    reading, no shift runs) and accepts its pages' beacon key."""
    evidence.recorded()
    found = await evidence.episode(replayed_id)
    if found is None:
        raise NotFound(f"episode {replayed_id!r} not found, live or archived")
    replayed, live = found
    if replayed.replay_of:
        raise Invalid(f"episode {replayed_id!r} is a replay itself; replay its original")
    if not await evidence.replayable_pages(replayed_id):
        # Refused now, not left to answer every request with a miss.
        why = await _why_nothing_was_recorded(evidence, replayed, live)
        raise Invalid(f"episode {replayed_id!r} has no recorded page to replay: {why}")
    labels = replayed.model_dump(mode="json", include=set(REPLAY_LABELS))
    replayed_key = await evidence.beacon_key(replayed_id)
    return {**labels, **config}, {"replayed_beacon_key": replayed_key}


async def _why_nothing_was_recorded(evidence: Evidence, episode: Episode, live: bool) -> str:
    if episode.record == "off":
        return "it was created with record: off"
    events = await evidence.events(episode.id, live)
    served = sum(1 for e in events if e.get("type") == "page_served")
    if served:
        # The event is in the store as the page is served; its entry is queued for the disk
        # once the response is through, so a process killed in between keeps only the event.
        return (
            f"its events say {served} page(s) were served, but its recording holds no page "
            "entry: they were served while the service had no record directory, or by a "
            "process stopped before it wrote them"
        )
    return "it loaded no page through this service while it had a record directory"


@router.get("")
async def list_episodes(
    store: StoreDep,
    settings: SettingsDep,
    include_internal: bool = Query(
        False,
        description="List the service's own episodes too (`internal`: the browser oracle's, "
        "the preview's, calibration runs)",
    ),
) -> dict[str, Any]:
    """Every live episode, oldest first; the service's own only with `include_internal`."""
    records = await store.list_episodes()
    episodes = [
        describe(episode, settings)
        for episode in map(Episode.model_validate, records)
        if include_internal or not episode.internal
    ]
    return {"episodes": sorted(episodes, key=lambda e: e["created_at"])}


@router.get("/{episode_id}")
async def get_episode(
    episode_id: str, store: StoreDep, settings: SettingsDep, evidence: EvidenceDep
) -> dict[str, Any]:
    """A live episode, or an archived one (`"archived": true`: no state left to show, and
    nothing to bind a browser to, so no binding: its token is never archived)."""
    episode, live = await evidence.require(episode_id)
    if not live:
        events = await evidence.events(episode_id, live)
        shown = describe(episode, settings)
        for binding in ("token", "proxy", "proxy_url", "header"):
            shown.pop(binding)
        return {**shown, "archived": True, "event_count": len(events)}
    return {
        **describe(episode, settings),
        "archived": False,
        "flags": await store.get_flags(episode_id),
        "counters": await store.get_counters(episode_id),
        "event_count": await store.count_events(episode_id),
    }


@router.patch("/{episode_id}")
async def patch_episode(
    episode_id: str, body: EpisodePatch, store: StoreDep, settings: SettingsDep
) -> dict[str, Any]:
    changes = body.model_dump(exclude_unset=True)

    def patched(episode: Episode) -> Episode:
        try:
            return Episode.model_validate(
                {**episode.model_dump(mode="json"), **changes}, context=ASKED
            )
        except ValidationError as error:
            raise Invalid(validation_message(error)) from None

    updated = await change_episode(
        store, episode_id, patched, event("episode_patched", "api", changes=changes)
    )
    return describe(updated, settings)


@router.delete("/{episode_id}", status_code=204)
async def delete_episode(episode_id: str, store: StoreDep, settings: SettingsDep) -> Response:
    """Delete the episode and unbind every listener whose default it is."""
    if not await store.delete_episode(episode_id):
        raise NotFound(f"episode {episode_id!r} not found")
    await unbind_listener_defaults(store, settings, episode_id)
    return Response(status_code=204)


@router.post("/{episode_id}/reset")
async def reset_episode(episode_id: str, store: StoreDep, settings: SettingsDep) -> dict[str, Any]:
    """Forget flags (e.g. `once` already shown), counters and events; keep the configuration."""
    episode = await change_episode(
        store,
        episode_id,
        lambda stored: stored.model_copy(update={"generation": stored.generation + 1}),
        event("episode_reset", "api"),
        reset=True,
    )
    return describe(episode, settings)


@router.post("/{episode_id}/suspend")
async def suspend_episode(
    episode_id: str, store: StoreDep, settings: SettingsDep
) -> dict[str, Any]:
    """Pass pages through unshifted (routing stays), so an evaluator can read the real page."""
    return await _set_suspended(store, settings, episode_id, True)


@router.post("/{episode_id}/resume")
async def resume_episode(episode_id: str, store: StoreDep, settings: SettingsDep) -> dict[str, Any]:
    return await _set_suspended(store, settings, episode_id, False)


def _event_id(after: str | None) -> str | None:
    """An id each store can look after: its parts within 64 bits (a 422 otherwise, never a
    store's error)."""
    if after is not None:
        parse_event_id(after)
    return after


@router.get("/{episode_id}/events")
async def read_events(
    episode_id: str,
    store: StoreDep,
    evidence: EvidenceDep,
    after: Annotated[
        str | None,
        Query(pattern=r"^\d+-\d+$", description="Return events after this id"),
        AfterValidator(_event_id),
    ] = None,
    limit: int = Query(100, ge=1, le=1000),
) -> dict[str, Any]:
    """Live episodes from the store, archived ones from the recording directory."""
    _, live = await evidence.require(episode_id)
    if live:
        events = await store.read_events(episode_id, after=after, limit=limit)
    else:
        archived = await evidence.events(episode_id, live)
        start = parse_event_id(after) if after else (-1, -1)
        events = [e for e in archived if parse_event_id(e["id"]) > start][:limit]
    return {"events": events, "next": events[-1]["id"] if events else after}


@router.get("/{episode_id}/report")
async def report(episode_id: str, evidence: EvidenceDep) -> dict[str, Any]:
    """The episode's events summarised: pages, popups (shown, dismissed, blocked), draws."""
    episode, live = await evidence.require(episode_id)
    return {
        "id": episode.id,
        "condition": episode.condition,
        "regime": episode.regime,
        "seed": episode.seed,
        "archived": not live,
        **summarise(await evidence.events(episode_id, live)),
    }


@router.get("/{episode_id}/check")
async def check(
    episode_id: str,
    store: StoreDep,
    settings: SettingsDep,
    url: str = Query(..., pattern=r"^https?://", description="Page to fetch and check"),
) -> dict[str, Any]:
    """Fetch `url` directly (only from upstreams the proxy may reach), shift it as this episode
    would, and list alignment violations. `status`: `aligned`, `violations`, or `unchecked`
    with a `reason` (the page could not be fetched, answered a non-2xx status, is not HTML)."""
    episode = await load_episode(store, episode_id)
    try:
        return await fetch_and_check(episode, url, settings.may_reach)
    except UpstreamRefused as error:
        raise Refused(str(error)) from None
    except Unchecked as error:
        labels = {"condition": episode.condition, "seed": episode.seed}
        return unchecked(str(error), url=url, **labels)


@router.post("/{episode_id}/events", status_code=201)
async def post_event(
    episode_id: str, body: AgentEvent, store: StoreDep, evidence: EvidenceDep
) -> dict[str, Any]:
    """An event from agent code: `task_result`, `skill_call`, `skill_failure`, `step` or `note`,
    each with its own schema. The types the proxy and the page runtime record are refused."""
    episode = await load_episode(store, episode_id)
    fields = body.model_dump(exclude_none=True)
    posted = event(fields.pop("type"), "agent", **fields)
    if posted["type"] == "skill_failure":
        posted["attribution"] = await _attribution(evidence, episode, posted)
    event_id = await store.append_event(episode_id, posted, episode.expires_at)
    if event_id is None:
        raise NotFound(f"episode {episode_id!r} not found")
    return {"id": event_id, **posted}


async def _attribution(evidence: Evidence, episode: Episode, failure: dict[str, Any]) -> Any:
    """Which shift the failure is owed to, judged now, on the page the agent is on. A failure
    is never lost to its attribution: one that cannot be judged is unattributed, with why."""
    try:
        events = await evidence.events(episode.id, True)
        return await attribute(episode, failure, events, evidence.recording)
    except Exception as error:  # noqa: BLE001 - the event matters more than its attribution
        logger.exception("attribution of a skill failure of %s failed", episode.id)
        return {"shift": "unattributed", "why": f"attribution failed: {error}"[:300]}


async def _set_suspended(
    store: EpisodeStore, settings: Settings, episode_id: str, suspended: bool
) -> dict[str, Any]:
    updated = await change_episode(
        store,
        episode_id,
        lambda stored: stored.model_copy(update={"suspended": suspended}),
        event("episode_suspended" if suspended else "episode_resumed", "api"),
    )
    return describe(updated, settings)
