"""The asset observer in the addon chain: it reads the stylesheets and scripts episodes' browsers
load, once per version of each."""

from __future__ import annotations

import pytest
from mitmproxy import http
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpResponseHeadersHook

from proxy import assets
from proxy.store import MemoryStore
from tests.unit.proxy.conftest import make_episode, member, request_flow, run_request

CSS = b".hook { color: red }"


async def css_through(
    chain: AddonManager,
    episode_id: str,
    etag: str | None,
    css: bytes = CSS,
    referer: str | None = None,
) -> bool:
    """A stylesheet through the chain; whether the observer tees it to read it."""
    headers = {"X-SkillShift-Episode": episode_id, "Sec-Fetch-Dest": "style"}
    flow = request_flow("/s.css", {**headers, **({"Referer": referer} if referer else {})})
    await run_request(chain, flow)
    headers = {"Content-Type": "text/css", **({"ETag": etag} if etag else {})}
    flow.response = http.Response.make(200, css, headers)
    await chain.handle_lifecycle(HttpResponseHeadersHook(flow))
    teed = callable(flow.response.stream)
    if teed:
        for chunk in (css, b""):
            flow.response.stream(chunk)
    return teed


async def test_every_episodes_browser_teaches_the_index(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A Src run shows which scripts a page loads later; a Src-Perc run of it needs that."""
    for number, condition in enumerate(("Src", "Src-Exec", "Src-Perc")):
        episode = await make_episode(store, condition=condition)
        assert await css_through(addons, episode.id, f'"v{number}"'), condition


async def test_an_asset_is_read_again_only_when_it_may_have_changed(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, condition="Src-Perc")
    observer = member(addons, "assetobserver")
    assert await css_through(addons, episode.id, '"v1"')
    for task in list(observer._tasks):
        await task
    assert not await css_through(addons, episode.id, '"v1"')  # the same version: indexed
    assert await css_through(addons, episode.id, '"v2"')  # a new version
    assert await css_through(addons, episode.id, None)  # no validator: it may have changed


async def test_the_same_bytes_streamed_again_are_read_once(
    store: MemoryStore, addons: AddonManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stylesheet without a validator is teed on every load; its text is parsed again only
    when its bytes changed."""
    reads: list[str] = []
    read = assets._read

    async def counted(kind: str, text: str) -> object:
        reads.append(text)
        return await read(kind, text)

    monkeypatch.setattr(assets, "_read", counted)
    episode = await make_episode(store, condition="Src-Perc")
    observer = member(addons, "assetobserver")
    index = observer.index  # type: ignore[attr-defined]
    for css in (CSS, CSS, b".other { color: blue }", CSS):
        assert await css_through(addons, episode.id, None, css)
        for task in list(observer._tasks):  # type: ignore[attr-defined]
            await task
    assert reads == [CSS.decode(), ".other { color: blue }"]
    assert index.knows("http://site.test/s.css")
    refs, _ = index.refs_of(["http://site.test/s.css"])
    assert refs.references("hook") and not refs.references("other")  # the latest version


async def test_a_known_asset_loaded_by_a_page_is_read_again_when_its_version_changed(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Browsers send a Referer with every asset: that must not stop a new version of a known
    asset from being read, or the drift would rename what the new code references."""
    episode = await make_episode(store, condition="Src-Perc")
    observer = member(addons, "assetobserver")
    page = "http://site.test/page"
    assert await css_through(addons, episode.id, '"v1"', referer=page)
    for task in list(observer._tasks):  # type: ignore[attr-defined]
        await task
    assert not await css_through(addons, episode.id, '"v1"', referer=page)  # the same version
    new = b".renamed-by-the-new-version { color: red }"
    assert await css_through(addons, episode.id, '"v2"', new, referer=page)
    for task in list(observer._tasks):  # type: ignore[attr-defined]
        await task
    refs, _ = observer.index.refs_of(["http://site.test/s.css"])  # type: ignore[attr-defined]
    assert refs.references("renamed-by-the-new-version")
