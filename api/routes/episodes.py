"""Episode routes: create, read, change, suspend, reset, delete, and the event log."""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, Query, Request, Response
from pydantic import ValidationError

from api.analysis.attribution import attribute
from api.analysis.page_check import UpstreamRefused, fetch_and_check
from api.analysis.summary import summarise
from api.analysis.verdicts import Unchecked, unchecked
from api.errors import ApiError, validation_message
from api.models import AgentEvent, EpisodeCreate, EpisodePatch
from api.routes import catalogue
from api.routes.evidence import evidence_of
from api.service.settings import Settings
from api.version import version
from proxy.episode import Episode, EpisodeConfig, new_episode
from proxy.knowledge import KnowledgeStore
from proxy.store import EpisodeStore, StoreUnavailable
from proxy.store.base import parse_event_id

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/episodes", tags=["episodes"])


def _store(request: Request) -> EpisodeStore:
    store: EpisodeStore = request.app.state.store
    return store


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def describe(episode: Episode, settings: Settings) -> dict[str, Any]:
    """The episode as the API shows it, with everything a client needs to bind a browser."""
    host_port = f"{settings.public_proxy_host}:{settings.proxy_port}"
    return {
        **episode.model_dump(mode="json"),
        "shifts_applied": [] if episode.replay_of else episode.shift_names(),
        "shift_digest": episode.shift_digest(version()),
        "proxy": {
            "server": settings.proxy_server,
            "username": episode.id,
            "password": episode.token,
        },
        "proxy_url": f"http://{episode.id}:{episode.token}@{host_port}",
        "header": {settings.episode_header: f"{episode.id}:{episode.token}"},
    }


async def load_episode(store: EpisodeStore, episode_id: str) -> Episode:
    record = await store.get_episode(episode_id)
    if record is None:
        raise ApiError(404, f"episode {episode_id!r} not found")
    return Episode.model_validate(record)


async def store_new_episode(
    store: EpisodeStore,
    settings: Settings,
    config: dict[str, Any],
    episode_id: str | None = None,
    knowledge: KnowledgeStore | None = None,
    **server_fields: Any,
) -> Episode:
    """Validate, create and log a new episode: the one way episodes come to be (API, preview).
    The deployment's `--targets` are written into it, under the episode's own mapping, and the
    site knowledge epoch it is shifted against is pinned (the current one, unless it names an
    earlier one)."""
    config = with_deployment_targets(settings, config)
    try:
        validated = EpisodeConfig.model_validate(config)
    except ValidationError as error:
        raise ApiError(422, validation_message(error)) from None
    if knowledge is not None and not validated.replay_of:
        validated = validated.model_copy(
            update={"knowledge": await pinned_epoch(knowledge, validated.knowledge)}
        )
    episode = new_episode(validated, episode_id, **server_fields)
    if not await store.create_episode(
        episode.id, episode.model_dump(mode="json"), episode.expires_at
    ):
        raise ApiError(409, f"episode {episode.id!r} already exists")
    await store.append_event(
        episode.id,
        {
            "type": "episode_created",
            "ts": time.time(),
            "source": "api",
            "condition": episode.condition,
            "regime": episode.regime,
            "seed": episode.seed,
            "shift_digest": episode.shift_digest(version()),
            "knowledge": episode.knowledge,
        },
        episode.expires_at,
    )
    return episode


async def pinned_epoch(knowledge: KnowledgeStore, asked: int | None) -> int:
    """The knowledge epoch an episode is shifted against: the one asked for, or the current."""
    try:
        current = await knowledge.epoch()
    except StoreUnavailable as error:
        raise ApiError(503, f"the knowledge store is unavailable: {error}") from None
    if asked is not None and asked > current:
        raise ApiError(
            422, f"knowledge: epoch {asked} does not exist yet (the current one is {current})"
        )
    return current if asked is None else asked


def with_deployment_targets(settings: Settings, config: dict[str, Any]) -> dict[str, Any]:
    """The episode's `targets` over the deployment's `--targets` (its own mapping wins)."""
    return {**config, "targets": {**dict(settings.targets), **config.get("targets", {})}}


@router.post("", status_code=201)
async def create_episode(body: EpisodeCreate, request: Request) -> dict[str, Any]:
    config = body.model_dump(exclude={"id"}, exclude_unset=True)
    server_fields: dict[str, Any] = {}
    if body.replay_of is not None:
        config, server_fields = await _replay_config(request, config, body.replay_of)
    episode = await store_new_episode(
        _store(request),
        _settings(request),
        config,
        body.id,
        request.app.state.knowledge.store,
        **server_fields,
    )
    return describe(episode, _settings(request))


