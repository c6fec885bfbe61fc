"""A store that keeps what outlives it: every episode's configuration and events are written
through to a recording directory, so nothing is lost when the store deletes or expires a key.

It changes nothing of the store's semantics (binding still sees only live episodes); the API
reads the archive for episodes the store no longer holds. An archive that cannot be written (a
full disk) is logged and counted, never the store's failure: the agent's pages go on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from proxy import metrics
from proxy.episode import beacon_key_of
from proxy.recording_dir import Recording
from proxy.store.base import EpisodeStore

logger = logging.getLogger(__name__)


def archived_form(record: dict[str, Any]) -> dict[str, Any]:
    """The record without its token, with the beacon key a replay of it needs."""
    if "token" not in record:
        return record
    return {**record, "beacon_key": beacon_key_of(str(record["id"]), str(record["token"]))}


class ArchivingStore(EpisodeStore):
    def __init__(self, inner: EpisodeStore, recording: Recording) -> None:
        self.inner = inner
        self.recording = recording

    async def create_episode(
        self, episode_id: str, record: dict[str, Any], expires_at: int
    ) -> bool:
        # An id the archive holds (an episode deleted, expired or imported, or one another
        # process sharing the directory is creating) is taken too: a new run under it would
        # hide the archived one from the reads and reports (only an id's latest run is read),
        # which is what the archive is there to keep.
        if not self.recording.claim(episode_id):
            return False
        created = False
        try:
            created = await self.inner.create_episode(episode_id, record, expires_at)
        finally:
            if not created:
                self.recording.release(episode_id)
        if created:
            await _archive(self.recording.save_episode(archived_form(record)))
        return created

    async def update_episode(
        self, episode_id: str, record: dict[str, Any], expected: dict[str, Any] | None = None
    ) -> bool:
        updated = await self.inner.update_episode(episode_id, record, expected)
        if updated:
            await _archive(self.recording.save_episode(archived_form(record)))
        return updated

    async def append_event(
        self, episode_id: str, event: dict[str, Any], expires_at: int
    ) -> str | None:
        event_id = await self.inner.append_event(episode_id, event, expires_at)
        if event_id is not None:
            await _archive(self.recording.append_event(episode_id, {**event, "id": event_id}))
        return event_id

    async def append_events(
        self, episode_id: str, events: list[dict[str, Any]], expires_at: int
    ) -> list[str] | None:
        event_ids = await self.inner.append_events(episode_id, events, expires_at)
        for item, event_id in zip(events, event_ids or [], strict=False):
            await _archive(self.recording.append_event(episode_id, {**item, "id": event_id}))
        return event_ids

    async def delete_episode(self, episode_id: str) -> bool:
        return await self.inner.delete_episode(episode_id)

    async def get_episode(self, episode_id: str) -> dict[str, Any] | None:
        return await self.inner.get_episode(episode_id)

    async def list_episodes(self) -> list[dict[str, Any]]:
        return await self.inner.list_episodes()

    async def claim_flag(self, episode_id: str, flag: str, expires_at: int) -> bool:
        return await self.inner.claim_flag(episode_id, flag, expires_at)

    async def get_flags(self, episode_id: str) -> dict[str, str]:
        return await self.inner.get_flags(episode_id)

    async def incr_counter(self, episode_id: str, counter: str, expires_at: int) -> int:
        return await self.inner.incr_counter(episode_id, counter, expires_at)

    async def get_counters(self, episode_id: str) -> dict[str, int]:
        return await self.inner.get_counters(episode_id)

    async def read_events(
        self, episode_id: str, after: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        return await self.inner.read_events(episode_id, after, limit)

    async def count_events(self, episode_id: str) -> int:
        return await self.inner.count_events(episode_id)

    async def reset_episode(self, episode_id: str, record: dict[str, Any] | None = None) -> bool:
        reset = await self.inner.reset_episode(episode_id, record)
        if reset and record is not None:  # (a new generation: the archive's next run)
            await _archive(self.recording.save_episode(archived_form(record)))
        return reset

    async def change_logged(
        self,
        episode_id: str,
        record: dict[str, Any],
        expected: dict[str, Any],
        event: dict[str, Any],
        expires_at: int,
        reset: bool = False,
    ) -> str | None:
        event_id = await self.inner.change_logged(
            episode_id, record, expected, event, expires_at, reset
        )
        if event_id is not None:
            await _archive(self.recording.save_episode(archived_form(record)))
            await _archive(self.recording.append_event(episode_id, {**event, "id": event_id}))
        return event_id

    async def set_listener_default(
        self, listener: str, episode_id: str | None, expires_at: int
    ) -> None:
        await self.inner.set_listener_default(listener, episode_id, expires_at)

    async def get_listener_default(self, listener: str) -> str | None:
        return await self.inner.get_listener_default(listener)

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()
        self.recording.close()


async def _archive(write: Awaitable[None]) -> None:
    try:
        await write
    except (OSError, ValueError) as error:
        logger.error("archive write failed: %s", error)
        metrics.inc("recording_errors_total")
