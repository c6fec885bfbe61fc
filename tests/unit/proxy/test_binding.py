from __future__ import annotations

import base64
import html

from mitmproxy import ctx
from mitmproxy.addonmanager import AddonManager
from mitmproxy.test import taddons

from proxy.binding import EpisodeBinding
from proxy.flowstate import state_of
from proxy.store import MemoryStore, RedisStore
from tests.helpers.ports import free_port
from tests.unit.proxy.conftest import make_episode, request_flow, run_request


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


async def test_header_binds_and_is_stripped(store: MemoryStore, addons: AddonManager) -> None:
    episode = await make_episode(store)
    for value in (episode.id, f"{episode.id}:{episode.token}"):
        flow = request_flow(headers={"X-SkillShift-Episode": value})
        await run_request(addons, flow)
        assert flow.response is None
        assert state_of(flow).episode.id == episode.id
        assert "X-SkillShift-Episode" not in flow.request.headers


async def test_proxy_credentials_bind_and_are_stripped(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store)
    flow = request_flow(headers={"Proxy-Authorization": basic(episode.id, episode.token)})
    await run_request(addons, flow)
    assert state_of(flow).episode.id == episode.id
    assert "Proxy-Authorization" not in flow.request.headers


async def test_wrong_token_unknown_episode_and_unbound_get_407(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store)
    cases = [
        {"Proxy-Authorization": basic(episode.id, "wrong")},
        {"X-SkillShift-Episode": f"{episode.id}:wrong"},
        {"X-SkillShift-Episode": "no-such-episode"},
        {"Proxy-Authorization": "Bearer abc"},
        {"Proxy-Authorization": "Basic %%%"},
        {},
    ]
    for headers in cases:
        flow = request_flow(headers=headers)
        await run_request(addons, flow)
        assert flow.response is not None and flow.response.status_code == 407, headers
        assert flow.response.headers["Proxy-Authenticate"].startswith("Basic")
        assert state_of(flow).episode is None


async def test_an_unknown_bare_id_in_the_header_is_told_the_format(
    store: MemoryStore, addons: AddonManager
) -> None:
    episode = await make_episode(store)
    bare = request_flow(headers={"X-SkillShift-Episode": "justanid"})
    await run_request(addons, bare)
    assert bare.response is not None and bare.response.status_code == 407
    told = html.unescape(bare.response.get_text() or "")
    assert "Unknown or expired episode 'justanid'. The episode header is 'ID:TOKEN'." in told
    full = request_flow(headers={"X-SkillShift-Episode": f"gone:{episode.token}"})
    await run_request(addons, full)
    assert full.response is not None and "ID:TOKEN" not in (full.response.get_text() or "")


async def test_allow_unbound_passes_through(store: MemoryStore, addons: AddonManager) -> None:
    ctx.options.update(ss_allow_unbound=True)
    flow = request_flow()
    await run_request(addons, flow)
    assert flow.response is None and state_of(flow).episode is None


async def test_require_token_refuses_bare_id(store: MemoryStore, addons: AddonManager) -> None:
    episode = await make_episode(store)
    ctx.options.update(ss_require_token=True)
    flow = request_flow(headers={"X-SkillShift-Episode": episode.id})
    await run_request(addons, flow)
    assert flow.response is not None and flow.response.status_code == 407


async def test_connect_credentials_bind_the_tunnel(store: MemoryStore) -> None:
    episode = await make_episode(store)
    binding = EpisodeBinding(store)
    with taddons.context(binding):
        connect = request_flow(
            method="CONNECT", headers={"Proxy-Authorization": basic(episode.id, episode.token)}
        )
        await binding.http_connect(connect)
        inner = request_flow()
        inner.client_conn = connect.client_conn
        await binding.requestheaders(inner)
        assert inner.response is None and state_of(inner).episode.id == episode.id


async def test_a_default_binds_only_on_listeners_that_take_one(
    store: MemoryStore, addons: AddonManager
) -> None:
    desktop = await make_episode(store)
    agent = await make_episode(store)
    ctx.options.update(ss_default_listeners="9000")
    for listener in ("8080", "9000"):
        await store.set_listener_default(listener, desktop.id, desktop.expires_at)
    # A desktop browser on its own listener is bound by the default...
    unbound = request_flow()
    unbound.client_conn.sockname = ("127.0.0.1", 9000)
    await run_request(addons, unbound)
    assert state_of(unbound).episode.id == desktop.id
    # ...but on the agents' listener, even a stored default binds nothing: the browser gets the
    # 407 challenge, after which Chromium sends its own credentials.
    first_try = request_flow()
    await run_request(addons, first_try)
    assert first_try.response is not None and first_try.response.status_code == 407
    assert state_of(first_try).episode is None
    retry = request_flow(headers={"Proxy-Authorization": basic(agent.id, agent.token)})
    await run_request(addons, retry)
    assert state_of(retry).episode.id == agent.id
    # Credentials win over the default on the desktop listener too.
    credentialed = request_flow(headers={"Proxy-Authorization": basic(agent.id, agent.token)})
    credentialed.client_conn.sockname = ("127.0.0.1", 9000)
    await run_request(addons, credentialed)
    assert state_of(credentialed).episode.id == agent.id


async def test_dead_store_fails_closed_with_503() -> None:
    dead = RedisStore(f"redis://127.0.0.1:{free_port()}/0", timeout=0.3)
    binding = EpisodeBinding(dead)
    with taddons.context(binding):
        flow = request_flow(headers={"X-SkillShift-Episode": "e1"})
        await binding.requestheaders(flow)
        assert flow.response is not None and flow.response.status_code == 503
        assert b"store is unavailable" in flow.response.content
    await dead.close()


async def test_request_data_is_never_reflected_unescaped(
    store: MemoryStore, addons: AddonManager
) -> None:
    flow = request_flow(headers={"X-SkillShift-Episode": "<script>alert(1)</script>"})
    await run_request(addons, flow)
    assert flow.response is not None and flow.response.status_code == 407
    assert b"<script>" not in flow.response.content
    assert b"&lt;script&gt;" in flow.response.content
