"""The asset index against a real local upstream: read once, per page, bounded, fail closed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from proxy.assets import AssetIndex, page_key
from shifts.references import js_refs
from tests.helpers.ports import free_port
from tests.helpers.upstream import UpstreamServer

PAGE = (
    b"<html><head><link rel='stylesheet' href='/app.css'><script src='/app.js'></script>"
    b"</head><body><div id='root'></div></body></html>"
)


@pytest.fixture
def site() -> Iterator[UpstreamServer]:
    server = UpstreamServer("assets")
    server.extra["/app.css"] = ("text/css", b"@import '/base.css'; #root { margin: 0 }")
    server.extra["/base.css"] = ("text/css", b".base > a { color: red }")
    server.extra["/app.js"] = ("text/javascript", b"document.getElementById('mount')")
    server.extra["/big.js"] = ("text/javascript", b"x" * 5000)
    server.start()
    yield server
    server.stop()


def asset_requests(site: UpstreamServer) -> list[str]:
    return [r["path"] for r in site.requests if r["path"] != "/"]


async def test_a_page_is_shifted_against_its_own_assets_read_once(site: UpstreamServer) -> None:
    index = AssetIndex()
    url = site.origin + "/page"
    refs, digest = await index.page_refs(PAGE, url, site.origin, {}, 5.0, 1 << 20)
    assert refs.complete and refs.references("root") and refs.references("mount")
    assert any(rule.kind == "child" for rule in refs.structure)  # from the @import
    assert sorted(asset_requests(site)) == ["/app.css", "/app.js", "/base.css"]
    again, same = await index.page_refs(PAGE, url, site.origin, {}, 5.0, 1 << 20)
    assert again == refs and same == digest and len(asset_requests(site)) == 3  # no re-read


async def test_assets_a_page_loaded_later_count_for_that_page_only(site: UpstreamServer) -> None:
    index = AssetIndex()
    url = site.origin + "/page"
    index.add(
        site.origin + "/chunk.js", '"v1"', js_refs("lookup('late-id')"), page_key(site.origin, url)
    )
    refs, _ = await index.page_refs(PAGE, url, site.origin, {}, 5.0, 1 << 20)
    assert refs.references("late-id")
    other, _ = await index.page_refs(PAGE, site.origin + "/other", site.origin, {}, 5.0, 1 << 20)
    assert not other.references("late-id")


async def test_an_unreadable_asset_makes_the_page_incomplete(site: UpstreamServer) -> None:
    big = b"<html><head><script src='/big.js'></script></head></html>"
    refs, _ = await AssetIndex().page_refs(big, site.origin + "/", site.origin, {}, 5.0, 1000)
    assert not refs.complete  # over the size limit
    dead = f"http://127.0.0.1:{free_port()}"
    refs, _ = await AssetIndex().page_refs(PAGE, dead + "/", dead, {}, 2.0, 1 << 20)
    assert not refs.complete  # nothing answers
    missing = b"<html><head><script src='/nope.js'></script></head></html>"
    refs, _ = await AssetIndex().page_refs(missing, site.origin + "/", site.origin, {}, 5.0, 1000)
    assert refs.complete  # a 404 is what the browser gets too: it references nothing
