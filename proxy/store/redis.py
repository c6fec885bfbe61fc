"""The shared store: Redis, for one or many proxy processes.

Keys (under a configurable prefix, default "skillshift:"):
  ep:{id}           string  the episode record as JSON (SET NX / SET XX KEEPTTL)
  ep:{id}:flags     hash    flag -> time claimed (HSETNX)
  ep:{id}:counters  hash    counter -> value (HINCRBY)
  ep:{id}:events    stream  the append-only event log (XADD)
  index             zset    episode id -> expiry time, for listing (expires with the last)
  listener:{name}   string  the listener's default episode id
Every key carries the episode's absolute expiry (EXPIREAT), set atomically with each write: in
a MULTI, or, on the per-page-load path, in one small Lua script (one command and one reply
instead of four; about 55 us less per write with redis-py).
The commands every request or page load makes (reading the episode, counting a load, claiming a
flag, writing events) go on one pipelined connection of their own (`pipelined.py`); the rest
(the API's: create, list, delete, read events) through redis-py.
The record is a JSON string rather than a hash so that "replace if exists, keep TTL" is one
atomic SET XX KEEPTTL. A replacement that expects the record it read (the API's read-modify-write)
compares in a script: every record is written as `json.dumps` writes it, and a record read back
and dumped again is the same string.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from proxy.store.base import (
    EVENT_ID_PART_MAX,
    EpisodeStore,
    StoreUnavailable,
    parse_event_id,
    without_password,
)
from proxy.store.pipelined import PipelinedConnection, Reply, ReplyError

T = TypeVar("T")

# KEYS[1] the key, KEYS[2] the episode's record; ARGV[1] the expiry; the rest the write's own
# arguments. A write to an episode that no longer exists writes nothing (no orphan keys).
_EPISODE_MUST_EXIST = "if redis.call('EXISTS', KEYS[2]) == 0 then return false end "
# Several events in one call (ARGV[2..] each an event's JSON), their ids in order.
_XADD_EACH = (
    "local v = {} for i = 2, #ARGV do "
    "v[#v + 1] = redis.call('XADD', KEYS[1], '*', 'e', ARGV[i]) end"
)
_WRITE_THEN_EXPIRE = {
    "hincrby": "local v = redis.call('HINCRBY', KEYS[1], ARGV[2], 1)",
    "hsetnx": "local v = redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3])",
    "xadd": "local v = redis.call('XADD', KEYS[1], '*', 'e', ARGV[2])",
    "xadd_each": _XADD_EACH,
}
_EXPIRE_AND_RETURN = " redis.call('EXPIREAT', KEYS[1], ARGV[1]) return v"
# KEYS[1] the record; ARGV[1] the new record, ARGV[2] the record it must still be. Nothing is
# written if it is not.
_SET_IF_UNCHANGED = (
    "if redis.call('GET', KEYS[1]) ~= ARGV[2] then return false end "
    "redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL') "
)
_REPLACE_IF_UNCHANGED = _SET_IF_UNCHANGED + "return 1"
# With KEYS[2..4] the episode's flags, counters and events: ARGV[3], an event, appended to the
# log, expiring at ARGV[4]; its id.
_LOG_EVENT = (
    "local v = redis.call('XADD', KEYS[4], '*', 'e', ARGV[3]) "
    "redis.call('EXPIREAT', KEYS[4], ARGV[4]) return v"
)
_UPDATE_LOGGED = _SET_IF_UNCHANGED + _LOG_EVENT
# The flags, counters and events forgotten first: the event is the first of the new log. (The
# stream emptied, not deleted: see `reset_episode`.)
_RESET_LOGGED = (
    _SET_IF_UNCHANGED
    + "redis.call('DEL', KEYS[2], KEYS[3]) redis.call('XTRIM', KEYS[4], 'MAXLEN', 0) "
    + _LOG_EVENT
)


class RedisStore(EpisodeStore):
    def __init__(self, url: str, prefix: str = "skillshift:", timeout: float = 2.0) -> None:
        self.url = url
        self.shown_url = without_password(url)  # (in messages: no password)
        self.prefix = prefix
        # Short timeouts: a dead Redis must turn into a fast 503, not a hung page load.
        # decode_responses=True makes every reply a str, which redis-py's types cannot express.
        self._redis: Any = aioredis.Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            decode_responses=True,
            health_check_interval=10,
        )
        self._hot = PipelinedConnection(url, timeout)
        self._scripts = {
            name: _EPISODE_MUST_EXIST + body + _EXPIRE_AND_RETURN
            for name, body in _WRITE_THEN_EXPIRE.items()
        }
        self._script_digests = {
            name: hashlib.sha1(script.encode()).hexdigest()
            for name, script in self._scripts.items()
        }

    def _key(self, episode_id: str, part: str = "") -> str:
        return f"{self.prefix}ep:{episode_id}{':' + part if part else ''}"

    def _all_keys(self, episode_id: str) -> list[str]:
        return [self._key(episode_id, part) for part in ("", "flags", "counters", "events")]

    async def _call(self, operation: Callable[[], Awaitable[T]]) -> T:
        try:
            return await operation()
        except (RedisError, OSError, ReplyError) as error:
            raise StoreUnavailable(f"redis at {self.shown_url} failed: {error}") from error

    async def _run_script(self, name: str, keys: list[str], args: list[str | int]) -> Reply:
        """One of the per-load scripts, by its digest; sent whole when Redis does not have it
        (the first call, or after Redis restarted), which also keeps it for the next."""
        count = len(keys)

        async def run() -> Reply:
            try:
                return await self._hot.call(
                    "EVALSHA", self._script_digests[name], count, *keys, *args
                )
            except ReplyError as error:
                if not str(error).startswith("NOSCRIPT"):
                    raise
            return await self._hot.call("EVAL", self._scripts[name], count, *keys, *args)

        return await self._call(run)

    async def create_episode(
        self, episode_id: str, record: dict[str, Any], expires_at: int
    ) -> bool:
        async def run() -> bool:
            created = await self._redis.set(
                self._key(episode_id), json.dumps(record), nx=True, exat=expires_at
            )
            if created:
                index = f"{self.prefix}index"
                await self._redis.zadd(index, {episode_id: expires_at})
                # The index outlives every member, and no longer: it expires with the last one.
                await self._redis.expireat(index, expires_at, gt=True)
                await self._redis.expireat(index, expires_at, nx=True)
            return bool(created)

        return await self._call(run)

    async def get_episode(self, episode_id: str) -> dict[str, Any] | None:
        raw = await self._call(lambda: self._hot.call("GET", self._key(episode_id)))
        return json.loads(raw) if raw else None

    async def update_episode(
        self, episode_id: str, record: dict[str, Any], expected: dict[str, Any] | None = None
    ) -> bool:
        if expected is not None:
            replaced = await self._call(
                lambda: self._redis.eval(
                    _REPLACE_IF_UNCHANGED,
                    1,
                    self._key(episode_id),
                    json.dumps(record),
                    json.dumps(expected),
                )
            )
            return bool(replaced)
        updated = await self._call(
            lambda: self._redis.set(
                self._key(episode_id), json.dumps(record), xx=True, keepttl=True
            )
        )
        return bool(updated)

    async def delete_episode(self, episode_id: str) -> bool:
        async def run() -> bool:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.delete(self._key(episode_id))
                pipe.delete(*self._all_keys(episode_id)[1:])
                pipe.zrem(f"{self.prefix}index", episode_id)
                existed, _, _ = await pipe.execute()
            return bool(existed)

        return await self._call(run)

    async def list_episodes(self) -> list[dict[str, Any]]:
        async def run() -> list[dict[str, Any]]:
            index = f"{self.prefix}index"
            await self._redis.zremrangebyscore(index, "-inf", time.time())
            ids = await self._redis.zrange(index, 0, -1)
            if not ids:
                return []
            raws = await self._redis.mget([self._key(episode_id) for episode_id in ids])
            records = [json.loads(raw) for raw in raws if raw]
            # The index orders by expiry; the interface promises the oldest first.
            return sorted(records, key=lambda record: record.get("created_at", 0))

        return await self._call(run)

    async def claim_flag(self, episode_id: str, flag: str, expires_at: int) -> bool:
        key = self._key(episode_id, "flags")

        claimed = await self._run_script(
            "hsetnx", [key, self._key(episode_id)], [expires_at, flag, f"{time.time():.3f}"]
        )
        return bool(claimed)

    async def get_flags(self, episode_id: str) -> dict[str, str]:
        pairs = await self._call(lambda: self._hot.call("HGETALL", self._key(episode_id, "flags")))
        return dict(zip(_texts(pairs[::2]), _texts(pairs[1::2]), strict=True))

    async def incr_counter(self, episode_id: str, counter: str, expires_at: int) -> int:
        key = self._key(episode_id, "counters")

        value = await self._run_script(
            "hincrby", [key, self._key(episode_id)], [expires_at, counter]
        )
        return int(value or 0)

    async def get_counters(self, episode_id: str) -> dict[str, int]:
        raw = await self._call(lambda: self._redis.hgetall(self._key(episode_id, "counters")))
        return {name: int(value) for name, value in raw.items()}

    async def append_event(
        self, episode_id: str, event: dict[str, Any], expires_at: int
    ) -> str | None:
        key = self._key(episode_id, "events")

        event_id = await self._run_script(
            "xadd", [key, self._key(episode_id)], [expires_at, json.dumps(event)]
        )
        return event_id.decode() if event_id else None

    async def append_events(
        self, episode_id: str, events: list[dict[str, Any]], expires_at: int
    ) -> list[str] | None:
        if not events:
            return [] if await self.get_episode(episode_id) is not None else None
        key = self._key(episode_id, "events")
        event_ids = await self._run_script(
            "xadd_each",
            [key, self._key(episode_id)],
            [expires_at, *(json.dumps(item) for item in events)],
        )
        return _texts(event_ids) if event_ids else None

    async def read_events(
        self, episode_id: str, after: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        if after and parse_event_id(after) == (EVENT_ID_PART_MAX, EVENT_ID_PART_MAX):
            return []  # none comes after the last id there can be (Redis refuses the interval)
        start = f"({after}" if after else "-"
        entries = await self._call(
            lambda: self._redis.xrange(self._key(episode_id, "events"), start, "+", count=limit)
        )
        return [{"id": entry_id, **json.loads(fields["e"])} for entry_id, fields in entries]

    async def count_events(self, episode_id: str) -> int:
        return int(await self._call(lambda: self._redis.xlen(self._key(episode_id, "events"))))

    async def reset_episode(self, episode_id: str, record: dict[str, Any] | None = None) -> bool:
        # One MULTI: a load's script (claiming a flag, counting a load) runs wholly before it,
        # and is forgotten with the old record, or wholly after, under the new one.
        async def run() -> bool:
            async with self._redis.pipeline(transaction=True) as pipe:
                if record is None:
                    pipe.exists(self._key(episode_id))
                else:
                    pipe.set(self._key(episode_id), json.dumps(record), xx=True, keepttl=True)
                _, flags, counters, events = self._all_keys(episode_id)
                pipe.delete(flags, counters)
                # Emptied, not deleted: a stream made anew would number its events from zero,
                # and the new log's first ids could sort before the old log's last ones.
                pipe.xtrim(events, maxlen=0, approximate=False)
                existed, _, _ = await pipe.execute()
            return bool(existed)

        return await self._call(run)

    async def change_logged(
        self,
        episode_id: str,
        record: dict[str, Any],
        expected: dict[str, Any],
        event: dict[str, Any],
        expires_at: int,
        reset: bool = False,
    ) -> str | None:
        keys = self._all_keys(episode_id)
        script = _RESET_LOGGED if reset else _UPDATE_LOGGED
        arguments = [json.dumps(record), json.dumps(expected), json.dumps(event), expires_at]
        event_id = await self._call(lambda: self._redis.eval(script, len(keys), *keys, *arguments))
        return str(event_id) if event_id else None

    async def set_listener_default(
        self, listener: str, episode_id: str | None, expires_at: int
    ) -> None:
        key = f"{self.prefix}listener:{listener}"
        if episode_id is None:
            await self._call(lambda: self._redis.delete(key))
        else:
            await self._call(lambda: self._redis.set(key, episode_id, exat=expires_at))

    async def get_listener_default(self, listener: str) -> str | None:
        key = f"{self.prefix}listener:{listener}"
        value = await self._call(lambda: self._hot.call("GET", key))
        return value.decode() if value else None

    async def ping(self) -> None:
        """Both connections requests go on: redis-py's (the API's commands) and the pipelined
        one (every request's and page load's). They can disagree: a password Redis does not
        ask for is let pass by redis-py and refused by the pipelined connection."""
        await self._call(self._redis.ping)
        await self._call(lambda: self._hot.call("PING"))

    async def close(self) -> None:
        self._hot.close()
        await self._redis.aclose()


def _texts(replies: list[Reply]) -> list[str]:
    return [reply.decode() for reply in replies]
