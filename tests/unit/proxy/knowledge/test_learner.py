"""The learner against a real local upstream, and its browser pass in Debian's Chromium."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Iterator

import pytest

from proxy.knowledge import Learner, LearnFailed, LearnRequest
from shifts.references import merge_refs
from tests.helpers.chunked_app import add_chunked_app
from tests.helpers.upstream import UpstreamServer


@pytest.fixture
def other() -> Iterator[UpstreamServer]:
    server = UpstreamServer("other").start()
    yield server
    server.stop()


@pytest.fixture
def site(other: UpstreamServer) -> Iterator[UpstreamServer]:
    server = UpstreamServer("chunks")
    add_chunked_app(server, other.origin)
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def learner() -> AsyncIterator[Learner]:
    learner = Learner(timeout=20)
    yield learner
    await learner.close()


def found_by(learned: object) -> dict[str, str]:
    record = learned.record  # type: ignore[attr-defined]
    return {asset.url.rsplit("/", 1)[1]: asset.found_by for asset in record.assets}


async def test_the_static_pass_follows_imports_and_literal_chunk_urls(
    site: UpstreamServer, learner: Learner
) -> None:
    request = LearnRequest(f"{site.origin}/app", site.origin, None, browser=False)
    learned = await learner.learn(request)
    assert found_by(learned) == {
        "app.css": "markup",
        "base.css": "import",
        "entry.js": "markup",
        "chunk-a1.js": "script",  # named by literal URL; loaded only on a click
    }
    refs = merge_refs(list(learned.refs.values()))
    assert refs.references("late-target") and refs.references("load-more")
    assert learned.record.learnt_by == "static" and learned.record.page == f"{site.origin}/app"


async def test_the_browser_pass_sees_what_scripts_build_and_changes_nothing(
    site: UpstreamServer, other: UpstreamServer, learner: Learner
) -> None:
    raw = site.extra["/app"][1]
    headers = {"cookie": "session=agent", "user-agent": "agent-browser"}
    learned = await learner.learn(LearnRequest(f"{site.origin}/app", site.origin, raw, headers))
    assert found_by(learned)["late.js"] == "browser"  # its URL is built at run time
    assert found_by(learned)["chunk-a1.js"] == "script"
    assert learned.record.learnt_by == "browser"
    assert merge_refs(list(learned.refs.values())).references("panel")
    # The document was the agent's own markup: the upstream never served /app to the learner.
    paths = [request["path"] for request in site.requests]
    assert "/app" not in paths and "/modules/late.js" in paths
    assert not [r for r in site.requests if r.get("method") == "POST"]  # no state changed
    assert other.requests == []  # nothing but the page's own upstream
    by_path = {
        request["path"]: {name.lower(): value for name, value in request["headers"].items()}
        for request in site.requests
    }
    assert by_path["/entry.js"].get("cookie") == "session=agent"  # static: as the browser
    assert "cookie" not in by_path["/modules/late.js"]  # the learning browser: no cookies


async def test_a_learn_reads_everything_or_fails_naming_it(
    site: UpstreamServer, learner: Learner
) -> None:
    site.extra["/big.js"] = ("text/javascript", b"x" * 5000)
    big = b"<html><head><script src='/big.js'></script></head></html>"
    small = Learner(mode="static", max_bytes=1000)
    with pytest.raises(LearnFailed, match="big.js is over 1000 bytes"):
        await small.learn(LearnRequest(f"{site.origin}/", site.origin, big, browser=False))
    missing = b"<html><head><script src='/nope.js'></script></head></html>"
    learned = await small.learn(LearnRequest(f"{site.origin}/", site.origin, missing))
    (asset,) = learned.record.assets
    assert asset.status == 404 and asset.sha256 is None  # the browser gets the 404 too
    hanging = Learner(mode="static", timeout=1)
    with pytest.raises(LearnFailed, match="longer than 1 s"):
        await hanging.learn(LearnRequest(f"{site.origin}/hang", site.origin, None))


async def test_without_playwright_the_browser_pass_fails_naming_the_extra(
    site: UpstreamServer, learner: Learner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "playwright", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "playwright.async_api", None)
    raw = site.extra["/app"][1]
    with pytest.raises(LearnFailed, match=r"skillshift-proxy\[browser\].*--learn static"):
        await learner.learn(LearnRequest(f"{site.origin}/app", site.origin, raw))
    static = await Learner(mode="static").learn(
        LearnRequest(f"{site.origin}/app", site.origin, raw)
    )
    assert static.record.learnt_by == "static"


async def test_a_learn_run_page_follows_redirects_and_refuses_loops(
    site: UpstreamServer,
) -> None:
    static = Learner(mode="static")
    site.redirects["/start"] = "/app"
    learned = await static.learn(LearnRequest(f"{site.origin}/start", site.origin, None))
    assert learned.record.page == f"{site.origin}/app"
    site.redirects["/loop-a"] = "/loop-b"
    site.redirects["/loop-b"] = "/loop-a"
    with pytest.raises(LearnFailed, match="redirects in a loop"):
        await static.learn(LearnRequest(f"{site.origin}/loop-a", site.origin, None))
    with pytest.raises(LearnFailed, match="answered 500"):
        await static.learn(LearnRequest(f"{site.origin}/error500", site.origin, None))


async def test_the_same_page_is_learnt_as_the_same_record(site: UpstreamServer) -> None:
    raw = site.extra["/app"][1]
    digests = set()
    for _ in range(2):
        learner = Learner(timeout=20)
        try:
            learned = await learner.learn(LearnRequest(f"{site.origin}/app", site.origin, raw))
        finally:
            await learner.close()
        digests.add(learned.record.digest)
    assert len(digests) == 1


async def test_the_browser_pass_fetches_only_code_and_waits_for_what_is_under_way(
    site: UpstreamServer,
) -> None:
    """Images and sockets are never fetched; code still loading after the page loaded (a fetch
    that does not hold up `load`, answered only when the test lets it) is waited for and read."""
    raw = (
        b"<html><head><link rel='stylesheet' href='/app.css'></head><body>"
        b"<img src='/picture.png'><script>"
        b"new WebSocket('ws://' + location.host + '/socket');"
        b"fetch('/hang.js').then(function (answer) { return answer.text(); });"
        # Holds `load` until the upstream saw the fetch: it is under way when the page loaded.
        b"document.write('<script src=/after-' + 'hang.js></' + 'script>');"
        b"</script></body></html>"
    )
    site.extra["/picture.png"] = ("image/png", b"\x89PNG")
    learner = Learner(timeout=60, settle_ms=1)  # no waiting for the network to go quiet
    try:
        learning = asyncio.ensure_future(
            learner.learn(LearnRequest(f"{site.origin}/page", site.origin, raw))
        )
        while not any(r["path"] == "/hang.js" for r in site.requests):
            assert not learning.done(), learning.result()
            await asyncio.sleep(0.05)
        while not any(r["path"] == "/after-hang.js" for r in site.requests):
            await asyncio.sleep(0.05)
        assert not learning.done()  # /hang.js holds it
        site.release.set()
        learned = await learning
    finally:
        await learner.close()
    assert found_by(learned)["hang.js"] == "browser"
    paths = [request["path"] for request in site.requests]
    assert "/picture.png" not in paths and "/socket" not in paths


async def test_an_html_page_where_a_script_was_asked_for_references_nothing(
    site: UpstreamServer, learner: Learner
) -> None:
    """An app that answers any path with its HTML page (a single-page app's fallback): the
    browser stops at the first `<` of such a "script", so nothing it names is held; a script
    that opens with an HTML-like comment (a line comment in a classic script) is read."""
    site.extra["/fallback.js"] = ("text/html", b'\n<!DOCTYPE html><div id="app"></div>')
    site.extra["/old.js"] = ("text/javascript", b"<!-- hide\ndocument.getElementById('keep')")
    page = b"<html><head><script src='/fallback.js'></script><script src='/old.js'></script>"
    request = LearnRequest(f"{site.origin}/", site.origin, page, browser=False)
    learned = await learner.learn(request)
    fallback, old = learned.record.assets
    assert fallback.status == 200 and fallback.sha256 is None
    assert old.sha256 is not None
    refs = merge_refs(list(learned.refs.values()))
    assert refs.references("keep") and not refs.references("app")
