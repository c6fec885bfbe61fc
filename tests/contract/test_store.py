"""One contract, three stores: MemoryStore, RedisStore against a real redis-server, and a
MemoryStore writing through to a recording directory (which must change none of it)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator

import pytest
import redis as sync_redis

from proxy.recording_dir import Recording
from proxy.store import EpisodeStore, MemoryStore, RedisStore, StoreUnavailable
from proxy.store.archiving import ArchivingStore
from proxy.store.base import parse_event_id
from tests.helpers.processes import RedisProcess

RECORD = {"id": "e1", "condition": "Src-Exec", "seed": 7}


@pytest.fixture(params=["memory", "redis", "archiving"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[EpisodeStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    if request.param == "archiving":
        archiving = ArchivingStore(MemoryStore(), Recording(request.getfixturevalue("tmp_path")))
        yield archiving
        await archiving.close()
        return
    server: RedisProcess = request.getfixturevalue("redis_server")
    redis_store = RedisStore(server.url, prefix=f"t{uuid.uuid4().hex[:8]}:")
    yield redis_store
    await redis_store.close()


def expiry(seconds: int = 600) -> int:
    return int(time.time()) + seconds


async def test_create_get_and_duplicate(store: EpisodeStore) -> None:
    assert await store.create_episode("e1", RECORD, expiry())
    assert await store.get_episode("e1") == RECORD
    assert not await store.create_episode("e1", {**RECORD, "seed": 8}, expiry())
    assert (await store.get_episode("e1"))["seed"] == 7  # the duplicate changed nothing


async def test_missing_episode(store: EpisodeStore) -> None:
    assert await store.get_episode("nope") is None
    assert not await store.update_episode("nope", RECORD)
    assert not await store.delete_episode("nope")
    # Writes to an episode that is gone (deleted while a request was in flight) write nothing:
    # no orphan flags, counters or events that would outlive it, in either store.
    assert await store.claim_flag("nope", "popup_once", expiry()) is False
    assert await store.incr_counter("nope", "loads", expiry()) == 0
    assert await store.append_event("nope", {"type": "x"}, expiry()) is None
    assert await store.append_events("nope", [{"type": "x"}, {"type": "y"}], expiry()) is None
    assert await store.get_flags("nope") == {}
    assert await store.get_counters("nope") == {}
    assert await store.read_events("nope") == []
    assert await store.count_events("nope") == 0
    if isinstance(store, RedisStore):
        assert await store._redis.keys(f"{store.prefix}*") == []


async def test_list_is_oldest_first_whatever_the_expiry(store: EpisodeStore) -> None:
    """By creation time, as the interface says (Redis indexes by expiry for its own sake)."""
    records = [
        ("old-long", 1000.0, expiry(3000)),
        ("mid-short", 2000.0, expiry(60)),
        ("new-mid", 3000.0, expiry(600)),
    ]
    for episode_id, created_at, expires_at in records:
        await store.create_episode(
            episode_id, {"id": episode_id, "created_at": created_at}, expires_at
        )
    listed = [record["id"] for record in await store.list_episodes()]
    assert listed == ["old-long", "mid-short", "new-mid"]


async def test_update_and_delete_remove_all_state(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry())
    assert await store.update_episode("e1", {**RECORD, "seed": 9})
    assert (await store.get_episode("e1"))["seed"] == 9
    await store.claim_flag("e1", "f", expiry())
    await store.incr_counter("e1", "loads", expiry())
    await store.append_event("e1", {"type": "x"}, expiry())
    assert await store.delete_episode("e1")
    assert await store.get_episode("e1") is None
    assert await store.get_flags("e1") == {}
    assert await store.get_counters("e1") == {}
    assert await store.read_events("e1") == []


async def test_list_episodes(store: EpisodeStore) -> None:
    await store.create_episode("a", {**RECORD, "id": "a"}, expiry())
    await store.create_episode("b", {**RECORD, "id": "b"}, expiry())
    assert sorted(record["id"] for record in await store.list_episodes()) == ["a", "b"]


async def test_flag_is_claimed_once_under_concurrency(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry())
    results = await asyncio.gather(*(store.claim_flag("e1", "once", expiry()) for _ in range(50)))
    assert results.count(True) == 1
    assert "once" in await store.get_flags("e1")


async def test_counter_is_atomic(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry())
    values = await asyncio.gather(*(store.incr_counter("e1", "loads", expiry()) for _ in range(50)))
    assert sorted(values) == list(range(1, 51))
    assert await store.get_counters("e1") == {"loads": 50}


async def test_events_are_ordered_and_paged(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry())
    ids = [await store.append_event("e1", {"type": "t", "n": n}, expiry()) for n in range(25)]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))
    assert len(set(ids)) == 25
    first = await store.read_events("e1", limit=10)
    assert [event["n"] for event in first] == list(range(10))
    rest = await store.read_events("e1", after=first[-1]["id"], limit=100)
    assert [event["n"] for event in rest] == list(range(10, 25))
    assert await store.read_events("e1", after=rest[-1]["id"]) == []
    assert await store.count_events("e1") == 25


async def test_events_appended_together_keep_their_order_among_the_others(
    store: EpisodeStore,
) -> None:
    await store.create_episode("e1", RECORD, expiry())
    first = await store.append_event("e1", {"type": "t", "n": 0}, expiry())
    together = await store.append_events("e1", [{"type": "t", "n": n} for n in (1, 2, 3)], expiry())
    last = await store.append_event("e1", {"type": "t", "n": 4}, expiry())
    assert together is not None and len(set(together)) == 3
    ids = [first, *together, last]
    assert ids == sorted(ids, key=lambda i: tuple(map(int, str(i).split("-"))))
    events = await store.read_events("e1")
    assert [(event["id"], event["n"]) for event in events] == list(zip(ids, range(5), strict=True))
    assert await store.append_events("e1", [], expiry()) == []


async def test_reset_keeps_configuration(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry())
    await store.claim_flag("e1", "once", expiry())
    await store.incr_counter("e1", "loads", expiry())
    await store.append_event("e1", {"type": "x"}, expiry())
    assert await store.reset_episode("e1")
    assert await store.get_episode("e1") == RECORD
    assert await store.get_flags("e1") == {}
    assert await store.get_counters("e1") == {}
    assert await store.count_events("e1") == 0
    assert await store.claim_flag("e1", "once", expiry())
    assert not await store.reset_episode("gone")
    assert await store.get_episode("gone") is None


async def test_reset_replaces_the_record_with_the_flags(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry())
    await store.claim_flag("e1", "once", expiry())
    assert await store.reset_episode("e1", {**RECORD, "generation": 1})
    assert await store.get_episode("e1") == {**RECORD, "generation": 1}
    assert await store.get_flags("e1") == {}
    assert not await store.reset_episode("gone", RECORD)
    assert await store.get_episode("gone") is None  # a reset creates nothing


async def test_a_change_expecting_a_record_writes_only_over_that_record(
    store: EpisodeStore,
) -> None:
    nested = {**RECORD, "tags": {"b": "2", "a": "1"}, "rate": 0.1, "targets": None}
    await store.create_episode("e1", nested, expiry())
    read = await store.get_episode("e1")
    assert read is not None
    assert await store.update_episode("e1", {**read, "seed": 8}, expected=read)
    # Written over since it was read: neither the update nor the reset writes or forgets.
    assert not await store.update_episode("e1", {**read, "seed": 9}, expected=read)
    await store.claim_flag("e1", "once", expiry())
    reset = {"type": "episode_reset"}
    assert (
        await store.change_logged("e1", {**read, "generation": 1}, read, reset, expiry(), True)
        is None
    )
    assert await store.get_episode("e1") == {**nested, "seed": 8}
    assert await store.get_flags("e1") != {}
    assert not await store.update_episode("gone", RECORD, expected=RECORD)
    assert await store.change_logged("gone", RECORD, RECORD, reset, expiry(), True) is None
    assert await store.get_episode("gone") is None


async def test_a_change_logged_appends_its_event_in_the_same_step(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry(60))
    first = await store.append_event("e1", {"type": "x"}, expiry(60))
    await store.claim_flag("e1", "once", expiry(60))
    new = {**RECORD, "suspended": True}
    event_id = await store.change_logged("e1", new, RECORD, {"type": "suspended"}, expiry(60))
    assert event_id is not None and first is not None
    assert parse_event_id(event_id) > parse_event_id(first)
    assert await store.get_episode("e1") == new
    assert await store.get_flags("e1") != {}  # (an update forgets nothing)
    assert await store.read_events("e1") == [
        {"id": first, "type": "x"},
        {"id": event_id, "type": "suspended"},
    ]
    # Over a record that is no longer the stored one, or of no episode: nothing written.
    stale = {**RECORD, "seed": 9}
    assert await store.change_logged("e1", stale, RECORD, {"type": "no"}, expiry(60)) is None
    assert await store.get_episode("e1") == new
    assert await store.count_events("e1") == 2
    assert await store.change_logged("gone", RECORD, RECORD, {"type": "no"}, expiry(60)) is None
    assert await store.get_episode("gone") is None and await store.count_events("gone") == 0


async def test_a_reset_logged_starts_the_new_log_with_its_event(store: EpisodeStore) -> None:
    await store.create_episode("e1", RECORD, expiry(60))
    await store.append_event("e1", {"type": "x"}, expiry(60))
    await store.claim_flag("e1", "once", expiry(60))
    new = {**RECORD, "generation": 1}
    reset = {"type": "episode_reset"}
    event_id = await store.change_logged("e1", new, RECORD, reset, expiry(60), reset=True)
    assert event_id is not None
    assert await store.get_episode("e1") == new
    assert await store.get_flags("e1") == {}
    assert await store.read_events("e1") == [{"id": event_id, "type": "episode_reset"}]
    later = await store.append_event("e1", {"type": "y"}, expiry(60))
    assert later is not None and parse_event_id(later) > parse_event_id(event_id)


async def test_a_new_log_sorts_after_the_old_one(store: EpisodeStore) -> None:
    """Ids go on from the old log's across a reset, within the same millisecond too (a log
    made anew would start again from zero): an archive sorted by id would otherwise put the
    old run's events after the reset that forgot them."""
    await store.create_episode("e1", RECORD, expiry(60))
    record = RECORD
    for generation in range(1, 41):
        old = await store.append_events("e1", [{"type": "x"}] * 5, expiry(60))
        assert old is not None
        new = {**RECORD, "generation": generation}
        reset = await store.change_logged("e1", new, record, {"type": "r"}, expiry(60), True)
        assert reset is not None and parse_event_id(reset) > parse_event_id(old[-1])
        record = new
        before = await store.append_event("e1", {"type": "x"}, expiry(60))
        assert await store.reset_episode("e1")  # (the same, with no event of its own)
        after = await store.append_event("e1", {"type": "x"}, expiry(60))
        assert before is not None and after is not None
        assert parse_event_id(after) > parse_event_id(before)


