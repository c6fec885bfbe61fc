"""One contract, three knowledge stores: in memory, a directory, and Redis (a real
redis-server). Two handles on one directory or one Redis stand for two processes."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from proxy.knowledge import FileKnowledge, KnowledgeStore, MemoryKnowledge, RedisKnowledge
from proxy.knowledge.records import AssetRecord, PageRecord, refs_key, resolve
from proxy.store import StoreUnavailable
from shifts.references import css_refs, js_refs
from tests.helpers.ports import free_port
from tests.helpers.processes import RedisProcess

ORIGIN = "http://127.0.0.1:8000"
Opener = Callable[[], KnowledgeStore]


@pytest.fixture(params=["memory", "directory", "redis"])
async def opener(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens handles on one store (for memory: the same object, one process)."""
    opened: list[KnowledgeStore] = []
    if request.param == "memory":
        memory = MemoryKnowledge()

        def open_memory() -> KnowledgeStore:
            return memory

        yield open_memory
        return
    if request.param == "directory":

        def open_directory() -> KnowledgeStore:
            opened.append(FileKnowledge(tmp_path / "knowledge"))
            return opened[-1]

        yield open_directory
        return
    server: RedisProcess = request.getfixturevalue("redis_server")
    prefix = f"t{uuid.uuid4().hex[:8]}:"

    def open_redis() -> KnowledgeStore:
        opened.append(RedisKnowledge(server.url, prefix))
        return opened[-1]

    yield open_redis
    for store in opened:
        await store.close()


def record(page: str = f"{ORIGIN}/", sha: str = "ab" * 32) -> PageRecord:
    asset = AssetRecord(f"{ORIGIN}/app.js", "js", 200, sha, "markup")
    return PageRecord(page, "m1", (asset,), "static")


async def test_an_origin_starts_with_one_generation_at_epoch_zero(opener: Opener) -> None:
    store = opener()
    assert await store.epoch() == 0 and await store.generations(ORIGIN) == []
    first = await store.ensure_first(ORIGIN)
    again = await opener().ensure_first(ORIGIN)
    assert [(g.number, g.epoch) for g in first] == [(1, 0)]
    assert again == first  # made once, whoever asks
    assert await store.origins() == [ORIGIN]


async def test_an_entry_is_decided_once_by_the_first_writer(opener: Opener) -> None:
    one, two = opener(), opener()
    await one.ensure_first(ORIGIN)
    results = await asyncio.gather(
        *(
            (one if n % 2 else two).put_entry(ORIGIN, 1, f"{ORIGIN}/", "m1", f"sha256:{n}")
            for n in range(8)
        )
    )
    assert len(set(results)) == 1  # every writer was told the one record the entry holds
    assert await one.entry(ORIGIN, 1, f"{ORIGIN}/") == {"m1": results[0]}
    assert await two.put_entry(ORIGIN, 1, f"{ORIGIN}/", "m2", "sha256:x") == "sha256:x"
    assert await two.entries(ORIGIN, 1) == {f"{ORIGIN}/": {"m1": results[0], "m2": "sha256:x"}}
    assert await one.entry(ORIGIN, 2, f"{ORIGIN}/") == {}  # other generations hold their own


async def test_records_and_references_round_trip(opener: Opener) -> None:
    store = opener()
    page = record()
    await store.put_record(page)
    assert await opener().record(page.digest) == page
    assert await store.record("sha256:none") is None
    refs = css_refs(".a > b:first-child, #x [data-k='v'] {}")
    key = refs_key("css", "cd" * 32)
    await store.put_refs(key, refs)
    assert await opener().refs([key, refs_key("js", "00" * 32)]) == [refs, None]
    # Written once: the same key never takes another value (what pinned pages read stays).
    await opener().put_refs(key, css_refs(".other {}"))
    assert await opener().refs([key]) == [refs]
    # Each readers' version has its own key.
    assert refs_key("css", "cd" * 32, 1) != key and (
        await store.refs([refs_key("css", "cd" * 32, 1)])
    ) == [None]
    words = js_refs("document.querySelector('.menu > li'); el.dataset.fooBar; 'btn-' + kind")
    await store.put_refs("k", words)
    assert (await store.refs(["k"]))[0] == words


async def test_publishing_makes_a_new_epoch_for_new_episodes_only(opener: Opener) -> None:
    store = opener()
    await store.ensure_first(ORIGIN)
    number = await store.allocate(ORIGIN)
    assert number == 2
    assert [g.number for g in await store.generations(ORIGIN)] == [1]  # not yet published
    epoch = await opener().publish([(ORIGIN, number, "learn run")])
    assert epoch == 1 == await store.epoch()
    generations = await store.generations(ORIGIN)
    assert resolve(generations, 0).number == 1  # an episode created before the run
    assert resolve(generations, epoch).number == 2  # one created after it


async def test_deleting_a_generation_is_named_and_leaves_a_fresh_one(opener: Opener) -> None:
    store = opener()
    await store.ensure_first(ORIGIN)
    deleted = await store.delete(ORIGIN, 1)
    assert deleted is not None and deleted.deleted_at == 1 == await store.epoch()
    assert await opener().delete(ORIGIN, 1) is None  # once
    assert await store.delete(ORIGIN, 9) is None
    generations = await store.generations(ORIGIN)
    with pytest.raises(LookupError, match="version 1 .* was deleted"):
        resolve(generations, 0)  # an episode that pinned it is told, not moved elsewhere
    fresh = resolve(generations, 1)
    assert fresh is not None and fresh.number == 2 and fresh.deleted_at is None


async def test_an_unreachable_store_fails_closed(tmp_path: Path) -> None:
    dead = RedisKnowledge(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
    with pytest.raises(StoreUnavailable):
        await dead.epoch()
    with pytest.raises(StoreUnavailable):
        await dead.put_entry(ORIGIN, 1, "u", "m", "r")
    await dead.close()
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreUnavailable, match="knowledge directory"):
        FileKnowledge(blocker / "knowledge")
    broken = FileKnowledge(tmp_path / "k")
    (tmp_path / "k" / "epoch").write_text("{not json")
    with pytest.raises(StoreUnavailable, match="unreadable"):
        await broken.epoch()
