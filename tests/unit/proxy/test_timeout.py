"""The upstream timeout: a timer per request that went upstream, on the real event loop,
stopped by the response headers or an error; on expiry the client's wait ends."""

from __future__ import annotations

import asyncio

from mitmproxy import ctx, http
from mitmproxy import flow as mflow
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpErrorHook

from proxy.flowstate import state_of
from proxy.store import MemoryStore
from proxy.timeout import UpstreamTimeout
from tests.unit.proxy.conftest import (
    html_response,
    make_episode,
    member,
    request_flow,
    run_request,
    run_response,
)


def timers(addons: AddonManager) -> dict[str, asyncio.TimerHandle]:
    addon = member(addons, "upstreamtimeout")
    assert isinstance(addon, UpstreamTimeout)
    return addon._timers


async def bound_flow(store: MemoryStore) -> http.HTTPFlow:
    episode = await make_episode(store)
    return request_flow(headers={"X-SkillShift-Episode": episode.id})


async def test_the_option_exists_with_its_default(addons: AddonManager) -> None:
    assert ctx.options.ss_upstream_timeout == 60.0
    assert "504" in ctx.options._options["ss_upstream_timeout"].help


async def test_a_timer_starts_on_request_and_stops_at_the_response_headers(
    store: MemoryStore, addons: AddonManager
) -> None:
    flow = await bound_flow(store)
    loop = asyncio.get_running_loop()
    before = loop.time()
    await run_request(addons, flow)
    after = loop.time()
    timer = timers(addons)[flow.id]
    assert before + 60.0 <= timer.when() <= after + 60.0 and not timer.cancelled()
    await run_response(addons, flow, html_response(b"<html></html>"))
    assert timer.cancelled() and flow.id not in timers(addons)
    assert state_of(flow).upstream_timed_out is None


async def test_an_upstream_error_stops_the_timer(store: MemoryStore, addons: AddonManager) -> None:
    flow = await bound_flow(store)
    await run_request(addons, flow)
    timer = timers(addons)[flow.id]
    flow.error = mflow.Error("connection refused")
    await addons.handle_lifecycle(HttpErrorHook(flow))
    assert timer.cancelled() and not timers(addons)


async def test_no_timer_when_disabled_or_already_answered(
    store: MemoryStore, addons: AddonManager
) -> None:
    unbound = request_flow()  # answered 407 by the proxy: nothing goes upstream
    await run_request(addons, unbound)
    assert unbound.response is not None and unbound.response.status_code == 407
    assert not timers(addons)
    ctx.options.update(ss_upstream_timeout=0.0)
    flow = await bound_flow(store)
    await run_request(addons, flow)
    assert flow.response is None and not timers(addons)


async def test_on_expiry_the_flow_is_marked_and_the_clients_wait_ends(
    store: MemoryStore, addons: AddonManager
) -> None:
    ctx.options.update(ss_upstream_timeout=0.01)
    flow = await bound_flow(store)
    flow.live = True
    await run_request(addons, flow)
    assert flow.id in timers(addons)
    for _ in range(100_000):  # wait for the timer to fire (a condition, not a duration)
        if state_of(flow).upstream_timed_out is not None:
            break
        await asyncio.sleep(0.001)
    assert state_of(flow).upstream_timed_out == 0.01 and not timers(addons)
    # No proxy server in this master: the flow itself is killed, so the client is answered.
    assert flow.error is not None and flow.error.msg == mflow.Error.KILLED_MESSAGE


async def test_expiry_after_the_response_changes_nothing(
    store: MemoryStore, addons: AddonManager
) -> None:
    addon = member(addons, "upstreamtimeout")
    flow = await bound_flow(store)
    flow.live = True
    flow.response = html_response(b"<html></html>")
    addon._expire(flow, 5.0)
    assert state_of(flow).upstream_timed_out is None and flow.error is None
