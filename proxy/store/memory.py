"""The embedded store: one process, no persistence, the same semantics as Redis.

Everything runs on the event loop thread without awaiting in between, so each operation is
atomic with respect to every other coroutine of the process.
"""

from __future__ import annotations

import bisect
import json
import time
from dataclasses import dataclass, field
from typing import Any

from proxy.store.base import EpisodeStore, next_event_id, parse_event_id


@dataclass
class _EpisodeState:
    record: dict[str, Any]
    expires_at: float
    flags: dict[str, str] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    event_ids: list[tuple[int, int]] = field(default_factory=list)
    # Each event as its JSON text, as Redis keeps it: a reader gets what Redis would give, and
    # a long episode's log is a list of strings, which Python's collector never walks (as
    # dicts, every full collection the service runs would walk every event of every episode).
    events: list[str] = field(default_factory=list)


class MemoryStore(EpisodeStore):
    def __init__(self, clock: Any = time.time) -> None:
        self._clock = clock
        self._episodes: dict[str, _EpisodeState] = {}
        self._listeners: dict[str, tuple[str, float]] = {}
        self._last_event_id = (0, 0)

    def _live(self, episode_id: str) -> _EpisodeState | None:
        state = self._episodes.get(episode_id)
        if state is not None and state.expires_at <= self._clock():
            del self._episodes[episode_id]
            return None
        return state

    def _purge_expired(self) -> None:
        now = self._clock()
        for episode_id in [e for e, s in self._episodes.items() if s.expires_at <= now]:
            del self._episodes[episode_id]
        for listener in [name for name, (_, exp) in self._listeners.items() if exp <= now]:
            del self._listeners[listener]

    async def create_episode(
        self, episode_id: str, record: dict[str, Any], expires_at: int
    ) -> bool:
        self._purge_expired()
        if self._live(episode_id) is not None:
            return False
        self._episodes[episode_id] = _EpisodeState(record=dict(record), expires_at=expires_at)
        return True

    async def get_episode(self, episode_id: str) -> dict[str, Any] | None:
        state = self._live(episode_id)
        return dict(state.record) if state else None

    async def update_episode(
        self, episode_id: str, record: dict[str, Any], expected: dict[str, Any] | None = None
    ) -> bool:
        state = self._live(episode_id)
        if state is None or (expected is not None and state.record != expected):
            return False
        state.record = dict(record)
        return True

    async def delete_episode(self, episode_id: str) -> bool:
        return self._episodes.pop(episode_id, None) is not None

    async def list_episodes(self) -> list[dict[str, Any]]:
        self._purge_expired()
        states = sorted(self._episodes.values(), key=lambda s: s.record.get("created_at", 0))
        return [dict(state.record) for state in states]

    async def claim_flag(self, episode_id: str, flag: str, expires_at: int) -> bool:
        state = self._live(episode_id)
        if state is None or flag in state.flags:
            return False
        state.flags[flag] = f"{self._clock():.3f}"
        return True

    async def get_flags(self, episode_id: str) -> dict[str, str]:
        state = self._live(episode_id)
        return dict(state.flags) if state else {}

    async def incr_counter(self, episode_id: str, counter: str, expires_at: int) -> int:
        state = self._live(episode_id)
        if state is None:
            return 0
        state.counters[counter] = state.counters.get(counter, 0) + 1
        return state.counters[counter]

    async def get_counters(self, episode_id: str) -> dict[str, int]:
        state = self._live(episode_id)
        return dict(state.counters) if state else {}

    async def append_event(
        self, episode_id: str, event: dict[str, Any], expires_at: int
    ) -> str | None:
        state = self._live(episode_id)
        if state is None:
            return None
        last_event_id = next_event_id(self._last_event_id, int(self._clock() * 1000))
        event_id = f"{last_event_id[0]}-{last_event_id[1]}"
        text = json.dumps({"id": event_id, **event})  # first: an event it refuses changes nothing
        self._last_event_id = last_event_id
        state.event_ids.append(last_event_id)
        state.events.append(text)
        return event_id

    async def read_events(
        self, episode_id: str, after: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        state = self._live(episode_id)
        if state is None:
            return []
        start = bisect.bisect_right(state.event_ids, parse_event_id(after)) if after else 0
        return [json.loads(event) for event in state.events[start : start + limit]]

    async def count_events(self, episode_id: str) -> int:
        state = self._live(episode_id)
        return len(state.events) if state else 0

    async def reset_episode(self, episode_id: str, record: dict[str, Any] | None = None) -> bool:
        state = self._live(episode_id)
        if state is None:
            return False
        if record is not None:
            state.record = dict(record)
        state.flags.clear()
        state.counters.clear()
        state.event_ids.clear()
        state.events.clear()
        return True

    async def change_logged(
        self,
        episode_id: str,
        record: dict[str, Any],
        expected: dict[str, Any],
        event: dict[str, Any],
        expires_at: int,
        reset: bool = False,
    ) -> str | None:
        state = self._live(episode_id)
        if state is None or state.record != expected:
            return None
        # This class's own steps, which await nothing: the change and its event are one step.
        if reset:
            await MemoryStore.reset_episode(self, episode_id, record)
        else:
            state.record = dict(record)
        return await MemoryStore.append_event(self, episode_id, event, expires_at)

    async def set_listener_default(
        self, listener: str, episode_id: str | None, expires_at: int
    ) -> None:
        if episode_id is None:
            self._listeners.pop(listener, None)
        else:
            self._listeners[listener] = (episode_id, expires_at)

    async def get_listener_default(self, listener: str) -> str | None:
        entry = self._listeners.get(listener)
        if entry is None or entry[1] <= self._clock():
            return None
        return entry[0]

    async def ping(self) -> None:
        return None
