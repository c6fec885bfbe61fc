"""Addon tests: hooks called directly on mitmproxy test flows, with a real MemoryStore."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from mitmproxy import http
from mitmproxy.test import taddons, tflow, tutils

from proxy.binding import EpisodeBinding
from proxy.episode import EpisodeConfig, new_episode
from proxy.internal import InternalEndpoints
from proxy.rewrite import PageRewriter
from proxy.routing import ContextualRouting
from proxy.store import MemoryStore


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def addons(store: MemoryStore) -> Iterator[list[object]]:
    chain = [
        EpisodeBinding(store),
        InternalEndpoints(store),
        ContextualRouting(),
        PageRewriter(store),
    ]
    with taddons.context(*chain):
        yield chain


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


async def run_request(chain: list[object], flow: http.HTTPFlow) -> None:
    for hook in ("requestheaders", "request"):
        for addon in chain:
            if flow.response is not None and hook == "request":
                break
            method = getattr(addon, hook, None)
            if method is not None:
                result = method(flow)
                if hasattr(result, "__await__"):
                    await result


async def run_response(chain: list[object], flow: http.HTTPFlow, response: http.Response) -> None:
    flow.response = response
    for hook in ("responseheaders", "response"):
        for addon in chain:
            method = getattr(addon, hook, None)
            if method is not None:
                result = method(flow)
                if hasattr(result, "__await__"):
                    await result
