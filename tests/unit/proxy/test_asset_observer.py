"""The asset observer in the addon chain: it reads the stylesheets and scripts episodes' browsers
load, once per version of each."""

from __future__ import annotations

from mitmproxy import http
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpResponseHeadersHook

from proxy.store import MemoryStore
from tests.unit.proxy.conftest import make_episode, member, request_flow, run_request

CSS = b".hook { color: red }"


async def css_through(chain: AddonManager, episode_id: str, etag: str | None) -> bool:
    """A stylesheet through the chain; whether the observer tees it to read it."""
    flow = request_flow("/s.css", {"X-SkillShift-Episode": episode_id, "Sec-Fetch-Dest": "style"})
    await run_request(chain, flow)
    headers = {"Content-Type": "text/css", **({"ETag": etag} if etag else {})}
    flow.response = http.Response.make(200, CSS, headers)
    await chain.handle_lifecycle(HttpResponseHeadersHook(flow))
    teed = callable(flow.response.stream)
    if teed:
        for chunk in (CSS, b""):
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
