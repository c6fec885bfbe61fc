"""Where site knowledge lives: Redis when replicas share it, a directory beside the embedded
store. Two implementations of one interface, one contract suite (tests/contract).

Unlike episodes, knowledge never expires: it is what the benchmark's runs are reproduced
against, and it is removed only by deleting a generation through the API. Every write that
must be decided once across processes (an entry, a new generation, a deletion) is atomic: a
Lua script in Redis, a lock file in the directory.

Redis keys (under the store's prefix, default "skillshift:"):
  kn:epoch               string  the knowledge epoch: +1 per learn run and per deletion
  kn:origins             set     every origin with knowledge
  kn:o:{origin}:gens     hash    generation number -> its JSON (`Generation`)
  kn:o:{origin}:next     string  the last generation number handed out
  kn:o:{origin}:g:{n}    hash    page URL -> JSON {markup digest: record digest}
  kn:record:{digest}     string  a `PageRecord` as JSON
  kn:refs:{key}          string  what one asset's bytes reference, as JSON
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from proxy.knowledge.records import Generation, PageRecord
from proxy.store.base import StoreUnavailable, without_password
from shifts.references import AssetRefs, refs_from_json, refs_to_json


class KnowledgeStoreUnavailable(StoreUnavailable):
    """The knowledge store (not the episode store) does not answer: named as such."""

    store = "knowledge"


T = TypeVar("T")


def first_generation(origin: str, epoch: int = 0, made_by: str = "first load") -> Generation:
    return Generation(origin, 1, epoch, time.time(), made_by)


class KnowledgeStore(ABC):
    @abstractmethod
    async def epoch(self) -> int:
        """The current knowledge epoch (0 before any learn run or deletion)."""

    @abstractmethod
    async def origins(self) -> list[str]:
        """Every origin with knowledge, sorted."""

    @abstractmethod
    async def generations(self, origin: str) -> list[Generation]:
        """The origin's published generations (deleted ones too), by number."""

    async def snapshot(self, origin: str) -> tuple[int, list[Generation]]:
        """The epoch, then the origin's generations: every generation published at or before
        that epoch is among them (one published in between may be too)."""
        epoch = await self.epoch()
        return epoch, await self.generations(origin)

    @abstractmethod
    async def ensure_first(self, origin: str) -> list[Generation]:
        """The origin's generations, after making generation 1 (epoch 0) if it had none."""

    @abstractmethod
    async def allocate(self, origin: str) -> int:
        """A new generation number for a learn run; invisible until published."""

    @abstractmethod
    async def publish(self, made: list[tuple[str, int, str]]) -> int:
        """Publish (origin, number, made_by) generations together at a new epoch; returns it."""

    @abstractmethod
    async def delete(self, origin: str, number: int) -> Generation | None:
        """Mark a generation deleted at a new epoch (None if it does not exist or already
        was). When no live generation of the origin remains, an empty one is published at that
        epoch, so episodes created from then on learn afresh."""

    @abstractmethod
    async def entry(self, origin: str, number: int, url: str) -> dict[str, str]:
        """A page URL's entries in a generation: markup digest -> record digest."""

    @abstractmethod
    async def put_entry(self, origin: str, number: int, url: str, markup: str, record: str) -> str:
        """Set an entry unless it is set; the record digest the entry holds now (the first
        writer's, across processes)."""

    @abstractmethod
    async def entries(self, origin: str, number: int) -> dict[str, dict[str, str]]:
        """Every entry of a generation: page URL -> {markup digest: record digest}."""

    @abstractmethod
    async def record(self, digest: str) -> PageRecord | None: ...

    @abstractmethod
    async def put_record(self, record: PageRecord) -> None: ...

    @abstractmethod
    async def refs(self, keys: list[str]) -> list[AssetRefs | None]:
        """What the assets stored under these keys reference (None where unknown)."""

    @abstractmethod
    async def put_refs(self, key: str, refs: AssetRefs) -> None:
        """Store what an asset references, once: a key already stored keeps its value."""

    @abstractmethod
    async def ping(self) -> None:
        """Return if the store answers; raise StoreUnavailable if it does not."""

    async def close(self) -> None:  # noqa: B027  (optional hook)
        """Release connections."""


# ---- in memory ----------------------------------------------------------------------------


