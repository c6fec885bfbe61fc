"""The episode store interface. Two implementations pass one contract suite (tests/contract).

Every key belongs to an episode and expires at the episode's absolute expiry time, so a finished
benchmark leaves nothing behind. Operations the proxy relies on for correctness across processes
(claiming a flag, counting loads, appending events) are atomic in every implementation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit


def without_password(url: str) -> str:
    """A Redis URL as messages show it, its password (redis://user:PASSWORD@host, or
    ?password=) replaced by ***: those messages go to the log and to /health, which answers
    without the API token."""
    parts = urlsplit(url)
    netloc, query = parts.netloc, parts.query
    if parts.password is not None:
        netloc = f"{parts.username or ''}:***@{netloc.rpartition('@')[2]}"
    fields = parse_qsl(query, keep_blank_values=True)
    if any(name == "password" for name, _ in fields):
        query = urlencode(
            [(name, "***" if name == "password" else v) for name, v in fields], safe="*"
        )
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")


class StoreUnavailable(RuntimeError):
    """The store cannot be reached or answered with an error; callers must fail closed."""

    store = "episode"  # which store, as messages name it


class EpisodeStore(ABC):
    @abstractmethod
    async def create_episode(
        self, episode_id: str, record: dict[str, Any], expires_at: int
    ) -> bool:
        """Store a new episode; False (and nothing written) if the id exists."""

    @abstractmethod
    async def get_episode(self, episode_id: str) -> dict[str, Any] | None:
        """The episode record, or None if it does not exist (or expired)."""

    @abstractmethod
    async def update_episode(
        self, episode_id: str, record: dict[str, Any], expected: dict[str, Any] | None = None
    ) -> bool:
        """Replace the record of an existing episode, keeping its expiry; False if missing, or
        if `expected` is given and the stored record is no longer it (another writer came
        between the read and this write: read again and retry, `api.episodes.lifecycle`)."""

    @abstractmethod
    async def delete_episode(self, episode_id: str) -> bool:
        """Remove the episode and all its state; False if it did not exist."""

    @abstractmethod
    async def list_episodes(self) -> list[dict[str, Any]]:
        """Every live episode record, oldest (by `created_at`) first."""

    @abstractmethod
    async def claim_flag(self, episode_id: str, flag: str, expires_at: int) -> bool:
        """Set a flag if it is not set yet. True for exactly one caller, across processes;
        False (and nothing written) if the episode does not exist."""

    @abstractmethod
    async def get_flags(self, episode_id: str) -> dict[str, str]:
        """All flags of the episode, name -> the time it was claimed."""

    @abstractmethod
    async def incr_counter(self, episode_id: str, counter: str, expires_at: int) -> int:
        """Atomically add one to a counter and return the new value (the first call gives 1);
        0 (and nothing written) if the episode does not exist."""

    @abstractmethod
    async def get_counters(self, episode_id: str) -> dict[str, int]:
        """All counters of the episode."""

    @abstractmethod
    async def append_event(
        self, episode_id: str, event: dict[str, Any], expires_at: int
    ) -> str | None:
        """Append to the episode's event log; returns the event id ("<ms>-<seq>", increasing),
        or None (and nothing written) if the episode does not exist."""

    async def append_events(
        self, episode_id: str, events: list[dict[str, Any]], expires_at: int
    ) -> list[str] | None:
        """Append several events in order, each as `append_event` would; their ids, or None
        (and nothing written) if the episode does not exist. A store that can does it in one
        round trip: the events a page load leads to are written together."""
        ids = []
        for item in events:
            event_id = await self.append_event(episode_id, item, expires_at)
            if event_id is None:
                return None
            ids.append(event_id)
        return ids

    @abstractmethod
    async def read_events(
        self, episode_id: str, after: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Events in order, strictly after the id `after`, at most `limit`; each has its "id"."""

    @abstractmethod
    async def count_events(self, episode_id: str) -> int:
        """How many events the episode's log holds."""

    @abstractmethod
    async def reset_episode(self, episode_id: str, record: dict[str, Any] | None = None) -> bool:
        """Forget flags, counters and events; the episode's configuration stays, or becomes
        `record` in the same step (a load never sees the new record with the old flags, nor
        claims a flag of the new one that the reset then forgets). False if no such episode."""

    @abstractmethod
    async def change_logged(
        self,
        episode_id: str,
        record: dict[str, Any],
        expected: dict[str, Any],
        event: dict[str, Any],
        expires_at: int,
        reset: bool = False,
    ) -> str | None:
        """`update_episode` to `record`, only over `expected`, with `event` appended to the log
        in the same step: the event's id. With `reset`, `reset_episode` to `record` instead, and
        `event` is the first entry of the new log. None, and nothing written, if no such episode
        or its record is no longer `expected`. (Logged after the step, a change's event could
        land after a change that took effect later, or after a reset and the pages loaded since,
        in the next run's log, which would then start again at the wrong place.)"""

    @abstractmethod
    async def set_listener_default(
        self, listener: str, episode_id: str | None, expires_at: int
    ) -> None:
        """Bind (or with None, unbind) the episode unbound requests on a listener fall back to."""

    @abstractmethod
    async def get_listener_default(self, listener: str) -> str | None:
        """The listener's default episode id, if any."""

    @abstractmethod
    async def ping(self) -> None:
        """Return if the store answers; raise StoreUnavailable if it does not."""

    async def close(self) -> None:  # noqa: B027  (optional hook: most stores hold nothing)
        """Release connections."""


def next_event_id(last: tuple[int, int], now_ms: int) -> tuple[int, int]:
    """The id after `last` at time `now_ms`, as Redis Streams assign them (never decreasing)."""
    last_ms, last_seq = last
    if now_ms > last_ms:
        return now_ms, 0
    return last_ms, last_seq + 1


# Each part of an event id is an unsigned 64-bit integer, as Redis Streams have them: a larger
# one is no id any store holds (and Redis refuses it as an error, not as "none after it").
EVENT_ID_PART_MAX = 2**64 - 1


def parse_event_id(event_id: str) -> tuple[int, int]:
    """ "<ms>-<seq>" -> (ms, seq); ValueError for anything else, a part beyond 64 bits too."""
    ms, _, seq = event_id.partition("-")
    parsed = int(ms), int(seq or 0)
    if not all(0 <= part <= EVENT_ID_PART_MAX for part in parsed):
        raise ValueError(f"each part of an event id is at most {EVENT_ID_PART_MAX}")
    return parsed
