from __future__ import annotations

import gzip
import json
import time

import pytest
from mitmproxy import ctx, http
from mitmproxy import flow as mitmproxy_flow
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpErrorHook, HttpResponseHeadersHook
from mitmproxy.test import taddons

from proxy import build_addons
from proxy.episode import EpisodeConfig, new_episode
from proxy.flowstate import state_of
from proxy.rewrite import BUFFER, PASS, STREAM
from proxy.store import MemoryStore
from tests.helpers.fixtures import fixture_pages
from tests.helpers.pages import RELABEL_ONLY, page
from tests.unit.proxy.conftest import (
    exchange,
    html_response,
    make_episode,
    member,
    request_flow,
    run_request,
    run_response,
)

PAGE = (
    b"<!DOCTYPE html><html><head><title>x</title></head>"
    b"<body><a href='/l'>Sign in</a></body></html>"
)
NAV = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}


async def serve(
    addons: AddonManager,
    episode,
    response: http.Response,  # type: ignore[no-untyped-def]
    headers: dict[str, str] | None = None,
    path: str = "/",
) -> http.HTTPFlow:
    flow = request_flow(path, headers={"X-SkillShift-Episode": episode.id, **(headers or NAV)})
    await run_request(addons, flow)
    assert flow.response is None
    await run_response(addons, flow, response)
    return flow


async def test_src_page_is_byte_exact_and_streamed(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, condition="Src")
    flow = await serve(addons, episode, html_response(PAGE, ETag='"e"'))
    assert state_of(flow).rewrite == PASS and flow.response.stream
    assert flow.response.headers["ETag"] == '"e"'
    # Unshifted navigations are still audited, with the same load indices as shifted ones.
    (served,) = await store.read_events(episode.id)
    assert (served["type"], served["changed"], served["load_index"]) == ("page_served", False, 1)