async def _replay_config(
    request: Request, config: dict[str, Any], replayed_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A replay shows the recorded episode under its own labels (condition, seed, site: for
    reading, no shift runs) and accepts its pages' beacon key."""
    evidence = evidence_of(request)
    evidence.recorded()
    found = await evidence.episode(replayed_id)
    if found is None:
        raise ApiError(404, f"episode {replayed_id!r} not found, live or archived")
    replayed, _ = found
    if replayed.replay_of:
        raise ApiError(422, f"episode {replayed_id!r} is a replay itself; replay its original")
    if not await evidence.pages(replayed_id):
        raise ApiError(422, f"episode {replayed_id!r} has no recorded page to replay")
    labels = replayed.model_dump(
        mode="json", include={"condition", "perceptual", "regime", "regime_params", "seed", "site"}
    )
    replayed_key = await evidence.beacon_key(replayed_id)
    return {**labels, **config}, {"replayed_beacon_key": replayed_key}


@router.get("")
async def list_episodes(
    request: Request,
    include_internal: bool = Query(
        False,
        description="List the service's own episodes too (`internal`: the browser oracle's, "
        "the preview's, calibration runs)",
    ),
) -> dict[str, Any]:
    """Every live episode, oldest first; the service's own only with `include_internal`."""
    records = await _store(request).list_episodes()
    episodes = [
        describe(episode, _settings(request))
        for episode in map(Episode.model_validate, records)
        if include_internal or not episode.internal
    ]
    return {"episodes": sorted(episodes, key=lambda e: e["created_at"])}


@router.get("/{episode_id}")
async def get_episode(episode_id: str, request: Request) -> dict[str, Any]:
    """A live episode, or an archived one (`"archived": true`, no state left to show)."""
    store = _store(request)
    episode, live = await evidence_of(request).require(episode_id)
    if not live:
        events = await evidence_of(request).events(episode_id, live)
        return {
            **describe(episode, _settings(request)),
            "archived": True,
            "event_count": len(events),
        }
    return {
        **describe(episode, _settings(request)),
        "archived": False,
        "flags": await store.get_flags(episode_id),
        "counters": await store.get_counters(episode_id),
        "event_count": await store.count_events(episode_id),
    }


@router.patch("/{episode_id}")
async def patch_episode(episode_id: str, body: EpisodePatch, request: Request) -> dict[str, Any]:
    store = _store(request)
    episode = await load_episode(store, episode_id)
    changes = body.model_dump(exclude_unset=True)
    merged = {**episode.model_dump(mode="json"), **changes}
    try:
        updated = Episode.model_validate(merged)
    except ValidationError as error:
        raise ApiError(422, validation_message(error)) from None
    await _save(store, updated)
    await store.append_event(
        episode_id,
        {"type": "episode_patched", "ts": time.time(), "source": "api", "changes": changes},
        updated.expires_at,
    )
    return describe(updated, _settings(request))


@router.delete("/{episode_id}", status_code=204)
async def delete_episode(episode_id: str, request: Request) -> Response:
    """Delete the episode and unbind every listener whose default it is."""
    if not await _store(request).delete_episode(episode_id):
        raise ApiError(404, f"episode {episode_id!r} not found")
    await catalogue.unbind_listener_defaults(request, episode_id)
    return Response(status_code=204)


@router.post("/{episode_id}/reset")
async def reset_episode(episode_id: str, request: Request) -> dict[str, Any]:
    """Forget flags (e.g. `once` already shown), counters and events; keep the configuration."""
    store = _store(request)
    episode = await load_episode(store, episode_id)
    episode = episode.model_copy(update={"generation": episode.generation + 1})
    await _save(store, episode)
    await store.reset_episode(episode_id)
    await store.append_event(
        episode_id,
        {"type": "episode_reset", "ts": time.time(), "source": "api"},
        episode.expires_at,
    )
    return describe(episode, _settings(request))


@router.post("/{episode_id}/suspend")
async def suspend_episode(episode_id: str, request: Request) -> dict[str, Any]:
    """Pass pages through unshifted (routing stays), so an evaluator can read the real page."""
    return await _set_suspended(episode_id, request, True)


@router.post("/{episode_id}/resume")
async def resume_episode(episode_id: str, request: Request) -> dict[str, Any]:
    return await _set_suspended(episode_id, request, False)


@router.get("/{episode_id}/events")
async def read_events(
    episode_id: str,
    request: Request,
    after: str | None = Query(
        None, pattern=r"^\d+-\d+$", description="Return events after this id"
    ),
    limit: int = Query(100, ge=1, le=1000),
) -> dict[str, Any]:
    """Live episodes from the store, archived ones from the recording directory."""
    _, live = await evidence_of(request).require(episode_id)
    if live:
        events = await _store(request).read_events(episode_id, after=after, limit=limit)
    else:
        archived = await evidence_of(request).events(episode_id, live)
        start = parse_event_id(after) if after else (-1, -1)
        events = [e for e in archived if parse_event_id(e["id"]) > start][:limit]
    return {"events": events, "next": events[-1]["id"] if events else after}


@router.get("/{episode_id}/report")
async def report(episode_id: str, request: Request) -> dict[str, Any]:
    """The episode's events summarised: pages, popups (shown, dismissed, blocked), draws."""
    episode, live = await evidence_of(request).require(episode_id)
    return {
        "id": episode.id,
        "condition": episode.condition,
        "regime": episode.regime,
        "seed": episode.seed,
        "archived": not live,
        **summarise(await evidence_of(request).events(episode_id, live)),
    }


@router.get("/{episode_id}/check")
async def check(
    episode_id: str,
    request: Request,
    url: str = Query(..., pattern=r"^https?://", description="Page to fetch and check"),
) -> dict[str, Any]:
    """Fetch `url` directly (only from upstreams the proxy may reach), shift it as this episode
    would, and list alignment violations. `status`: `aligned`, `violations`, or `unchecked`
    with a `reason` (the page could not be fetched, answered a non-2xx status, is not HTML)."""
    episode = await load_episode(_store(request), episode_id)
    try:
        return await fetch_and_check(episode, url, _settings(request).may_reach)
    except UpstreamRefused as error:
        raise ApiError(403, str(error)) from None
    except Unchecked as error:
        labels = {"condition": episode.condition, "seed": episode.seed}
        return unchecked(str(error), url=url, **labels)


@router.post("/{episode_id}/events", status_code=201)
async def post_event(episode_id: str, body: AgentEvent, request: Request) -> dict[str, Any]:
    """An event from agent code: `task_result`, `skill_call`, `skill_failure`, `step` or `note`,
    each with its own schema. The types the proxy and the page runtime record are refused."""
    store = _store(request)
    episode = await load_episode(store, episode_id)
    event = {**body.model_dump(exclude_none=True), "ts": time.time(), "source": "agent"}
    if event["type"] == "skill_failure":
        event["attribution"] = await _attribution(request, episode, event)
    event_id = await store.append_event(episode_id, event, episode.expires_at)
    if event_id is None:
        raise ApiError(404, f"episode {episode_id!r} not found")
    return {"id": event_id, **event}


async def _attribution(request: Request, episode: Episode, failure: dict[str, Any]) -> Any:
    """Which shift the failure is owed to, judged now, on the page the agent is on. A failure
    is never lost to its attribution: one that cannot be judged is unattributed, with why."""
    evidence = evidence_of(request)
    try:
        events = await evidence.events(episode.id, True)
        return await attribute(episode, failure, events, evidence.recording)
    except Exception as error:  # noqa: BLE001 - the event matters more than its attribution
        logger.exception("attribution of a skill failure of %s failed", episode.id)
        return {"shift": "unattributed", "why": f"attribution failed: {error}"[:300]}


async def _set_suspended(episode_id: str, request: Request, suspended: bool) -> dict[str, Any]:
    store = _store(request)
    episode = await load_episode(store, episode_id)
    updated = episode.model_copy(update={"suspended": suspended})
    await _save(store, updated)
    await store.append_event(
        episode_id,
        {
            "type": "episode_suspended" if suspended else "episode_resumed",
            "ts": time.time(),
            "source": "api",
        },
        episode.expires_at,
    )
    return describe(updated, _settings(request))


async def _save(store: EpisodeStore, episode: Episode) -> None:
    if not await store.update_episode(episode.id, episode.model_dump(mode="json")):
        raise ApiError(404, f"episode {episode.id!r} not found")