async def test_listener_default(store: EpisodeStore) -> None:
    assert await store.get_listener_default("8080") is None
    await store.set_listener_default("8080", "e1", expiry())
    assert await store.get_listener_default("8080") == "e1"
    await store.set_listener_default("8080", None, expiry())
    assert await store.get_listener_default("8080") is None


async def test_ping(store: EpisodeStore) -> None:
    await store.ping()


async def test_memory_store_expires_everything() -> None:
    now = [1000.0]
    store = MemoryStore(clock=lambda: now[0])
    await store.create_episode("e1", RECORD, 1010)
    await store.set_listener_default("8080", "e1", 1010)
    now[0] = 1011
    assert await store.get_episode("e1") is None
    assert await store.list_episodes() == []
    assert await store.get_listener_default("8080") is None
    assert await store.create_episode("e1", RECORD, 2000)  # the id is free again


async def test_redis_sets_expiry_on_every_key(redis_server: RedisProcess) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    store = RedisStore(redis_server.url, prefix=prefix)
    expires_at = expiry(300)
    await store.create_episode("e1", RECORD, expires_at)
    await store.claim_flag("e1", "once", expires_at)
    await store.incr_counter("e1", "loads", expires_at)
    await store.append_events("e1", [{"type": "x"}, {"type": "y"}], expires_at)
    await store.set_listener_default("9000", "e1", expires_at)
    await store.update_episode("e1", {**RECORD, "seed": 1})
    client = sync_redis.Redis.from_url(redis_server.url)
    keys = client.keys(f"{prefix}*")
    assert len(keys) == 6  # record, flags, counters, events, index, listener
    for key in keys:
        assert 0 < client.ttl(key) <= 300, key
    await store.close()


