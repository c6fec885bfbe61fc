from __future__ import annotations

import json

from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpRequestHeadersHook

from proxy.store import MemoryStore
from shifts.runtime import runtime_source
from tests.unit.proxy.conftest import make_episode, request_flow, run_request


async def test_runtime_script_is_served_not_forwarded(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store)
    flow = request_flow("/__ss/r.js?v=1", headers={"X-SkillShift-Episode": episode.id})
    await run_request(addons, flow)
    assert flow.response is not None and flow.response.status_code == 200
    assert flow.response.content == runtime_source()
    served = runtime_source().lower()
    assert (
        b"skillshift" not in served
        and b"shifted" not in served
        and b"//" not in served
        and b"/*" not in served
    )


async def beacon(addons: AddonManager, episode_header: str, payload: object) -> int:
    flow = request_flow(
        "/__ss/b",
        method="POST",
        content=json.dumps(payload).encode(),
        headers={"X-SkillShift-Episode": episode_header},
    )
    await run_request(addons, flow)
    assert flow.response is not None
    return flow.response.status_code


async def test_beacon_needs_binding_and_key(store: MemoryStore, addons: AddonManager) -> None:
    episode = await make_episode(store)
    other = await make_episode(store)
    good = {"k": episode.beacon_key, "type": "popup_shown", "kind": "newsletter"}
    assert await beacon(addons, episode.id, good) == 202
    assert await beacon(addons, other.id, good) == 403  # another episode's key
    assert await beacon(addons, episode.id, {**good, "k": "nope"}) == 403
    assert await beacon(addons, episode.id, {**good, "type": "page_served"}) == 422
    assert await beacon(addons, episode.id, "not an object") == 403
    events = await store.read_events(episode.id)
    assert [(e["type"], e["source"], e["kind"]) for e in events] == [
        ("popup_shown", "client", "newsletter")
    ]
    assert await store.read_events(other.id) == []


async def test_unknown_internal_path_is_404_not_forwarded(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store)
    flow = request_flow("/__ss/secret", headers={"X-SkillShift-Episode": episode.id})
    await run_request(addons, flow)
    assert flow.response is not None and flow.response.status_code == 404


async def test_a_body_that_may_be_streamed_to_the_proxys_own_path_is_cut_off(
    store: MemoryStore, addons: AddonManager
) -> None:
    """It would reach the app's upstream before the endpoint answers (mitmproxy streams a body
    over the limit, and a chunked one once it grows past it): no endpoint takes one."""
    episode = await make_episode(store)
    for headers in ({"Transfer-Encoding": "chunked"}, {"Content-Length": "99999999"}):
        flow = request_flow(
            "/__ss/b", headers={"X-SkillShift-Episode": episode.id, **headers}, method="POST"
        )
        flow.request.stream = "Content-Length" in headers  # (as mitmproxy sets it, by length)
        await addons.handle_lifecycle(HttpRequestHeadersHook(flow))
        assert flow.error is not None and flow.error.msg == "Connection killed.", headers
