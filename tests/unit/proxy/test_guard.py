"""Where the proxy may connect: the pure allow-list decision, and the addon answering 403 in
the real addon chain before any upstream connection."""

from __future__ import annotations

import pytest
from mitmproxy import ctx
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpConnectHook, HttpRequestHeadersHook

from proxy.flowstate import state_of
from proxy.guard import THROUGH_PROXY_HEADER, upstream_allowed
from proxy.store import MemoryStore
from tests.unit.proxy.conftest import make_episode, request_flow, run_request

API = "127.0.0.1:8081,localhost:8081,::1:8081"  # what the service forbids for its own API


@pytest.mark.parametrize(
    "host, port, allow, expected",
    [
        # An empty allow-list allows every upstream.
        ("example.test", 80, "", True),
        ("10.1.2.3", 443, " , ", True),
        # Globs over the host...
        ("127.0.0.1", 80, "127.0.0.1,localhost", True),
        ("localhost", 9999, "127.0.0.1,localhost", True),
        ("shop.lab", 80, "*.lab", True),
        ("lab", 80, "*.lab", False),
        ("example.test", 80, "127.0.0.1,localhost", False),
        # ... or over host:port.
        ("app.lab", 8080, "*.lab:8080", True),
        ("app.lab", 8081, "*.lab:8080", False),
        ("127.0.0.1", 7780, "*:7780", True),
        ("127.0.0.1", 7781, "*:7780", False),
        # Case: hosts and patterns compare lowercased.
        ("Shop.LAB", 80, "*.lab", True),
        ("shop.lab", 80, "*.LAB", True),
        # IPv6: mitmproxy's host has no brackets; a bracketed host compares the same.
        ("::1", 80, "::1", True),
        ("[::1]", 80, "::1", True),
        ("::1", 8080, "*:8080", True),
        ("::2", 80, "::1", False),
        # Spaces around items are ignored.
        ("shop.lab", 80, " 127.0.0.1 , *.lab ", True),
    ],
)
def test_allow_list_globs(host: str, port: int, allow: str, expected: bool) -> None:
    assert upstream_allowed(host, port, allow, "") is expected


@pytest.mark.parametrize(
    "host, port",
    [("127.0.0.1", 8081), ("localhost", 8081), ("LOCALHOST", 8081), ("::1", 8081), ("[::1]", 8081)],
)
def test_forbidden_wins_over_any_allow_list(host: str, port: int) -> None:
    for allow in ("", "*", "127.0.0.1,localhost,::1", "*:8081"):
        assert upstream_allowed(host, port, allow, API) is False, (host, allow)


def test_forbidden_is_exactly_those_addresses() -> None:
    assert upstream_allowed("127.0.0.1", 8080, "", API) is True  # another port of the host
    # This machine on the API's port is refused under any of its addresses.
    assert upstream_allowed("127.0.0.2", 8081, "", API) is False
    assert upstream_allowed("10.1.2.3", 8081, "", API) is True
    assert upstream_allowed("127.0.0.1", 8081, "", "") is True


@pytest.mark.parametrize(
    "host", ["127.1", "0.0.0.0", "2130706433", "::ffff:127.0.0.1", "localhost.", "127.0.0.01"]
)
def test_other_spellings_of_the_forbidden_loopback_api_are_refused(host: str) -> None:
    assert upstream_allowed(host, 8081, "", API) is False


def test_bracketed_ipv6_allow_entry_matches() -> None:
    assert upstream_allowed("::1", 8081, "[::1]:8081", "") is True


async def test_a_request_outside_the_allow_list_gets_403_before_any_connection(
    store: MemoryStore, addons: AddonManager
) -> None:
    ctx.options.update(ss_upstream_allow="allowed.test")
    episode = await make_episode(store)
    flow = request_flow(headers={"X-SkillShift-Episode": episode.id})  # to site.test:80
    await run_request(addons, flow)
    assert flow.response is not None and flow.response.status_code == 403
    assert "site.test:80" in (flow.response.text or "") and state_of(flow).own_response is True
    # Answered in the request hook: mitmproxy's HTTP layer sends an addon's response
    # instead of opening a server connection, so no connection (or DNS lookup) is made.

    allowed = request_flow(headers={"X-SkillShift-Episode": episode.id})
    allowed.request.host = "allowed.test"
    await run_request(addons, allowed)
    assert allowed.response is None  # goes upstream