class MemoryKnowledge(KnowledgeStore):
    """Knowledge for one process only (tests, one-off checks): the same semantics, nothing
    kept. Every operation runs without awaiting, so each is atomic in the process."""

    def __init__(self) -> None:
        self._epoch = 0
        self._gens: dict[str, dict[int, Generation]] = {}
        self._next: dict[str, int] = {}
        self._entries: dict[tuple[str, int], dict[str, dict[str, str]]] = {}
        self._records: dict[str, PageRecord] = {}
        self._refs: dict[str, AssetRefs] = {}

    async def epoch(self) -> int:
        return self._epoch

    async def origins(self) -> list[str]:
        return sorted(self._gens)

    async def generations(self, origin: str) -> list[Generation]:
        return sorted(self._gens.get(origin, {}).values(), key=lambda g: g.number)

    async def ensure_first(self, origin: str) -> list[Generation]:
        if not self._gens.get(origin):
            self._gens[origin] = {1: first_generation(origin)}
            self._next[origin] = max(self._next.get(origin, 0), 1)
        return await self.generations(origin)

    async def allocate(self, origin: str) -> int:
        self._next[origin] = self._next.get(origin, 0) + 1
        return self._next[origin]

    async def publish(self, made: list[tuple[str, int, str]]) -> int:
        self._epoch += 1
        for origin, number, made_by in made:
            generation = Generation(origin, number, self._epoch, time.time(), made_by)
            self._gens.setdefault(origin, {})[number] = generation
        return self._epoch

    async def delete(self, origin: str, number: int) -> Generation | None:
        gens = self._gens.get(origin, {})
        found = gens.get(number)
        if found is None or found.deleted_at is not None:
            return None
        self._epoch += 1
        gens[number] = deleted = replace(found, deleted_at=self._epoch)
        if all(g.deleted_at is not None for g in gens.values()):
            after = await self.allocate(origin)
            gens[after] = Generation(origin, after, self._epoch, time.time(), "first load")
        return deleted

    async def entry(self, origin: str, number: int, url: str) -> dict[str, str]:
        return dict(self._entries.get((origin, number), {}).get(url, {}))

    async def put_entry(self, origin: str, number: int, url: str, markup: str, record: str) -> str:
        page = self._entries.setdefault((origin, number), {}).setdefault(url, {})
        return page.setdefault(markup, record)

    async def entries(self, origin: str, number: int) -> dict[str, dict[str, str]]:
        return {url: dict(p) for url, p in self._entries.get((origin, number), {}).items()}

    async def record(self, digest: str) -> PageRecord | None:
        return self._records.get(digest)

    async def put_record(self, record: PageRecord) -> None:
        self._records[record.digest] = record

    async def refs(self, keys: list[str]) -> list[AssetRefs | None]:
        return [self._refs.get(key) for key in keys]

    async def put_refs(self, key: str, refs: AssetRefs) -> None:
        self._refs.setdefault(key, refs)

    async def ping(self) -> None:
        return None


# ---- Redis --------------------------------------------------------------------------------

# KEYS[1] the URL's hash; ARGV: url, markup, record. cjson is part of Redis' Lua.
_PUT_ENTRY = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
local entries = current and cjson.decode(current) or {}
if entries[ARGV[2]] then return entries[ARGV[2]] end
entries[ARGV[2]] = ARGV[3]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(entries))
return ARGV[3]
"""
# KEYS[1] gens, KEYS[2] next, KEYS[3] origins; ARGV[1] generation 1's JSON, ARGV[2] origin.
_ENSURE_FIRST = """
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], '1', ARGV[1])
  if tonumber(redis.call('GET', KEYS[2]) or '0') < 1 then redis.call('SET', KEYS[2], '1') end
  redis.call('SADD', KEYS[3], ARGV[2])
end
return redis.call('HVALS', KEYS[1])
"""
# KEYS[1] epoch, KEYS[2] origins, then one gens hash per generation; ARGV: JSON per generation.
_PUBLISH = """
local epoch = redis.call('INCR', KEYS[1])
for i = 1, #ARGV do
  local generation = cjson.decode(ARGV[i])
  generation.epoch = epoch
  redis.call('HSET', KEYS[i + 2], tostring(generation.number), cjson.encode(generation))
  redis.call('SADD', KEYS[2], generation.origin)