async def test_redis_that_forgot_the_scripts_is_sent_them_again(
    redis_server: RedisProcess,
) -> None:
    # A restarted Redis has no scripts: the per-load writes send theirs whole, once.
    store = RedisStore(redis_server.url, prefix=f"t{uuid.uuid4().hex[:8]}:")
    await store.create_episode("e1", RECORD, expiry())
    assert await store.incr_counter("e1", "loads", expiry()) == 1
    client = sync_redis.Redis.from_url(redis_server.url)
    client.script_flush()
    assert await store.incr_counter("e1", "loads", expiry()) == 2
    assert await store.claim_flag("e1", "once", expiry())
    assert len(await store.append_events("e1", [{"type": "x"}], expiry()) or []) == 1
    before = client.info("commandstats")
    assert await store.incr_counter("e1", "loads", expiry()) == 3
    after = client.info("commandstats")
    assert after["cmdstat_eval"]["calls"] == before["cmdstat_eval"]["calls"]  # by digest now
    assert after["cmdstat_evalsha"]["calls"] == before["cmdstat_evalsha"]["calls"] + 1
    await store.close()


async def test_redis_down_raises_store_unavailable() -> None:
    from tests.helpers.ports import free_port

    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
    with pytest.raises(StoreUnavailable):
        await store.get_episode("e1")
    with pytest.raises(StoreUnavailable):
        await store.ping()
    await store.close()
