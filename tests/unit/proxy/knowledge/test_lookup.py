"""What a page is shifted against, across "processes" (two lookups on one store), epochs, learn
runs and deletions, against a real local upstream."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from proxy.knowledge import FileKnowledge, KnowledgeLookup, Learner, LearnRequest
from proxy.knowledge.runs import LearnRunFailed, learn_run
from tests.helpers.chunked_app import add_chunked_app
from tests.helpers.upstream import UpstreamServer


@pytest.fixture
def site() -> Iterator[UpstreamServer]:
    with UpstreamServer.serving("chunks", add_chunked_app) as server:
        yield server


def lookup_on(directory: Path, **options: object) -> KnowledgeLookup:
    """A lookup as one service process has it (static learning: these tests are about what
    is decided where, not about the browser pass)."""
    return KnowledgeLookup(FileKnowledge(directory), Learner(mode="static"), **options)  # type: ignore[arg-type]


def page_request(site: UpstreamServer, path: str = "/app") -> LearnRequest:
    return LearnRequest(f"{site.origin}{path}", site.origin, site.extra["/app"][1])


def asset_reads(site: UpstreamServer) -> int:
    return sum(request["path"].endswith((".js", ".css")) for request in site.requests)


async def test_two_processes_on_one_store_shift_against_one_record(
    site: UpstreamServer, tmp_path: Path
) -> None:
    first, second = lookup_on(tmp_path), lookup_on(tmp_path)
    learnt = await first.for_page(0, page_request(site))
    reads = asset_reads(site)
    found = await second.for_page(0, page_request(site))
    assert learnt.learnt is not None and found.learnt is None  # learnt once, by the first
    assert found.records == learnt.records and found.refs == learnt.refs
    assert found.refs is not None and found.refs.references("late-target")
    assert asset_reads(site) == reads  # the second read the store, not the upstream


async def test_concurrent_first_loads_learn_once(site: UpstreamServer, tmp_path: Path) -> None:
    lookup = lookup_on(tmp_path)
    found = await asyncio.gather(*(lookup.for_page(0, page_request(site)) for _ in range(5)))
    assert sum(each.learnt is not None for each in found) == 1
    assert len({each.records for each in found}) == 1
    assert [r["path"] for r in site.requests].count("/entry.js") == 1


async def test_a_load_that_gives_up_cancels_neither_the_learn_nor_the_others(
    site: UpstreamServer, tmp_path: Path
) -> None:
    """The first load of a page goes away (its client hung up) while the page is learnt: the
    load waiting beside it still gets the page's knowledge, from the one learn."""
    slow = b"<html><head><script src='/hang'></script></head><body></body></html>"
    request = LearnRequest(f"{site.origin}/slow", site.origin, slow)
    lookup = lookup_on(tmp_path)
    first = asyncio.ensure_future(lookup.for_page(0, request))
    while not any(r["path"] == "/hang" for r in site.requests):  # the learn is under way
        await asyncio.sleep(0.02)
    second = asyncio.ensure_future(lookup.for_page(0, request))
    await asyncio.sleep(0)  # (the second on its way to wait for the same learn)
    first.cancel()
    site.release.set()
    found = await second
    assert found.refs is not None and found.error is None and found.records
    assert [r["path"] for r in site.requests].count("/hang") == 1


async def test_a_fragment_is_shifted_against_the_page_that_fetched_it(
    site: UpstreamServer, tmp_path: Path
) -> None:
    lookup = lookup_on(tmp_path)
    page = await lookup.for_page(0, page_request(site))
    found = await lookup.for_fragment(0, site.origin, f"{site.origin}/app", page.records)
    assert found.records == page.records and found.learnt is None
    assert found.refs == page.refs
    stranger = await lookup.for_fragment(0, site.origin, f"{site.origin}/elsewhere", [])
    assert stranger.refs is None and "was not loaded in this episode" in (stranger.error or "")