async def test_forbidden_address_is_refused_even_with_everything_allowed(
    store: MemoryStore, addons: AddonManager
) -> None:
    ctx.options.update(ss_upstream_allow="*", ss_forbidden_upstreams="site.test:80")
    episode = await make_episode(store)
    flow = request_flow(headers={"X-SkillShift-Episode": episode.id})
    await run_request(addons, flow)
    assert flow.response is not None and flow.response.status_code == 403


async def test_a_tunnel_to_a_refused_upstream_is_answered_at_connect(
    store: MemoryStore, addons: AddonManager
) -> None:
    ctx.options.update(ss_upstream_allow="allowed.test")
    episode = await make_episode(store)
    flow = request_flow(headers={"X-SkillShift-Episode": episode.id}, method="CONNECT")
    flow.request.port = 443
    await addons.handle_lifecycle(HttpConnectHook(flow))
    assert flow.response is not None and flow.response.status_code == 403
    assert "site.test:443" in (flow.response.text or "")


async def test_the_guard_checks_the_routed_upstream(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Routing runs first: the target a Tgt episode sends the request to is what must be allowed."""
    ctx.options.update(ss_upstream_allow="site.test")
    episode = await make_episode(
        store, condition="Tgt", targets={"http://site.test": "http://other.test:81"}
    )
    flow = request_flow(headers={"X-SkillShift-Episode": episode.id})
    await run_request(addons, flow)
    assert (flow.request.host, flow.request.port) == ("other.test", 81)
    assert flow.response is not None and flow.response.status_code == 403


async def test_what_the_proxy_forwards_is_marked_and_what_it_answers_is_not(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Every admin API refuses what carries the mark (api/app.py): the browser's own copy of
    the header is overwritten, never passed on as it chose it."""
    ctx.options.update(ss_upstream_allow="site.test", ss_forbidden_upstreams="")
    episode = await make_episode(store)
    forwarded = request_flow(headers={"X-SkillShift-Episode": episode.id})
    forwarded.request.headers[THROUGH_PROXY_HEADER] = "0"
    await run_request(addons, forwarded)
    assert forwarded.response is None
    assert forwarded.request.headers.get_all(THROUGH_PROXY_HEADER) == ["1"]
    refused = request_flow(headers={"X-SkillShift-Episode": episode.id})
    refused.request.host = "other.test"
    await run_request(addons, refused)
    assert refused.response is not None and refused.response.status_code == 403


async def test_a_body_streamed_in_a_tgt_episode_is_routed(
    store: MemoryStore, addons: AddonManager
) -> None:
    ctx.options.update(ss_upstream_allow="", ss_forbidden_upstreams="")
    episode = await make_episode(
        store, condition="Tgt", targets={"http://site.test": "http://other.test:81"}
    )
    flow = request_flow(headers={"X-SkillShift-Episode": episode.id}, method="POST")
    flow.request.stream = True  # (as mitmproxy sets it from the length, before the hooks)
    await addons.handle_lifecycle(HttpRequestHeadersHook(flow))  # (then the headers go)
    assert (flow.request.host, flow.request.port) == ("other.test", 81)
    assert flow.request.headers[THROUGH_PROXY_HEADER] == "1"


async def test_an_upload_of_no_declared_length_to_a_refused_upstream_is_cut_off_at_once(
    store: MemoryStore, addons: AddonManager
) -> None:
    """A chunked body is streamed once it grows past the limit, with no hook between: it is
    decided as its headers arrive. One of a declared length is answered 403 when it is in."""
    ctx.options.update(ss_upstream_allow="allowed.test", ss_forbidden_upstreams="")
    episode = await make_episode(store)
    chunked = request_flow(
        headers={"X-SkillShift-Episode": episode.id, "Transfer-Encoding": "chunked"},
        method="POST",
    )
    await addons.handle_lifecycle(HttpRequestHeadersHook(chunked))
    assert chunked.error is not None and chunked.error.msg == "Connection killed."
    sized = request_flow(
        headers={"X-SkillShift-Episode": episode.id, "Content-Length": "3"},
        method="POST",
        content=b"a=1",
    )
    await run_request(addons, sized)
    assert sized.error is None and sized.response is not None
    assert sized.response.status_code == 403