end
return epoch
"""
# KEYS[1] epoch, KEYS[2] gens, KEYS[3] next; ARGV[1] number, ARGV[2] a replacement's JSON.
_DELETE = """
local current = redis.call('HGET', KEYS[2], ARGV[1])
if not current then return false end
local generation = cjson.decode(current)
if generation.deleted_at then return false end
local epoch = redis.call('INCR', KEYS[1])
generation.deleted_at = epoch
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode(generation))
local live = false
for _, value in ipairs(redis.call('HVALS', KEYS[2])) do
  if not cjson.decode(value).deleted_at then live = true end
end
if not live then
  local replacement = cjson.decode(ARGV[2])
  replacement.number = redis.call('INCR', KEYS[3])
  replacement.epoch = epoch
  redis.call('HSET', KEYS[2], tostring(replacement.number), cjson.encode(replacement))
end
return cjson.encode(generation)
"""


def _generation_json(generation: Generation) -> str:
    data = generation.as_json()
    if data["deleted_at"] is None:
        del data["deleted_at"]  # (Lua's cjson reads JSON null as a truthy value)
    return json.dumps(data)


class RedisKnowledge(KnowledgeStore):
    def __init__(self, url: str, prefix: str = "skillshift:", timeout: float = 2.0) -> None:
        self.url = url
        self.shown_url = without_password(url)  # (in messages: no password)
        self.prefix = prefix + "kn:"
        self._redis: Any = aioredis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
        )
        self._put_entry = self._redis.register_script(_PUT_ENTRY)
        self._ensure_first = self._redis.register_script(_ENSURE_FIRST)
        self._publish = self._redis.register_script(_PUBLISH)
        self._delete = self._redis.register_script(_DELETE)

    def _origin_key(self, origin: str, part: str) -> str:
        return f"{self.prefix}o:{origin}:{part}"

    async def _call(self, operation: Callable[[], Awaitable[T]]) -> T:
        try:
            return await operation()
        except (RedisError, OSError) as error:
            raise KnowledgeStoreUnavailable(f"redis at {self.shown_url} failed: {error}") from error

    async def epoch(self) -> int:
        return int(await self._call(lambda: self._redis.get(f"{self.prefix}epoch")) or 0)

    async def origins(self) -> list[str]:
        return sorted(await self._call(lambda: self._redis.smembers(f"{self.prefix}origins")))

    async def generations(self, origin: str) -> list[Generation]:
        values = await self._call(lambda: self._redis.hvals(self._origin_key(origin, "gens")))
        return _sorted_generations(values)

    async def ensure_first(self, origin: str) -> list[Generation]:
        keys = [
            self._origin_key(origin, "gens"),
            self._origin_key(origin, "next"),
            f"{self.prefix}origins",
        ]
        first = _generation_json(first_generation(origin))
        values = await self._call(lambda: self._ensure_first(keys=keys, args=[first, origin]))
        return _sorted_generations(values)

    async def allocate(self, origin: str) -> int:
        return int(await self._call(lambda: self._redis.incr(self._origin_key(origin, "next"))))

    async def publish(self, made: list[tuple[str, int, str]]) -> int:
        keys = [f"{self.prefix}epoch", f"{self.prefix}origins"]
        keys += [self._origin_key(origin, "gens") for origin, _, _ in made]
        args = [
            _generation_json(Generation(origin, number, 0, time.time(), made_by))
            for origin, number, made_by in made
        ]
        return int(await self._call(lambda: self._publish(keys=keys, args=args)))

    async def delete(self, origin: str, number: int) -> Generation | None:
        keys = [
            f"{self.prefix}epoch",
            self._origin_key(origin, "gens"),
            self._origin_key(origin, "next"),
        ]
        replacement = _generation_json(first_generation(origin, made_by="first load"))
        found = await self._call(lambda: self._delete(keys=keys, args=[number, replacement]))
        return Generation.from_json(json.loads(found)) if found else None

    async def entry(self, origin: str, number: int, url: str) -> dict[str, str]:
        key = self._origin_key(origin, f"g:{number}")
        value = await self._call(lambda: self._redis.hget(key, url))
        return dict(json.loads(value)) if value else {}

    async def put_entry(self, origin: str, number: int, url: str, markup: str, record: str) -> str:
        key = self._origin_key(origin, f"g:{number}")
        return str(
            await self._call(lambda: self._put_entry(keys=[key], args=[url, markup, record]))
        )

    async def entries(self, origin: str, number: int) -> dict[str, dict[str, str]]:
        key = self._origin_key(origin, f"g:{number}")
        found = await self._call(lambda: self._redis.hgetall(key))
        return {url: dict(json.loads(value)) for url, value in found.items()}

    async def record(self, digest: str) -> PageRecord | None:
        value = await self._call(lambda: self._redis.get(f"{self.prefix}record:{digest}"))
        return PageRecord.from_json(json.loads(value)) if value else None

    async def put_record(self, record: PageRecord) -> None:
        key = f"{self.prefix}record:{record.digest}"
        await self._call(lambda: self._redis.set(key, json.dumps(record.as_json())))

    async def refs(self, keys: list[str]) -> list[AssetRefs | None]:
        if not keys:
            return []
        values = await self._call(
            lambda: self._redis.mget([f"{self.prefix}refs:{key}" for key in keys])
        )
        return [refs_from_json(json.loads(value)) if value else None for value in values]

    async def put_refs(self, key: str, refs: AssetRefs) -> None:
        value = json.dumps(refs_to_json(refs))
        await self._call(lambda: self._redis.set(f"{self.prefix}refs:{key}", value, nx=True))

    async def ping(self) -> None:
        await self._call(self._redis.ping)

    async def close(self) -> None:
        await self._redis.aclose()


def _sorted_generations(values: list[str]) -> list[Generation]:
    found = [Generation.from_json(json.loads(value)) for value in values]
    return sorted(found, key=lambda generation: generation.number)


# ---- a directory --------------------------------------------------------------------------


class FileKnowledge(KnowledgeStore):
    """Knowledge in a directory, for the embedded store: it survives a restart, and processes
    that share the directory decide every write once (an exclusive lock around each).

    Layout: `epoch`; `origins/<slug>/{origin,gens.json,next,g<n>.json}`;
    `records/<digest>.json`; `refs/<key>.json`. Every file is replaced by a rename, so a reader
    never sees half of one.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        try:
            (directory / "records").mkdir(parents=True, exist_ok=True)
            (directory / "origins").mkdir(exist_ok=True)
        except OSError as error:
            raise KnowledgeStoreUnavailable(f"knowledge directory {directory}: {error}") from error

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            with (self.directory / "lock").open("a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
        except OSError as error:
            raise KnowledgeStoreUnavailable(
                f"knowledge directory {self.directory}: {error}"
            ) from error

    def _origin_dir(self, origin: str) -> Path:
        slug = hashlib.sha256(origin.encode()).hexdigest()[:16]
        return self.directory / "origins" / slug

    def _read(self, path: Path, default: Any) -> Any:
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            return default
        except (OSError, ValueError) as error:
            raise KnowledgeStoreUnavailable(
                f"knowledge file {path} is unreadable: {error}"
            ) from error

    def _write(self, path: Path, data: Any) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            partial.write_text(json.dumps(data, sort_keys=True))
            partial.replace(path)
        except OSError as error:
            raise KnowledgeStoreUnavailable(
                f"knowledge file {path} cannot be written: {error}"
            ) from error

    def _gens(self, origin: str) -> dict[str, dict[str, Any]]:
        return dict(self._read(self._origin_dir(origin) / "gens.json", {}))

    def _save_gens(self, origin: str, gens: dict[str, dict[str, Any]]) -> None:
        folder = self._origin_dir(origin)
        if not (folder / "origin").exists():
            self._write(folder / "origin", origin)
        self._write(folder / "gens.json", gens)

    def _next(self, origin: str) -> int:
        number = int(self._read(self._origin_dir(origin) / "next", 0)) + 1
        self._write(self._origin_dir(origin) / "next", number)
        return number

    def _bump_epoch(self) -> int:
        epoch = int(self._read(self.directory / "epoch", 0)) + 1
        self._write(self.directory / "epoch", epoch)
        return epoch

    async def epoch(self) -> int:
        return int(self._read(self.directory / "epoch", 0))

    async def origins(self) -> list[str]:
        found = []
        for folder in (self.directory / "origins").iterdir():
            origin = self._read(folder / "origin", None)
            if origin:
                found.append(str(origin))
        return sorted(found)

    async def generations(self, origin: str) -> list[Generation]:
        return _generations_of(self._gens(origin))

    async def ensure_first(self, origin: str) -> list[Generation]:
        if not self._gens(origin):
            with self._locked():
                gens = self._gens(origin)
                if not gens:
                    gens = {"1": first_generation(origin).as_json()}
                    self._save_gens(origin, gens)
                    if int(self._read(self._origin_dir(origin) / "next", 0)) < 1:
                        self._write(self._origin_dir(origin) / "next", 1)
        return await self.generations(origin)

    async def allocate(self, origin: str) -> int:
        with self._locked():
            return self._next(origin)

    async def publish(self, made: list[tuple[str, int, str]]) -> int:
        with self._locked():
            epoch = self._bump_epoch()
            for origin, number, made_by in made:
                gens = self._gens(origin)
                gens[str(number)] = Generation(
                    origin, number, epoch, time.time(), made_by
                ).as_json()
                self._save_gens(origin, gens)
            return epoch

    async def delete(self, origin: str, number: int) -> Generation | None:
        with self._locked():
            gens = self._gens(origin)
            found = gens.get(str(number))
            if found is None or found.get("deleted_at") is not None:
                return None
            epoch = self._bump_epoch()
            found["deleted_at"] = epoch
            if all(g.get("deleted_at") is not None for g in gens.values()):
                number_after = self._next(origin)
                gens[str(number_after)] = Generation(
                    origin, number_after, epoch, time.time(), "first load"
                ).as_json()
            self._save_gens(origin, gens)
            return Generation.from_json(found)

    def _entries_path(self, origin: str, number: int) -> Path:
        return self._origin_dir(origin) / f"g{number}.json"

    async def entry(self, origin: str, number: int, url: str) -> dict[str, str]:
        return dict(self._read(self._entries_path(origin, number), {}).get(url, {}))

    async def put_entry(self, origin: str, number: int, url: str, markup: str, record: str) -> str:
        with self._locked():
            path = self._entries_path(origin, number)
            entries = self._read(path, {})
            page = entries.setdefault(url, {})
            if markup in page:
                return str(page[markup])
            page[markup] = record
            self._write(path, entries)
            return record

    async def entries(self, origin: str, number: int) -> dict[str, dict[str, str]]:
        return dict(self._read(self._entries_path(origin, number), {}))

    async def record(self, digest: str) -> PageRecord | None:
        data = self._read(self.directory / "records" / f"{_safe(digest)}.json", None)
        return PageRecord.from_json(data) if data else None

    async def put_record(self, record: PageRecord) -> None:
        self._write(self.directory / "records" / f"{_safe(record.digest)}.json", record.as_json())

    async def refs(self, keys: list[str]) -> list[AssetRefs | None]:
        found: list[AssetRefs | None] = []
        for key in keys:
            data = self._read(self.directory / "refs" / f"{_safe(key)}.json", None)
            found.append(refs_from_json(data) if data else None)
        return found

    async def put_refs(self, key: str, refs: AssetRefs) -> None:
        path = self.directory / "refs" / f"{_safe(key)}.json"
        if not path.exists():  # (written once: the same bytes read by the same readers)
            self._write(path, refs_to_json(refs))

    async def ping(self) -> None:
        if not os.access(self.directory, os.W_OK):
            raise KnowledgeStoreUnavailable(f"knowledge directory {self.directory} is not writable")


def _safe(key: str) -> str:
    """A file name for a digest or refs key (`sha256:...`, `1/js/<hex>`)."""
    return key.replace(":", "_").replace("/", "_")


def _generations_of(gens: dict[str, dict[str, Any]]) -> list[Generation]:
    return sorted((Generation.from_json(g) for g in gens.values()), key=lambda g: g.number)


def open_knowledge(
    redis_url: str | None, directory: Path, prefix: str = "skillshift:"
) -> KnowledgeStore:
    """Redis when the episodes are there (replicas share both), else the directory."""
    return RedisKnowledge(redis_url, prefix) if redis_url else FileKnowledge(directory)