async def test_exec_navigation_gets_runtime_nonce_and_no_store(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    response = html_response(
        PAGE,
        ETag='"e"',
        **{"Last-Modified": "x", "Content-Security-Policy": "script-src 'self'; style-src 'self'"},
    )
    flow = await serve(addons, episode, response)
    body = flow.response.content
    nonce = episode.nonce_for("http://site.test/")
    assert f'<script nonce="{nonce}" src="/__ss/r.js'.encode() in body
    policy = flow.response.headers["Content-Security-Policy"]
    assert policy == f"script-src 'self' 'nonce-{nonce}'; style-src 'self' 'nonce-{nonce}'"
    assert flow.response.headers["Cache-Control"] == "no-store"
    assert "ETag" not in flow.response.headers and "Last-Modified" not in flow.response.headers
    types = [event["type"] for event in await store.read_events(episode.id)]
    assert types == ["page_served", "popup_injected"]


async def test_gzip_page_is_reencoded(store: MemoryStore, addons: AddonManager) -> None:
    episode = await make_episode(store, **RELABEL_ONLY)
    response = html_response(b"", **{"Content-Encoding": "gzip"})
    response.raw_content = gzip.compress(PAGE)
    flow = await serve(addons, episode, response)
    assert flow.response.headers["Content-Encoding"] == "gzip"
    assert b">Log in</a>" in gzip.decompress(flow.response.raw_content)
    assert int(flow.response.headers["Content-Length"]) == len(flow.response.raw_content)


async def test_conditional_headers_stripped_for_documents_only(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, **RELABEL_ONLY)
    conditional = {
        "If-None-Match": '"e"',
        "If-Modified-Since": "x",
        "Accept-Encoding": "gzip, dcb, br",
    }
    doc = request_flow(headers={"X-SkillShift-Episode": episode.id, **NAV, **conditional})
    await run_request(addons, doc)
    assert (
        "If-None-Match" not in doc.request.headers
        and "If-Modified-Since" not in doc.request.headers
    )
    assert doc.request.headers["Accept-Encoding"] == "gzip, br"
    image = request_flow(
        headers={"X-SkillShift-Episode": episode.id, "Sec-Fetch-Dest": "image", **conditional}
    )
    await run_request(addons, image)
    assert image.request.headers["If-None-Match"] == '"e"'


async def test_fragments_error_pages_and_non_html_never_get_popups(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    fragment = await serve(
        addons,
        episode,
        html_response(PAGE),
        headers={"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors"},
    )
    assert fragment.response.content == PAGE
    missing = await serve(addons, episode, html_response(PAGE, status=404))
    assert missing.response.status_code == 404 and b"/__ss/r.js" in missing.response.content
    json_flow = await serve(
        addons, episode, http.Response.make(200, b"{}", {"Content-Type": "application/json"})
    )
    assert json_flow.response.stream
    assert not [e for e in await store.read_events(episode.id) if e["type"] == "popup_injected"]


def untyped(body: bytes, *values: str, **headers: str) -> http.Response:
    """A response with the Content-Type values given (none: no header at all)."""
    response = http.Response.make(200, body, headers)
    response.headers.pop("content-type", None)
    for value in values:
        response.headers.add("Content-Type", value)
    return response


@pytest.mark.parametrize(
    "response",
    [
        pytest.param(untyped(PAGE), id="no type"),
        pytest.param(untyped(b"\n  " + PAGE.lower()), id="no type, lower case"),
        pytest.param(untyped(PAGE, "unknown/unknown"), id="unknown/unknown"),
        pytest.param(untyped(PAGE, "nonsense"), id="no type/subtype"),
        pytest.param(untyped(PAGE, "text/plain", "text/html"), id="two, the last html"),
        pytest.param(untyped(PAGE, "text/plain, text/html"), id="two in one, the last html"),
        # `*/*` is no type a browser reads: the one before it is (a body that does not sniff).
        pytest.param(untyped(b"Welcome. " + PAGE, "text/html, */*"), id="html, then */*"),
    ],
)
async def test_a_page_a_browser_sniffs_as_html_is_shifted(
    store: MemoryStore, addons: AddonManager, response: http.Response
) -> None:
    """Chromium renders a navigation's body of no type as HTML if it sniffs as HTML, and of
    several types reads the last: the page it shows is the episode's."""
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    flow = await serve(addons, episode, response)
    assert b"/__ss/r.js" in flow.response.content
    types = [event["type"] for event in await store.read_events(episode.id)]
    assert types == ["page_served", "popup_injected"]


@pytest.mark.parametrize(
    "response, headers",
    [
        pytest.param(untyped(b"%PDF-1.4 ..."), NAV, id="no type, not html"),
        pytest.param(untyped(PAGE, "text/html", "text/plain"), NAV, id="two, the last text"),
        pytest.param(untyped(PAGE, **{"X-Content-Type-Options": "nosniff"}), NAV, id="nosniff"),
        pytest.param(
            untyped(PAGE), {"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors"}, id="a fetch"
        ),
    ],
)
async def test_what_a_browser_does_not_render_as_html_is_not_shifted(
    store: MemoryStore, addons: AddonManager, response: http.Response, headers: dict[str, str]
) -> None:
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    body = response.content
    flow = await serve(addons, episode, response, headers=headers)
    assert flow.response.content == body
    assert not [e for e in await store.read_events(episode.id) if e["type"] == "popup_injected"]


async def test_a_navigation_of_no_type_counts_as_a_load_shifted_or_not(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Load indices are the same under every condition (popups are planned by them)."""
    for condition in ("Src", "Src-Exec"):
        episode = await make_episode(store, condition=condition, regime="multiple")
        for body in (b"%PDF-1.4 ...", PAGE):
            await serve(addons, episode, untyped(body))
        loads = [
            e["load_index"]
            for e in await store.read_events(episode.id)
            if e["type"] == "page_served"
        ]
        assert loads == [1, 2], condition


async def test_once_injects_on_the_first_load_only(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, condition="Src-Exec", regime="once")
    bodies = [
        (await serve(addons, episode, html_response(PAGE))).response.content for _ in range(3)
    ]
    assert b"&quot;p&quot;:{" in bodies[0]
    assert all(b"&quot;p&quot;:null" in body for body in bodies[1:])
    injected = [e for e in await store.read_events(episode.id) if e["type"] == "popup_injected"]
    assert len(injected) == 1 and injected[0]["load_index"] == 1


async def test_random_regime_records_every_draw(store: MemoryStore, addons: AddonManager) -> None:
    episode = await make_episode(
        store,
        condition="Src-Exec",
        regime="random",
        regime_params={"p": 0.5, "min_ms": 10, "max_ms": 20},
        seed=3,
    )
    for _ in range(6):
        await serve(addons, episode, html_response(PAGE))
    events = await store.read_events(episode.id)
    draws = [e for e in events if e["type"] == "random_draw"]
    assert [d["load_index"] for d in draws] == [1, 2, 3, 4, 5, 6]
    injected = [e["load_index"] for e in events if e["type"] == "popup_injected"]
    assert injected == [d["load_index"] for d in draws if d["fired"]]


async def test_suspended_episode_passes_pages_through(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, **RELABEL_ONLY)
    record = episode.model_dump(mode="json") | {"suspended": True}
    await store.update_episode(episode.id, record)
    flow = await serve(addons, episode, html_response(PAGE))
    assert flow.response.stream and flow.response.content == PAGE


async def test_undecodable_body_fails_closed(store: MemoryStore, addons: AddonManager) -> None:
    episode = await make_episode(store, **RELABEL_ONLY)
    response = html_response(b"", **{"Content-Encoding": "gzip"})
    response.raw_content = gzip.compress(PAGE)[:40]
    flow = await serve(addons, episode, response)
    assert flow.response.status_code == 502
    assert b"Sign in" not in flow.response.content


async def test_a_page_past_what_the_parser_reads_fails_closed_saying_why(
    store: MemoryStore, addons: AddonManager
) -> None:
    """libxml2 stops at 2,048 levels of nesting: what is deeper would be dropped, so the page
    is neither served cut short nor unshifted."""
    episode = await make_episode(store, **RELABEL_ONLY)
    deep = b"<html><body>" + b"<div>" * 3000 + b"<a href='/l'>Sign in</a>" + b"</div>" * 3000
    flow = await serve(addons, episode, html_response(deep + b"</body></html>"))
    assert flow.response.status_code == 502 and b"Sign in" not in flow.response.content
    assert b"deeper than the parser reads" in flow.response.content
    (error,) = [e for e in await store.read_events(episode.id) if e["type"] == "rewrite_error"]
    assert "deeper than the parser reads" in error["reason"]


async def test_oversized_page_is_streamed_and_recorded(
    store: MemoryStore, addons: AddonManager
) -> None:
    ctx.options.update(ss_max_rewrite_bytes=10)
    episode = await make_episode(store, **RELABEL_ONLY)
    flow = await serve(addons, episode, html_response(PAGE))
    assert flow.response.stream
    # A load all the same, as under the unshifted conditions: the loads after it have the
    # indices (and popups) they have there.
    events = await store.read_events(episode.id)
    assert [e["type"] for e in events] == ["rewrite_skipped", "page_served"]
    assert events[1]["load_index"] == 1


async def test_contextual_routes_and_maps_redirects_back(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(
        store, condition="Tgt", targets={"http://site.test": "http://127.0.0.1:9001"}
    )
    flow = request_flow("/a", headers={"X-SkillShift-Episode": episode.id, **NAV})
    await run_request(addons, flow)
    assert (flow.request.host, flow.request.port) == ("127.0.0.1", 9001)
    redirect = http.Response.make(302, b"", {"Location": "http://127.0.0.1:9001/b"})
    await run_response(addons, flow, redirect)
    assert flow.response.headers["Location"] == "http://site.test/b"


async def test_big_pages_shift_off_the_event_loop_to_the_same_bytes(
    store: MemoryStore, addons: AddonManager
) -> None:
    import threading

    from proxy import rewrite

    threads: list[str] = []
    original = rewrite.shift_document

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    rewrite.shift_document = spy  # type: ignore[assignment]
    try:
        bodies = []
        episode = await make_episode(store, condition="Src-Perc", seed=3)
        for offload in (10**9, 0):  # inline, then in a worker thread
            ctx.options.update(ss_offload_bytes=offload)
            await store.reset_episode(episode.id)  # the same first load again
            bodies.append((await serve(addons, episode, html_response(PAGE))).response.content)
    finally:
        rewrite.shift_document = original  # type: ignore[assignment]
    main = threading.current_thread().name
    assert threads[0] == main and threads[1] != main
    # The same load of the same episode: the same bytes wherever the shift ran.
    assert bodies[0] == bodies[1] and bodies[0] != PAGE


async def test_the_proxys_own_pages_are_no_pages_of_the_episode(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A refused upstream's 403 page (a desktop browser's background request, say) gets no
    runtime, no popup, no page_served and no load index: only upstream pages count, so the
    agent's load indices (and with them `random` draws) are what its own navigations make."""
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    ctx.options.update(ss_upstream_allow="allowed.test")
    refused = request_flow(headers={"X-SkillShift-Episode": episode.id, **NAV})
    await run_request(addons, refused)
    assert refused.response is not None and refused.response.status_code == 403
    assert b"__ss/r.js" not in refused.response.content
    assert await store.read_events(episode.id) == []
    assert await store.get_counters(episode.id) == {}
    # The next real page is the episode's first.
    refused_ok = request_flow(headers={"X-SkillShift-Episode": episode.id, **NAV})
    refused_ok.request.host = "allowed.test"
    await run_request(addons, refused_ok)
    assert refused_ok.response is None
    await run_response(addons, refused_ok, html_response(PAGE))
    (served, injected) = await store.read_events(episode.id)
    assert (served["type"], served["load_index"]) == ("page_served", 1)
    assert injected["type"] == "popup_injected"


async def test_a_fragment_is_shifted_against_what_its_page_was_in_this_episode(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A fragment uses the records its page (its Referer) was shifted against in the same
    episode, or, from a route its router pushed or a same-origin page that sends no Referer,
    those of the episode's pages of that origin; one from an origin this episode never loaded
    a page of, or that names no page and is no same-origin fetch, is served without drift and
    says why (never a record some other episode learnt)."""
    episode = await make_episode(store, condition="Src-Perc")
    page = await serve(addons, episode, html_response(PAGE), path="/app")
    fetch = {"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors"}
    part = html_response(b"<div><a class='more' href='/m'>More</a></div>")
    fragment = await serve(
        addons, episode, part, headers={**fetch, "Referer": "http://site.test/app#top"}
    )
    assert state_of(fragment).knowledge.records == state_of(page).knowledge.records
    assert state_of(fragment).knowledge.refs is not None
    # A route the app's router pushed (WordPress's block editor: `post.php?post=N` after
    # `post-new.php`) is no page the episode loaded: its code is the origin's pages'.
    pushed = await serve(
        addons, episode, part, headers={**fetch, "Referer": "http://site.test/app/item/7"}
    )
    assert state_of(pushed).knowledge.records == state_of(page).knowledge.records
    assert state_of(pushed).knowledge.refs is not None
    # ... and its page_served says whose records they are.
    assert state_of(pushed).knowledge.note()["records_of"] == "origin"
    assert "records_of" not in state_of(fragment).knowledge.note()
    # A page that sends no Referer (phpMyAdmin's `Referrer-Policy: no-referrer`): its browser
    # still says whether the fetch is same-origin.
    same_origin = {**fetch, "Sec-Fetch-Site": "same-origin"}
    unreferred = await serve(addons, episode, part, headers=same_origin, path="/ajax")
    assert state_of(unreferred).knowledge.records == state_of(page).knowledge.records
    assert state_of(unreferred).knowledge.note()["records_of"] == "origin"
    cross = {**fetch, "Sec-Fetch-Site": "cross-site"}
    assert (
        state_of(await serve(addons, episode, part, headers=cross, path="/x")).knowledge.refs
        is None
    )
    other = await make_episode(store, condition="Src-Perc")  # never loaded /app
    orphan = await serve(
        addons, other, part, headers={**fetch, "Referer": "http://site.test/app"}, path="/part"
    )
    anonymous = await serve(addons, other, part, headers=fetch, path="/part")
    assert orphan.response.status_code == anonymous.response.status_code == 200
    reasons = [
        e["reason"] for e in await store.read_events(other.id) if e["type"] == "knowledge_error"
    ]
    assert len(reasons) == 2
    assert "was not loaded in this episode" in reasons[0] and "without a Referer" in reasons[1]


async def test_a_fragment_fetched_by_a_page_of_another_origin_gets_no_records_of_this_one(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A fragment of site.test fetched by app.test's page (CORS) is inserted by app.test's
    code: the records of the episode's site.test pages hold none of it, so it is served
    without drift and says why, as a page the episode never loaded is."""
    episode = await make_episode(store, condition="Src-Perc")
    await serve(addons, episode, html_response(PAGE), path="/app")
    fetch = {"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "cross-site"}
    part = html_response(b"<div><a class='more' href='/m'>More</a></div>")
    fragment = await serve(
        addons, episode, part, headers={**fetch, "Referer": "http://app.test/inbox"}, path="/part"
    )
    assert state_of(fragment).knowledge.refs is None
    errors = [e for e in await store.read_events(episode.id) if e["type"] == "knowledge_error"]
    assert len(errors) == 1 and "was not loaded in this episode" in errors[0]["reason"]


@pytest.mark.parametrize("seed", range(6))
async def test_a_fragment_comes_back_as_a_fragment_its_first_tag_its_own(
    store: MemoryStore, addons: AddonManager, seed: int
) -> None:
    """WordPress's Quick Edit inserts the `<tr>` an XHR answers with jQuery, which parses it
    by its first tag: written as `<html><body><tr>` (or a wrapper's `<style>` first), the row's
    tags were dropped and the list lost its row, on every seed."""
    episode = await make_episode(store, condition="Src-Perc", seed=seed)
    await serve(addons, episode, html_response(PAGE), path="/app")
    fetch = {"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Referer": "http://site.test/app"}
    row = (
        b'<tr id="post-5" class="iedit author-self"><td class="title"><strong>'
        b'<a class="row-title" href="/p/5">Lemon</a></strong><div class="row-actions">'
        b'<span class="edit"><a href="/e/5">Edit</a></span></div></td></tr>\n'
    )
    flow = await serve(addons, episode, html_response(row), headers=fetch, path="/ajax")
    assert flow.response.content.startswith(b"<tr "), flow.response.content[:80]
    assert b"<html" not in flow.response.content and b"<style" not in flow.response.content


class CountingStore(MemoryStore):
    """The memory store, counting the calls the proxy makes of it: on Redis each is a round
    trip, about 0.2 ms of the proxy's CPU."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    async def incr_counter(self, episode_id: str, counter: str, expires_at: int) -> int:
        self.calls.append("incr_counter")
        return await super().incr_counter(episode_id, counter, expires_at)

    async def claim_flag(self, episode_id: str, flag: str, expires_at: int) -> bool:
        self.calls.append("claim_flag")
        return await super().claim_flag(episode_id, flag, expires_at)

    async def append_event(self, episode_id: str, event: dict, expires_at: int) -> str | None:  # type: ignore[type-arg]
        self.calls.append("append_event")
        return await super().append_event(episode_id, event, expires_at)

    async def append_events(
        self,
        episode_id: str,
        events: list[dict],  # type: ignore[type-arg]
        expires_at: int,
    ) -> list[str] | None:
        self.calls.append("append_events")
        ids = []
        for item in events:  # not through append_event: that one is counted as a call
            ids.append(await MemoryStore.append_event(self, episode_id, item, expires_at))
        return ids  # type: ignore[return-value]


@pytest.mark.parametrize("regime", ["once", "multiple", "random"])
async def test_a_page_load_writes_its_events_in_one_store_call(regime: str) -> None:
    store = CountingStore()
    with taddons.context(*build_addons(store)) as context:
        context.options.update(ss_learn="static")
        addons = context.master.addons
        episode = await make_episode(
            store, condition="Src-Exec", regime=regime, regime_params={"p": 1.0}, seed=1
        )
        for served_before in range(3):
            store.calls.clear()
            flow = request_flow("/", headers={"X-SkillShift-Episode": episode.id, **NAV})
            await run_request(addons, flow)
            await run_response(addons, flow, html_response(PAGE))
            # Its load index, then (`once` until spent) the claim, then every event at once.
            claims = ["claim_flag"] if regime == "once" and served_before == 0 else []
            assert store.calls == ["incr_counter", *claims, "append_events"]
        events = await store.read_events(episode.id)
        served = [e["load_index"] for e in events if e["type"] == "page_served"]
        assert served == [1, 2, 3]
        # Still in the order they happened: the draw, the page, its popup.
        if regime == "random":
            order = [e["type"] for e in events if e["load_index"] == 2]
            assert order == ["random_draw", "page_served", "popup_injected"]


async def test_once_is_asked_of_the_store_until_spent_and_again_after_a_reset() -> None:
    store = CountingStore()
    with taddons.context(*build_addons(store)) as context:
        context.options.update(ss_learn="static")
        addons = context.master.addons
        episode = await make_episode(store, condition="Src-Exec", regime="once")

        async def load() -> bool:
            flow = request_flow("/", headers={"X-SkillShift-Episode": episode.id, **NAV})
            await run_request(addons, flow)
            await run_response(addons, flow, html_response(PAGE))
            assert flow.response is not None
            return b"&quot;p&quot;:{" in flow.response.content

        store.calls.clear()
        assert [await load() for _ in range(3)] == [True, False, False]
        assert store.calls.count("claim_flag") == 1  # spent: never asked again
        # A reset starts a new run of the episode (its generation), whose `once` is not spent:
        # asked again, and shown again.
        record = await store.get_episode(episode.id)
        assert record is not None
        await store.reset_episode(episode.id)
        await store.update_episode(episode.id, {**record, "generation": 1})
        assert [await load() for _ in range(2)] == [True, False]
        assert store.calls.count("claim_flag") == 2


@pytest.mark.parametrize("collect_after_bytes", [32 * 1024 * 1024, 0])
async def test_no_collection_runs_in_the_middle_of_a_shift_while_the_collector_runs(
    store: MemoryStore, addons: AddonManager, collect_after_bytes: int
) -> None:
    """Python's automatic collections are held off while a page is shifted when full ones
    run by bytes of bodies (proxy/collector.py), and left to Python when those are off."""
    import gc

    from proxy import rewrite

    during: list[int] = []  # the collections Python started while a shift ran
    shifting = False
    original = rewrite.shift_document

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal shifting
        shifting = True
        try:
            return original(*args, **kwargs)
        finally:
            shifting = False

    def counted(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and shifting:
            during.append(info["generation"])

    thresholds = gc.get_threshold()
    rewrite.shift_document = spy  # type: ignore[assignment]
    gc.callbacks.append(counted)
    gc.set_threshold(1)  # a collection at every allocation Python counts
    try:
        ctx.options.update(ss_collect_after_bytes=collect_after_bytes)
        episode = await make_episode(store, condition="Src-Perc", seed=3)
        flow = await serve(addons, episode, html_response(PAGE))
    finally:
        gc.set_threshold(*thresholds)
        gc.callbacks.remove(counted)
        rewrite.shift_document = original  # type: ignore[assignment]
    assert flow.response.content != PAGE and gc.isenabled()
    assert (during == []) == (collect_after_bytes > 0), during


async def test_a_page_refused_for_want_of_knowledge_is_no_load_of_the_episode(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A navigation answered 503 (its knowledge could not be had) does not use up a load
    index: the loads after it are numbered, and shifted, as a run without it numbers them."""
    episode = await make_episode(store, condition="Src-Perc", seed=3)
    ctx.options.update(ss_learn="off")  # (nothing learns the page: it cannot be shifted)
    refused = await serve(addons, episode, html_response(PAGE))
    assert refused.response.status_code == 503 and "knowledge" in refused.response.text
    ctx.options.update(ss_learn="static")
    served = await serve(addons, episode, html_response(PAGE))
    assert served.response.status_code == 200
    loads = [e["load_index"] for e in await store.read_events(episode.id) if "load_index" in e]
    assert loads == [1], loads


FETCH = {"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors", "Referer": "http://site.test/app"}
SCREEN = (
    '<div class="panel"><a id="edit-1" class="edit-link" data-testid="edit-row" href="/e/1">Edit'
    '</a><button id="save" class="btn primary" type="button">Save</button>'
    '<input class="note" name="note" data-testid="note"></div>'
)


def json_response(body: bytes, status: int = 200, **headers: str) -> http.Response:
    return http.Response.make(status, body, {"Content-Type": "application/json", **headers})


@pytest.mark.parametrize("seed", range(4))
async def test_markup_a_json_answer_carries_is_shifted_as_its_pages_fragments_are(
    store: MemoryStore, addons: AddonManager, seed: int
) -> None:
    """phpMyAdmin answers every screen after the first with JSON, the screen's markup in
    `message`: served as it came, a `-Perc` episode was `Src` from the second screen on. The
    markup is shifted as the same markup fetched as an HTML fragment is, and the rest of the
    answer, what an editor saves back (`raw`) included, is the upstream's bytes."""
    episode = await make_episode(store, condition="Src-Perc", seed=seed)
    await serve(addons, episode, html_response(PAGE), path="/app")
    answer = json.dumps(
        {"success": True, "message": SCREEN, "draft": {"raw": SCREEN}, "price": 1.50, "n": 10**20}
    ).encode()
    flow = await serve(
        addons, episode, json_response(answer, ETag='"a"'), headers=FETCH, path="/ajax"
    )
    served = flow.response.content
    fragment = await serve(addons, episode, html_response(SCREEN.encode()), headers=FETCH)
    message = json.loads(served)["message"]
    assert message != SCREEN and message.encode() == fragment.response.content
    before, after = answer.split(b'"message": ', 1)[0], answer.split(b', "draft"', 1)[1]
    assert served.startswith(before) and served.endswith(b', "draft"' + after)
    assert (
        flow.response.headers["cache-control"] == "no-store" and "etag" not in flow.response.headers
    )
    record = state_of(flow).page
    assert record["source"] == answer and record["changes"]["elements"]
    assert record["shifts"]["locator_drift"]["interactive"] == 3
    (event, _) = [
        e for e in await store.read_events(episode.id) if e.get("url", "").endswith(("/ajax", "/"))
    ][-2:]
    assert event["kind"] == "fragment" and event["changed"] is True
    # (the editor's source beside it went out as it came, and the log says where it was)
    assert event["markup_strings"] == {"found": 1, "changed": 1, "left": {"raw": 1}}


async def test_json_answers_with_no_markup_to_shift_go_out_as_they_came(
    store: MemoryStore, addons: AddonManager
) -> None:
    """An answer of no markup, of no JSON, of no text in its charset, JSON opened as a page
    (the browser shows its text), and any answer of an episode whose shifts do not parse: the
    upstream's bytes, and no page served (an app's API calls are no pages of the episode)."""
    drifted = await make_episode(store, condition="Src-Perc")
    await serve(addons, drifted, html_response(PAGE), path="/app")
    markup = json.dumps({"html": SCREEN}).encode()
    for body, headers in [
        (b'{"id": 3, "name": "<none>", "html": "a < b"}', FETCH),
        (b'cb({"html": "<p>x</p>"})', FETCH),
        (b'{"html": "<p>\xff</p>"}', FETCH),
        (markup, NAV),
    ]:
        flow = await serve(addons, drifted, json_response(body), headers=headers, path="/api")
        assert flow.response.content == body
    assert [
        e["url"] for e in await store.read_events(drifted.id) if e["type"] == "page_served"
    ] == ["http://site.test/app"]
    for condition in ("Src", "Src-Exec"):
        episode = await make_episode(store, condition=condition)
        flow = await serve(addons, episode, json_response(markup), headers=FETCH, path="/api")
        assert state_of(flow).rewrite == PASS and flow.response.stream


async def test_an_answer_whose_markup_no_rule_reads_goes_out_as_it_came_and_says_so(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Markup under keys no rule reads (an editor's source, a screen under a key the service
    does not know): the upstream's bytes, no page served, and a `markup_left` naming the keys,
    so a drift that left an app's screens alone does not look like one that ran."""
    episode = await make_episode(store, condition="Src-Perc")
    await serve(addons, episode, html_response(PAGE), path="/app")
    body = json.dumps(
        {"list": SCREEN, "rows": [SCREEN, "<li>2</li>", 3], "title": "a < b", "raw": " <p>x</p>"}
    ).encode()
    flow = await serve(addons, episode, json_response(body), headers=FETCH, path="/api")
    assert flow.response.content == body and state_of(flow).page is None
    events = await store.read_events(episode.id)
    assert [e["url"] for e in events if e["type"] == "page_served"] == ["http://site.test/app"]
    (left,) = [e for e in events if e["type"] == "markup_left"]
    assert left["url"] == "http://site.test/api"
    assert left["keys"] == {"list": 1, "rows": 2, "raw": 1}


async def test_markup_strings_any_json_text_may_hold_are_served_shifted(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A string written raw under a charset that cannot hold all it escapes: served shifted
    (escaped to ASCII), and a string holding a lone surrogate (`\\ud83d`: a script's truncated
    emoji, which JSON writes and a browser reads) as it came, beside one shifted: not a 502
    for a `UnicodeEncodeError`."""
    episode = await make_episode(store, condition="Src-Perc")
    await serve(addons, episode, html_response(PAGE), path="/app")
    escaped = json.dumps(SCREEN)[1:-1]
    for body, charset in [
        (f'{{"menu": "<p>\\ud83d cut</p>", "html": "{escaped}"}}'.encode(), "utf-8"),
        (f'{{"html": "{escaped}<p>caf\u00e9 \\u4e2d</p>"}}'.encode("latin-1"), "iso-8859-1"),
    ]:
        answer = json_response(body, **{"Content-Type": f"application/json; charset={charset}"})
        flow = await serve(addons, episode, answer, headers=FETCH, path="/api")
        assert flow.response.status_code == 200, flow.response.content
        served, upstream = (
            json.loads(text.decode(charset)) for text in (flow.response.content, body)
        )
        assert served["html"] != upstream["html"]
        assert served["html"].endswith(upstream["html"][len(SCREEN) :])
        assert served.get("menu") == upstream.get("menu")


async def test_each_markup_string_of_an_answer_has_its_per_request_values_swapped_in(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Two strings of an answer that each carry a fresh token (a screen and its menu): each
    next answer's string is its predecessor's shifted state with the new values swapped in,
    not shifted whole because the other string was the last one shifted."""
    shifted = member(addons, "pagerewriter").shifted  # type: ignore[attr-defined]
    episode = await make_episode(store, condition="Src-Perc")
    await serve(addons, episode, html_response(PAGE), path="/app")
    screen = SCREEN.replace("</div>", '<input type="hidden" name="token" value="{}"></div>')
    menu = '<ul id="topmenu"><li class="tab"><a href="/x?token={}">x</a></li></ul>'
    for n in range(4):
        token = f"a1b2c3d4e5f6{n:04d}"
        answer = json.dumps(
            {"success": True, "message": screen.format(token), "menu": menu.format(token)}
        )
        await serve(addons, episode, json_response(answer.encode()), headers=FETCH, path="/api")
    assert (shifted.misses - shifted.swapped, shifted.swapped) == (1 + 2, 6)


async def test_a_json_answer_over_the_limit_is_said_apart_from_a_page(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A JSON answer too big to read for markup goes out as it came, and its log says it was
    an answer not read, not a page that went out unshifted (API data, as a rule)."""
    episode = await make_episode(store, condition="Src-Perc")
    await serve(addons, episode, html_response(PAGE), path="/app")
    ctx.options.update(ss_max_rewrite_bytes=10)
    rows = json.dumps({"rows": list(range(50))}).encode()
    flow = await serve(addons, episode, json_response(rows), headers=FETCH, path="/api")
    assert flow.response.stream
    (skipped,) = [e for e in await store.read_events(episode.id) if e["type"] == "rewrite_skipped"]
    assert skipped["reason"] == "JSON answer (not read for markup) over ss_max_rewrite_bytes"


@pytest.mark.parametrize("seed", range(6))
async def test_an_answers_markup_is_shifted_for_the_site_its_markup_names(
    store: MemoryStore, addons: AddonManager, seed: int
) -> None:
    """WordPress's admin-ajax escapes `/` (`<\\/a>`, `\\/wp-content\\/`): matched on the
    answer's bytes, its markup was shifted for no site (`.row-title` not protected, as the
    WordPress profile protects it), unlike the same markup fetched as HTML."""
    episode = await make_episode(store, condition="Src-Perc", seed=seed)
    await serve(addons, episode, html_response(PAGE), path="/app")
    markup = (
        '<tr id="post-5" class="iedit"><td><img src="/wp-content/a.png" alt="">'
        '<strong><a class="row-title" href="/p/5">Lemon</a></strong>'
        '<a class="editinline" href="#">Quick Edit</a><a class="trash" href="/t/5">Trash</a>'
        "</td></tr>"
    )
    answer = json.dumps({"html": markup}).replace("/", "\\/").encode()
    flow = await serve(addons, episode, json_response(answer), headers=FETCH, path="/ajax")
    fragment = await serve(addons, episode, html_response(markup.encode()), headers=FETCH)
    assert json.loads(flow.response.content)["html"].encode() == fragment.response.content


# Execution-only pages, streamed with their start shifted: small and big, real ones, and those
# whose start does not settle where they are cut (a long comment first, a <meta> policy, a
# page in UTF-16).
STREAMED_PAGES = {
    "small": PAGE,
    "300 KB": page(size=300_000).encode(),
    **{
        path.stem[:24]: path.read_bytes() for path in fixture_pages() if path.stat().st_size > 65536
    },
    "comment first": b"<!-- " + b"c" * 100_000 + b" -->" + page(size=70_000).encode(),
    "meta policy": page(
        extra_head="<meta http-equiv='Content-Security-Policy' content=\"script-src 'self'\">",
        size=70_000,
    ).encode(),
    "policies early and late": page(
        extra_head="<meta http-equiv='Content-Security-Policy' content=\"script-src 'self'\">",
        size=70_000,
    )
    .encode()
    .replace(b"</body>", b"<meta http-equiv='content-security-policy' content='x'></body>"),
    "policy past the head's bytes": page(size=70_000)
    .encode()
    .replace(b"</body>", b"<meta http-equiv='content-security-policy' content='x'></body>"),
    "utf-16": "\ufeff".encode("utf-16-le") + page(size=40_000).encode("utf-16-le"),
}
TIMING = {"id", "ts", "rewrite_ms", "shift_cpu_ms"}  # (and the store's event ids, by time)


async def _events(store: MemoryStore, episode_id: str) -> list[dict[str, object]]:
    return [
        {name: value for name, value in event.items() if name not in TIMING}
        for event in await store.read_events(episode_id)
    ]


async def _three_loads(
    episode, body: bytes, charset: str, chunk: int, version: str
) -> tuple[list[http.HTTPFlow], list[dict[str, object]]]:  # type: ignore[no-untyped-def]
    """Three loads of a page in the episode, in a service of its own (a store and addons)."""
    store = MemoryStore()
    await store.create_episode(episode.id, episode.model_dump(mode="json"), int(time.time()) + 60)
    with taddons.context(*build_addons(store)) as context:
        context.options.update(ss_learn="static")
        flows = []
        for _ in range(3):  # (a `once` popup, then none; three draws)
            upstream = http.Response.make(
                200, body, {"Content-Type": f"text/html; charset={charset}"}
            )
            flows.append(
                await exchange(
                    context.master.addons, episode, upstream, chunk=chunk, http_version=version
                )
            )
        return flows, await _events(store, episode.id)


@pytest.mark.parametrize("name", sorted(STREAMED_PAGES))
@pytest.mark.parametrize("chunk", [997, 65536, 65537, 1 << 22])
@pytest.mark.parametrize("regime", ["once", "random"])
async def test_an_execution_only_page_streamed_is_the_page_buffered(
    name: str, chunk: int, regime: str
) -> None:
    """An execution-only episode's navigation streams, its start shifted once it settles
    (`proxy.shifted_start`): whatever its chunks, the bytes and the log of the same loads
    buffered (an HTTP/1.0 browser's, which takes no body of undeclared length)."""
    body = STREAMED_PAGES[name]
    charset = "utf-16" if name == "utf-16" else "utf-8"
    episode = new_episode(EpisodeConfig(condition="Src-Exec", regime=regime, seed=3))
    streamed, streamed_log = await _three_loads(episode, body, charset, chunk, "HTTP/1.1")
    buffered, buffered_log = await _three_loads(episode, body, charset, chunk, "HTTP/1.0")
    assert {state_of(flow).rewrite for flow in streamed} == {STREAM}
    assert {state_of(flow).rewrite for flow in buffered} == {BUFFER}
    for one, other in zip(streamed, buffered, strict=True):
        assert one.response.content == other.response.content != body
    assert streamed_log == buffered_log
    served = [event["load_index"] for event in streamed_log if event["type"] == "page_served"]
    assert served == [1, 2, 3]


async def test_a_streamed_page_is_framed_in_chunks_and_kept_by_no_cache(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    headers = {"ETag": '"e"', "Last-Modified": "x"}
    flow = await exchange(addons, episode, html_response(PAGE, **headers))
    assert state_of(flow).rewrite == STREAM
    assert flow.response.headers["Transfer-Encoding"] == "chunked"
    assert "Content-Length" not in flow.response.headers
    assert flow.response.headers["Cache-Control"] == "no-store"
    assert "ETag" not in flow.response.headers and "Last-Modified" not in flow.response.headers
    # HTTP/2 frames a body of no declared length: no chunks (a header it forbids).
    framed = await exchange(addons, episode, html_response(PAGE), http_version="HTTP/2.0")
    assert state_of(framed).rewrite == STREAM
    assert "Transfer-Encoding" not in framed.response.headers
    assert "Content-Length" not in framed.response.headers


@pytest.mark.parametrize(
    "why",
    [
        "http/1.0",
        "http/1.0 server",
        "http/2 server",
        "policy header",
        "compressed",
        "fragment",
        "perceptual",
        "interstitial",
    ],
)
async def test_what_cannot_stream_its_start_shifted_is_buffered(
    store: MemoryStore, addons: AddonManager, why: str
) -> None:
    """A page whose shift is not all in its start, or whose browser cannot take a body of no
    declared length, is buffered as before (and `test_an_execution_only_page_streamed_is_the_
    page_buffered` holds the buffered page to be the streamed one)."""
    config: dict[str, object] = {"condition": "Src-Exec", "regime": "multiple"}
    response, headers, version = html_response(PAGE), NAV, "HTTP/1.1"
    if why == "http/1.0":
        version = "HTTP/1.0"
    elif why == "http/1.0 server":
        # (mitmproxy writes the upstream's status line: `HTTP/1.0 200 OK` with chunks, which
        # a browser does not take for chunks, Chromium reading their sizes into the page)
        response.http_version = "HTTP/1.0"
    elif why == "http/2 server":
        # (an empty DATA frame that does not end the stream reaches the stream function as
        # the empty chunk that says the body has ended: the start would be shifted as all of
        # it, a <meta> policy after it given no nonce)
        response.http_version = "HTTP/2.0"
    elif why == "policy header":
        response = html_response(PAGE, **{"Content-Security-Policy": "script-src 'self'"})
    elif why == "compressed":
        response = html_response(b"", **{"Content-Encoding": "gzip"})
        response.raw_content = gzip.compress(PAGE)
    elif why == "fragment":
        headers = {"Sec-Fetch-Dest": "empty", "Sec-Fetch-Mode": "cors"}
    elif why == "perceptual":
        config = {"condition": "Src-Perc"}
    else:  # (an interstitial stands in for the page: its body is not sent at all)
        config.update(execution="extended", shift_params={"popup": {"hosts": ["interstitial"]}})
    episode = await make_episode(store, **config)
    flow = await exchange(addons, episode, response, headers=headers, http_version=version)
    assert state_of(flow).rewrite == BUFFER
    assert "Transfer-Encoding" not in flow.response.headers


async def test_a_load_planned_from_its_headers_is_logged_whatever_became_of_it(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A load planned from its headers (`_plan_stream`) and then buffered (a path no popup is
    for) is that load: cut off before its end it is logged as it, incomplete, and a body over
    the limit is logged with it, not counted again."""
    episode = await make_episode(
        store,
        condition="Src-Exec",
        regime="random",
        shift_params={"popup": {"paths": ["/shop/*"]}},
    )
    flow = request_flow("/", headers={"X-SkillShift-Episode": episode.id, **NAV})
    await run_request(addons, flow)
    flow.response = html_response(PAGE)
    await addons.handle_lifecycle(HttpResponseHeadersHook(flow))
    assert state_of(flow).rewrite == BUFFER and state_of(flow).planned is not None
    flow.error = mitmproxy_flow.Error("client disconnected")
    await addons.handle_lifecycle(HttpErrorHook(flow))
    ctx.options.update(ss_max_rewrite_bytes=10)
    chunked = html_response(PAGE)
    del chunked.headers["content-length"]  # (of no declared length: not refused by it)
    await exchange(addons, episode, chunked)
    events = await store.read_events(episode.id)
    served = [event for event in events if event["type"] == "page_served"]
    assert [event["load_index"] for event in served] == [1, 2]
    assert served[0]["incomplete"] is True and served[0]["changed"] is False


async def test_an_empty_page_planned_to_stream_is_shifted_whole_with_its_length(
    store: MemoryStore, addons: AddonManager
) -> None:
    """An empty body ends with the headers, so mitmproxy reads it whole though it was to
    stream: it is shifted as a buffered page, framed by its length."""
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    flow = await exchange(addons, episode, html_response(b""))
    assert state_of(flow).rewrite == STREAM
    assert b"/__ss/r.js?v=" in flow.response.content
    assert "Transfer-Encoding" not in flow.response.headers
    assert int(flow.response.headers["Content-Length"]) == len(flow.response.content)
    events = await store.read_events(episode.id)
    assert [event["type"] for event in events] == ["page_served", "popup_injected"]


async def test_a_streamed_page_held_past_the_limit_goes_out_as_it_came_and_says_so(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A page whose start does not settle (a comment longer than the start) is held whole, but
    no further than `ss_max_rewrite_bytes`, as a buffered page is: past it, the page goes out
    as it came, logged as a buffered one of no declared length would be (`rewrite_skipped`),
    its load the one planned from its headers."""
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    ctx.options.update(ss_max_rewrite_bytes=80_000)
    body = STREAMED_PAGES["comment first"]
    chunked = html_response(body)
    del chunked.headers["content-length"]  # (of no declared length: not refused by it)
    flow = await exchange(addons, episode, chunked, chunk=4096)
    assert state_of(flow).rewrite == STREAM and flow.response.content == body
    events = await store.read_events(episode.id)
    assert [event["type"] for event in events] == ["rewrite_skipped", "page_served"]
    assert "chunked" in str(events[0]["reason"])
    assert (events[1]["load_index"], events[1]["changed"]) == (1, False)


async def test_a_streamed_page_cut_off_is_logged_as_its_load_incomplete(
    store: MemoryStore, addons: AddonManager
) -> None:
    """The browser went on before a streamed page ended: its load was counted from its
    headers, so the log says what became of it (its start, if it was sent)."""
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    big = page(size=200_000).encode()
    for sent_before_the_cut, changed in ((1000, False), (100_000, True)):
        flow = request_flow("/", headers={"X-SkillShift-Episode": episode.id, **NAV})
        await run_request(addons, flow)
        flow.response = html_response(big)
        await addons.handle_lifecycle(HttpResponseHeadersHook(flow))
        assert state_of(flow).rewrite == STREAM
        flow.response.stream(big[:sent_before_the_cut])
        flow.error = mitmproxy_flow.Error("client disconnected")
        await addons.handle_lifecycle(HttpErrorHook(flow))
        *_, served = await store.read_events(episode.id)
        assert served["type"] == "page_served" and served["incomplete"] is True
        assert served["changed"] is changed
    events = await store.read_events(episode.id)
    assert [e["load_index"] for e in events if e["type"] == "page_served"] == [1, 2]
