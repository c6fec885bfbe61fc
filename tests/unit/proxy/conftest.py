"""Addon tests: the real addon chain (`proxy.build_addons`) loaded into a mitmproxy master,
its hooks dispatched by mitmproxy's own addon manager on test flows, with a real MemoryStore."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mitmproxy import http
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import (
    HttpRequestHeadersHook,
    HttpRequestHook,
    HttpResponseHeadersHook,
    HttpResponseHook,
)
from mitmproxy.test import taddons, tflow, tutils

from proxy import build_addons
from proxy.episode import EpisodeConfig, new_episode
from proxy.recording_dir import Recording
from proxy.store import MemoryStore

NAV = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def addons(store: MemoryStore) -> Iterator[AddonManager]:
    """The service's addon chain as `serve` loads it, behind mitmproxy's addon manager. Pages
    are learnt without the browser pass here (tests/unit/proxy/knowledge has it)."""
    with taddons.context(*build_addons(store)) as context:
        context.options.update(ss_learn="static")
        yield context.master.addons


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[Recording]:
    found = Recording(tmp_path / "recordings")
    yield found
    found.close()


@pytest.fixture
def chain(store: MemoryStore, recording: Recording) -> Iterator[AddonManager]:
    """The addon chain with a recording directory: it records, and replays."""
    with taddons.context(*build_addons(store, recording)) as context:
        context.options.update(ss_learn="static")
        yield context.master.addons


def member(chain: AddonManager, name: str) -> object:
    """One of the service's addons, by its mitmproxy name, inside the `AddonChain`."""
    found = chain.get("addonchain").get(name)
    assert found is not None, name
    return found


async def make_episode(store: MemoryStore, **config: object):  # type: ignore[no-untyped-def]
    episode = new_episode(EpisodeConfig.model_validate(config))
    await store.create_episode(episode.id, episode.model_dump(mode="json"), int(time.time()) + 600)
    return episode


def request_flow(
    path: str = "/",
    headers: dict[str, str] | None = None,
    method: str = "GET",
    content: bytes = b"",
) -> http.HTTPFlow:
    flow = tflow.tflow(
        req=tutils.treq(
            method=method.encode(), path=path.encode(), content=content, headers=http.Headers(**{})
        )
    )
    flow.request.host, flow.request.port = "site.test", 80
    for name, value in (headers or {}).items():
        flow.request.headers[name] = value
    flow.client_conn.sockname = ("127.0.0.1", 8080)
    return flow


def html_response(body: bytes, status: int = 200, **headers: str) -> http.Response:
    return http.Response.make(status, body, {"Content-Type": "text/html; charset=utf-8", **headers})


async def run_request(chain: AddonManager, flow: http.HTTPFlow) -> None:
    """The request hooks, as mitmproxy's HTTP layer runs them; a response an addon set is
    then sent like any other (its response hooks run too)."""
    await chain.handle_lifecycle(HttpRequestHeadersHook(flow))
    await chain.handle_lifecycle(HttpRequestHook(flow))
    if flow.response is not None:
        await chain.handle_lifecycle(HttpResponseHeadersHook(flow))
        await chain.handle_lifecycle(HttpResponseHook(flow))


async def run_response(chain: AddonManager, flow: http.HTTPFlow, response: http.Response) -> None:
    """The upstream's `response` arrives: the response hooks, as mitmproxy runs them."""
    flow.response = response
    await chain.handle_lifecycle(HttpResponseHeadersHook(flow))
    await chain.handle_lifecycle(HttpResponseHook(flow))


async def exchange(
    chain: AddonManager,
    episode,  # type: ignore[no-untyped-def]
    response: http.Response,
    path: str = "/",
    headers: dict[str, str] | None = None,
    method: str = "GET",
    content: bytes = b"",
    chunk: int = 0,
    http_version: str = "HTTP/1.1",
) -> http.HTTPFlow:
    """One request through the chain and the upstream's response back, streamed when the chain
    streams it (as mitmproxy would pass its chunks to the stream function: `chunk` bytes each,
    or with 0 the first 10 and the rest); what the stream sent is the response's body once the
    hooks have run, for the test to read. `http_version`: the browser's request's."""
    headers = {"X-SkillShift-Episode": episode.id, **(headers or NAV)}
    flow = request_flow(path, headers=headers, method=method, content=content)
    flow.request.http_version = http_version
    await run_request(chain, flow)
    assert flow.response is None
    flow.response = response
    body = response.raw_content or b""
    await chain.handle_lifecycle(HttpResponseHeadersHook(flow))
    sent: list[bytes] | None = None
    # (an empty body ends with the headers: mitmproxy reads it whole, streaming or not)
    if callable(flow.response.stream) and body:
        sent = []
        if chunk:
            chunks = [body[at : at + chunk] for at in range(0, len(body), chunk)]
        else:
            chunks = [body[:10], body[10:]]
        # (mitmproxy passes no empty chunk but the last, which says the body has ended, from
        # an HTTP/1 or HTTP/3 upstream: the ones a page's start is shifted from)
        for piece in [*(one for one in chunks if one), b""]:
            pieces = flow.response.stream(piece)
            sent.extend([pieces] if isinstance(pieces, bytes) else pieces)
        flow.response.raw_content = b""  # a streamed body is not kept by mitmproxy
    await chain.handle_lifecycle(HttpResponseHook(flow))
    if sent is not None:
        flow.response.raw_content = b"".join(sent)
    return flow
