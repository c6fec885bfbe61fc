"""Finished exchanges freed as the proxy goes, not hundreds of page loads later.

mitmproxy keeps each exchange in reference cycles: its protocol layers hold their next state as
bound methods and generators of themselves, and a layer holds its flow. So a finished flow, with
its request and response bodies, is freed only by a full run of Python's cyclic garbage
collector, and Python starts one by counting objects, not bytes: on a proxy's heap, hundreds of
loads apart. 32 clients loading a 1 MB page with a fresh token held 880 MB in the service (580 MB
in plain mitmproxy), almost all of it finished flows' bodies; collected every 0.2 s, 250 MB (and
130 MB).

This addon counts the bytes of the bodies flows held (request and response, as buffered) since
the last full collection, and runs one when they pass `ss_collect_after_bytes`: the memory
finished exchanges hold is bounded by that budget, whatever the traffic. A collection runs on
the event loop, between exchanges, and walks every live object the process made since it
started (a big shifted-page cache's change maps are many), so it is held to `MAX_SHARE` of the
process's time: after one that took t of CPU, the next waits at least t * (1 / MAX_SHARE - 1),
the bodies piling up meanwhile. The metrics say how often and for how long
(`full_collections_total`, `full_collection_us_total`: their CPU time).

While a page is shifted, Python's own collections are held off (`held_off`): a shift makes
tens of thousands of objects (a proxy per element it looks at, its locators before and
after) that all live until it ends, and Python, counting them, ran full collections in the
middle of it that found nothing to free: 50 of a 200 KB page's 170 ms, 240 of a 2 MB page's
1.8 s. What they make is freed by reference counting when the shift ends (a shift makes no
reference cycle: a test holds it to that); cycles made meanwhile elsewhere wait for the next
collection, which for finished exchanges is this addon's. What a shift keeps, the shifted page's
state in the shifted-page cache (its change map: thousands of containers on a long page), is
out of the collections' sight (`shifts.native.untrack`): a full collection with 60 pages of 200
KB and 2,000 controls cached walked them in 390 ms, and takes 36 without them.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator

from mitmproxy import ctx, http

from proxy import metrics
from proxy.flowstate import state_of
from proxy.options import add_options

# The most of the process's time full collections may take: a tenth (one of 20 ms of CPU
# holds the next off for 180 ms). Under a 1 MB page at c=32 they take a twentieth, and the
# byte budget decides; a process whose heap makes them far dearer collects less often.
MAX_SHARE = 0.1


class BodyCollector:
    def __init__(
        self,
        now: Callable[[], float] = time.monotonic,
        cpu_time: Callable[[], float] = time.thread_time,
        collect: Callable[[], object] = gc.collect,
    ) -> None:
        self.pending_bytes = 0  # held by flows finished since the last full collection
        self.earliest_next = 0.0  # (`now`) when the next collection may run, at the earliest
        self._now, self._cpu_time, self._collect = now, cpu_time, collect

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(loader, "ss_collect_after_bytes")

    def response(self, flow: http.HTTPFlow) -> None:
        self._finished(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._finished(flow)

    def _finished(self, flow: http.HTTPFlow) -> None:
        budget = ctx.options.ss_collect_after_bytes
        if budget <= 0:
            return
        self.pending_bytes += held_bytes(flow)
        if self.pending_bytes >= budget and self._now() >= self.earliest_next:
            self.collect()

    def collect(self) -> None:
        """One full collection (this flow's bodies are still in use: the ones before it go)."""
        self.pending_bytes = 0
        started = self._cpu_time()
        self._collect()
        # Its CPU, not the time it took: two busy cores make a pause longer, not dearer.
        took = self._cpu_time() - started
        self.earliest_next = self._now() + took * (1 / MAX_SHARE - 1)
        metrics.inc("full_collections_total")
        metrics.inc("full_collection_us_total", round(took * 1e6))


def held_bytes(flow: http.HTTPFlow) -> int:
    """The bytes of bodies a flow holds: its request's and response's as buffered (a streamed
    body's content is None: it passed through in chunks), and what was kept of a streamed
    body for its recording (the recorder's copy, a streamed page's source: `ShiftedStart`)."""
    held = len(flow.request.raw_content or b"")
    response = flow.response
    if response is not None:
        held += len(response.raw_content or b"")
    state = state_of(flow)
    if state.planned is not None and state.planned.stream is not None:
        held += state.planned.stream.kept_bytes
    return held + sum(map(len, state.recorded_body or ()))


_holding = 0  # shifts under way (in the event loop and in worker threads)
_resume = False  # whether automatic collections were on when the first of them started
_holding_lock = threading.Lock()


@contextlib.contextmanager
def held_off() -> Iterator[None]:
    """Python's automatic collections off while this runs (and any other held off at once);
    on again, if they were on, when the last ends. Explicit `gc.collect()` still runs."""
    global _holding, _resume
    with _holding_lock:
        if _holding == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holding += 1
    try:
        yield
    finally:
        with _holding_lock:
            _holding -= 1
            if _holding == 0 and _resume:
                gc.enable()
