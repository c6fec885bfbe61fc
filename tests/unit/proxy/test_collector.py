"""The body collector in the real addon chain: finished flows that mitmproxy's own layers hold
in reference cycles are freed once their bodies pass the budget, not when Python's collector
gets to them."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import Iterator

import pytest
from mitmproxy import ctx, http
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.context import Context
from mitmproxy.proxy.layers.http import HttpErrorHook, HttpResponseHook, HttpStream
from mitmproxy.test import tflow

from proxy import metrics
from proxy.collector import MAX_SHARE, BodyCollector, held_off
from tests.unit.proxy.conftest import member

MB = 1024 * 1024


@pytest.fixture(autouse=True)
def no_automatic_collection() -> Iterator[None]:
    """Python's own collector off: what frees a flow here is the addon, or nothing. What the
    test process made before is frozen out of the collections' sight, as the service freezes
    what it builds to start: in a whole suite's heap each would take most of a second, and
    the cap would make the test wait nine times that before the next."""
    gc.collect()
    gc.disable()
    gc.freeze()
    yield
    gc.unfreeze()
    gc.enable()


def in_mitmproxy(body_bytes: int) -> tuple[http.HTTPFlow, HttpStream]:
    """A flow with a response body of `body_bytes` and the HTTP stream layer that holds it, as
    mitmproxy holds an exchange: the layer is in a reference cycle of its own (its state is a
    bound method of itself), so once dropped, only a full collection frees it and the flow."""
    flow = tflow.tflow(resp=http.Response.make(200, b"x" * body_bytes))
    stream = HttpStream(Context(tflow.tclient_conn(), ctx.options), 1)
    stream.flow = flow
    return flow, stream


async def finish(addons: AddonManager, body_bytes: int) -> weakref.ref[http.HTTPFlow]:
    """An exchange's `response` hook (its layer in use meanwhile), then the exchange over."""
    flow, stream = in_mitmproxy(body_bytes)
    await addons.handle_lifecycle(HttpResponseHook(flow))
    return weakref.ref(flow)


def collections() -> int:
    return metrics.COUNTERS["full_collections_total"]


async def collectable(addons: AddonManager) -> None:
    """Until the collector may run its next collection (a tenth of the time at most)."""
    collector = member(addons, "bodycollector")
    assert isinstance(collector, BodyCollector)
    while time.monotonic() < collector.earliest_next:
        await asyncio.sleep(collector.earliest_next - time.monotonic())


async def test_mitmproxy_holds_a_finished_flow_until_a_full_collection(
    addons: AddonManager,
) -> None:
    """The premise: without a full collection, a finished flow outlives every reference to it
    but mitmproxy's cycle (the day mitmproxy frees them itself, this fails and the addon can go)."""
    ref = weakref.ref(in_mitmproxy(10)[0])
    assert ref() is not None
    gc.collect()
    assert ref() is None


async def test_finished_flows_are_freed_once_their_bodies_pass_the_budget(
    addons: AddonManager,
) -> None:
    ctx.options.update(ss_collect_after_bytes=3 * MB)
    before = collections()
    first, second = await finish(addons, MB), await finish(addons, MB)
    assert first() is not None and second() is not None and collections() == before
    third = await finish(addons, MB)  # 3 MB held: the budget
    assert collections() == before + 1
    assert first() is None and second() is None
    assert third() is not None  # in use while it was collected: the next collection frees it
    await collectable(addons)
    await finish(addons, 3 * MB)
    assert third() is None and collections() == before + 2
    collector = member(addons, "bodycollector")
    assert isinstance(collector, BodyCollector) and collector.pending_bytes == 0


async def test_request_bodies_count_and_errors_end_flows_too(addons: AddonManager) -> None:
    """An upload is held like a page, and a flow that ended in an error is finished."""
    ctx.options.update(ss_collect_after_bytes=2 * MB)
    before = collections()
    flow, stream = in_mitmproxy(0)
    flow.response = None
    flow.request.content = b"u" * (2 * MB)
    flow.error = tflow.terr()
    await addons.handle_lifecycle(HttpErrorHook(flow))
    ref = weakref.ref(flow)
    del flow, stream
    assert collections() == before + 1 and ref() is not None  # (in use while collected)
    await collectable(addons)
    await finish(addons, 2 * MB)
    assert collections() == before + 2 and ref() is None


async def test_a_streamed_body_is_not_counted(addons: AddonManager) -> None:
    """A body passed through in chunks is not kept by mitmproxy (its content is None)."""
    ctx.options.update(ss_collect_after_bytes=MB)
    before = collections()
    for _ in range(3):
        flow, _ = in_mitmproxy(0)
        assert flow.response is not None
        flow.response.stream = True
        flow.response.raw_content = None
        await addons.handle_lifecycle(HttpResponseHook(flow))
    assert collections() == before


async def test_a_budget_of_zero_leaves_flows_to_python(addons: AddonManager) -> None:
    ctx.options.update(ss_collect_after_bytes=0)
    before = collections()
    refs = [await finish(addons, MB) for _ in range(8)]
    assert collections() == before and all(ref() is not None for ref in refs)


async def test_the_option_exists_with_its_default(addons: AddonManager) -> None:
    assert ctx.options.ss_collect_after_bytes == 32 * MB
    assert "garbage collection" in ctx.options._options["ss_collect_after_bytes"].help


async def test_collections_take_at_most_a_tenth_of_the_time(addons: AddonManager) -> None:
    """A collection that took 0.1 s of CPU (on a clock the test turns) holds the next one off
    for 0.9 s, however many bytes pile up meanwhile; then the next finished flow runs it."""
    now = [100.0]
    runs: list[float] = []

    def slow_collection() -> None:
        runs.append(now[0])
        now[0] += 0.1

    collector = BodyCollector(now=lambda: now[0], cpu_time=lambda: now[0], collect=slow_collection)
    ctx.options.update(ss_collect_after_bytes=MB)
    flows = [tflow.tflow(resp=http.Response.make(200, b"x" * MB)) for _ in range(4)]
    for flow in flows:
        flow.request.content = b""
    collector.response(flows[0])
    assert runs == [100.0] and MAX_SHARE == 0.1
    now[0] = 100.9  # (0.8 s after the collection ended)
    collector.response(flows[1])
    collector.response(flows[2])
    assert runs == [100.0] and collector.pending_bytes == 2 * MB
    now[0] = 101.0  # 0.9 s after
    collector.response(flows[3])
    assert runs == [100.0, 101.0] and collector.pending_bytes == 0


def test_collections_held_off_by_overlapping_shifts_resume_when_the_last_ends() -> None:
    """Shifts in worker threads overlap: the first to start holds Python's collections off,
    the last to end lets them run again (and none turns them on if they were off)."""
    import threading

    gc.enable()  # (this module's fixture turns them off; it turns them off again after)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with held_off():
            first_in.set()
            second_in.wait()
        seen.append(gc.isenabled())  # the second still runs
        first_out.set()

    def second() -> None:
        first_in.wait()
        with held_off():
            second_in.set()
            first_out.wait()
            seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [False, False] and gc.isenabled()
    gc.disable()
    with held_off():
        assert not gc.isenabled()
    assert not gc.isenabled()  # off before: still off
