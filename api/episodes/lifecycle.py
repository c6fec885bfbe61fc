"""How episodes come to be and how they are shown: the one way the API, the oracle and the
preview create an episode (validated, its knowledge epoch pinned, its creation logged), and the
description a client binds a browser with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from api.failures import Conflict, Invalid, NotFound, Unavailable, validation_message
from api.service.settings import Settings
from api.version import version
from proxy.episode import Episode, EpisodeConfig, new_episode
from proxy.events import event
from proxy.knowledge import KnowledgeStore
from proxy.store import EpisodeStore, StoreUnavailable


def describe(episode: Episode, settings: Settings) -> dict[str, Any]:
    """The episode as the API shows it, with everything a client needs to bind a browser."""
    return {
        **episode.model_dump(mode="json"),
        "shifts_applied": [] if episode.replay_of else episode.shift_names(),
        "shift_digest": episode.shift_digest(version()),
        "proxy": {
            "server": settings.agent_proxy_server,
            "username": episode.id,
            "password": episode.token,
        },
        "proxy_url": f"http://{episode.id}:{episode.token}@{settings.agent_proxy}",
        "header": {settings.episode_header: f"{episode.id}:{episode.token}"},
    }


async def load_episode(store: EpisodeStore, episode_id: str) -> Episode:
    record = await store.get_episode(episode_id)
    if record is None:
        raise NotFound(f"episode {episode_id!r} not found")
    return Episode.model_validate(record)


# How often a change is tried against a record that others keep changing before it gives up: a
# conflict needs a write between this one's read and its write, every time.
CHANGE_ATTEMPTS = 50


async def change_episode(
    store: EpisodeStore,
    episode_id: str,
    change: Callable[[Episode], Episode],
    logged: dict[str, Any],
    reset: bool = False,
) -> Episode:
    """The episode as `change` makes it of the stored one, written only if nobody wrote it
    between the read and the write, else read again and changed again: two API calls at once
    (a PATCH during a reset, two resets) each take effect, none undoes the other. The event
    `logged` is appended in the same step, so the log holds changes in the order they took
    effect; with `reset`, its flags, counters and events are forgotten first and that event
    starts its new log. A change that leaves the episode as it is (`PATCH {}`, a second
    suspend) is no change: nothing is written nor logged, and its `revision` stays, so
    replicas keep what they cached of it. `change` may raise (Invalid)."""
    for _ in range(CHANGE_ATTEMPTS):
        record = await store.get_episode(episode_id)
        if record is None:
            raise NotFound(f"episode {episode_id!r} not found")
        stored = Episode.model_validate(record)
        changed = change(stored)
        if changed == stored and not reset:
            return stored
        changed = changed.model_copy(update={"revision": changed.revision + 1})
        new_record = changed.model_dump(mode="json")
        written = await store.change_logged(
            episode_id, new_record, record, logged, changed.expires_at, reset
        )
        if written is not None:
            return changed
    raise Conflict(
        f"episode {episode_id!r} kept changing under {CHANGE_ATTEMPTS} attempts to change it; "
        "try again"
    )


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
        raise Invalid(validation_message(error)) from None
    if knowledge is not None and not validated.replay_of:
        validated = validated.model_copy(
            update={"knowledge": await pinned_epoch(knowledge, validated.knowledge)}
        )
    episode = new_episode(validated, episode_id, **server_fields)
    if not await store.create_episode(
        episode.id, episode.model_dump(mode="json"), episode.expires_at
    ):
        kept = " (live, or kept by the record directory)" if settings.record_dir else ""
        raise Conflict(f"episode {episode.id!r} already exists{kept}")
    await store.append_event(
        episode.id,
        event(
            "episode_created",
            "api",
            condition=episode.condition,
            regime=episode.regime,
            seed=episode.seed,
            shift_digest=episode.shift_digest(version()),
            knowledge=episode.knowledge,
        ),
        episode.expires_at,
    )
    return episode


async def pinned_epoch(knowledge: KnowledgeStore, asked: int | None) -> int:
    """The knowledge epoch an episode is shifted against: the one asked for, or the current."""
    try:
        current = await knowledge.epoch()
    except StoreUnavailable as error:
        raise Unavailable(f"the knowledge store is unavailable: {error}") from None
    if asked is not None and asked > current:
        raise Invalid(f"knowledge: epoch {asked} does not exist yet (the current one is {current})")
    return current if asked is None else asked


def with_deployment_targets(settings: Settings, config: dict[str, Any]) -> dict[str, Any]:
    """The episode's `targets` over the deployment's `--targets` (its own mapping wins)."""
    return {**config, "targets": {**dict(settings.targets), **config.get("targets", {})}}


async def unbind_listener_defaults(
    store: EpisodeStore, settings: Settings, episode_id: str
) -> None:
    """Clear every listener default naming `episode_id` (a deleted episode): a default left
    behind would be shown as bound and turn the listener's unbound requests into 407s."""
    for listener in settings.listeners():
        named = listener.takes_default and await store.get_listener_default(listener.name)
        if named == episode_id:
            await store.set_listener_default(listener.name, None, 0)