async def test_a_learn_run_changes_nothing_for_episodes_created_before_it(
    site: UpstreamServer, tmp_path: Path
) -> None:
    lookup = lookup_on(tmp_path)
    before = await lookup.for_page(0, page_request(site))  # an episode at epoch 0
    unchanged = await learn_run(lookup, [f"{site.origin}/app"], browser=False)
    assert unchanged["epoch"] == 0 and not unchanged["origins"][0]["new"]
    site.extra["/chunk-a1.js"] = ("text/javascript", b"document.querySelector('.renamed')")
    changed = await learn_run(lookup, [f"{site.origin}/app"], browser=False)
    (origin,) = changed["origins"]
    assert changed["epoch"] == 1 and origin["new"] and origin["pages"][0]["changed"]
    old = await lookup_on(tmp_path).for_page(0, page_request(site))
    assert old.records == before.records and old.outdated_by == origin["version"]
    new = await lookup_on(tmp_path).for_page(1, page_request(site))
    assert new.records != before.records and new.version == origin["version"]
    assert new.refs is not None and new.refs.references("renamed")


async def test_a_learn_run_that_finds_the_same_code_another_way_changes_nothing(
    site: UpstreamServer, tmp_path: Path
) -> None:
    """Learnt statically on a first load, then by a learn run with the browser: the same
    assets and bytes (found another way, so another record digest) are no new version."""
    site.extra["/simple.js"] = ("text/javascript", b"window.simple = 1;")
    markup = b"<html><head><script src='/simple.js'></script></head><body></body></html>"
    site.extra["/simple"] = ("text/html", markup)
    lookup = lookup_on(tmp_path)
    first = await lookup.for_page(0, LearnRequest(f"{site.origin}/simple", site.origin, markup))
    browser = KnowledgeLookup(lookup.store, Learner(timeout=20))
    try:
        run = await learn_run(browser, [f"{site.origin}/simple"], browser=True)
    finally:
        await browser.learner.close()
    (origin,) = run["origins"]
    assert run["epoch"] == 0 and not origin["new"] and not origin["pages"][0]["changed"]
    assert origin["pages"][0]["learnt_by"] == "browser"
    assert origin["pages"][0]["record"] == first.records[0]  # the version keeps its record


async def test_a_static_learn_run_keeps_what_the_browser_saw_load_at_run_time(
    site: UpstreamServer, tmp_path: Path
) -> None:
    """Learnt by the browser on a first load (with `/modules/late.js`, which a script builds
    the URL of at run time), then by a static learn run, which cannot see that module: the
    same code as far as a static pass sees is no new version, and the version keeps the
    browser's record, module and all."""
    browser = KnowledgeLookup(FileKnowledge(tmp_path), Learner(timeout=20))
    try:
        first = await browser.for_page(0, page_request(site))
    finally:
        await browser.learner.close()
    late = f"{site.origin}/modules/late.js"
    (held,) = first.records
    record = await browser.store.record(held)
    assert record is not None and record.asset(late) is not None  # (found by the browser)
    run = await learn_run(lookup_on(tmp_path), [f"{site.origin}/app"], browser=False)
    (origin,) = run["origins"]
    assert run["epoch"] == 0 and not origin["new"] and not origin["pages"][0]["changed"]
    assert origin["pages"][0]["learnt_by"] == "static"
    assert origin["pages"][0]["record"] == held  # the version keeps the browser's record
    later = await lookup_on(tmp_path).for_page(run["epoch"], page_request(site))
    assert later.records == first.records and later.version == first.version


async def test_a_learn_run_that_fails_writes_nothing(site: UpstreamServer, tmp_path: Path) -> None:
    lookup = lookup_on(tmp_path)
    with pytest.raises(LearnRunFailed, match="error500 answered 500"):
        await learn_run(lookup, [f"{site.origin}/app", f"{site.origin}/error500"], browser=False)
    assert await lookup.store.origins() == [] and await lookup.store.epoch() == 0


async def test_a_deleted_version_is_named_never_replaced(
    site: UpstreamServer, tmp_path: Path
) -> None:
    lookup = lookup_on(tmp_path)
    await lookup.for_page(0, page_request(site))
    await lookup.store.delete(site.origin, 1)
    pinned = await lookup_on(tmp_path).for_page(0, page_request(site))
    assert pinned.refs is None and "version 1" in (pinned.error or "")
    fresh = await lookup_on(tmp_path).for_page(1, page_request(site))
    assert fresh.refs is not None and fresh.version == 2 and fresh.learnt is not None


async def test_with_learning_off_an_unknown_page_has_no_knowledge(
    site: UpstreamServer, tmp_path: Path
) -> None:
    found = await lookup_on(tmp_path, auto_learn=False).for_page(0, page_request(site))
    assert found.refs is None and "not learnt" in (found.error or "")
    assert asset_reads(site) == 0
