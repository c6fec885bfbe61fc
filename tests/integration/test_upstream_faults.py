"""Upstreams that misbehave for real (tests/helpers/faulty.py): each gets a defined outcome,
never a hang, a crash, a partial page passed off as whole, or an unshifted page in a shifted
episode. Streams the proxy must not touch (SSE, WebSocket, unshifted HTML) stay unbuffered.
HTTP/2 is tested with Chromium (tests/integration/test_browser.py): it offers h2 first."""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.helpers.faulty import BIG_HTML, GAP_S, FaultyUpstream, read_ws_frame, ws_frame
from tests.helpers.pages import RELABEL_ONLY
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import UpstreamServer

NAV = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}
TIMEOUT_S = 2.5


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    process = ServiceProcess(
        tmp_path_factory.mktemp("faults"),
        "--upstream-timeout",
        str(TIMEOUT_S),
        "--upstream-insecure",
    ).start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def faulty() -> Iterator[FaultyUpstream]:
    server = FaultyUpstream()
    yield server
    server.stop()


def timed_get(
    service: ServiceProcess, episode: dict[str, object], url: str, results: dict[str, float]
) -> None:
    with service.client(episode) as client:
        assert client.get(url).status_code == 200
        results["other_done"] = time.monotonic()


def test_stalled_upstream_gets_a_504_and_others_go_on(
    service: ServiceProcess, faulty: FaultyUpstream, upstream: UpstreamServer
) -> None:
    for condition in ("Src", "Src-Perc"):
        episode = service.create_episode(condition=condition)
        results: dict[str, float] = {}
        with service.client(episode) as client:  # its first load learns the page: not timed
            assert client.get(f"{upstream.origin}/page.html").status_code == 200
        other = threading.Thread(
            target=timed_get, args=(service, episode, f"{upstream.origin}/page.html", results)
        )
        with service.client(episode) as client:
            started = time.monotonic()
            other.start()
            response = client.get(f"{faulty.origin}/stall", headers=NAV)
            elapsed = time.monotonic() - started
        other.join()
        assert response.status_code == 504, (condition, response.text)
        assert f"127.0.0.1:{faulty.port}" in response.text and f"{TIMEOUT_S:g} s" in response.text
        assert "mitmproxy" not in response.text.lower()
        assert TIMEOUT_S - 0.1 <= elapsed < TIMEOUT_S + 3
        # Done while the stalled one still waited (an order of events, not a time).
        assert results["other_done"] < started + elapsed


def test_reset_mid_body_never_passes_for_a_whole_page(
    service: ServiceProcess, faulty: FaultyUpstream
) -> None:
    shifted = service.create_episode(**RELABEL_ONLY)
    with service.client(shifted) as client:
        response = client.get(f"{faulty.origin}/reset-mid-body", headers=NAV)
    assert response.status_code == 502 and "Sign in" not in response.text
    unshifted = service.create_episode(condition="Src")
    with service.client(unshifted) as client, pytest.raises(httpx.HTTPError):
        # Streamed through untouched: the client sees the same truncation the upstream made.
        client.get(f"{faulty.origin}/reset-mid-body", headers=NAV).raise_for_status()


def test_error_pages_keep_their_status_and_are_shifted(
    service: ServiceProcess, faulty: FaultyUpstream
) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with service.client(episode) as client:
        response = client.get(f"{faulty.origin}/error-500", headers=NAV)
    assert response.status_code == 500
    assert ">Log in</a>" in response.text  # an error page is a page the agent sees


def test_chunked_html_is_rewritten_whole(service: ServiceProcess, faulty: FaultyUpstream) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    with service.client(episode) as client:
        response = client.get(f"{faulty.origin}/chunked", headers=NAV)
    assert response.status_code == 200
    assert response.text.startswith("<!DOCTYPE html>") and ">Log in</a>" in response.text
    assert response.text.endswith("</html>")


def first_chunk_after(
    client: httpx.Client, url: str, headers: dict[str, str]
) -> tuple[float, bytes]:
    started = time.monotonic()
    with client.stream("GET", url, headers=headers) as response:
        chunks = response.iter_raw()
        first = next(chunks)
        elapsed = time.monotonic() - started
        rest = b"".join(chunks)
    return elapsed, first + rest


def test_server_sent_events_stream_unbuffered_in_a_shifted_episode(
    service: ServiceProcess, faulty: FaultyUpstream
) -> None:
    episode = service.create_episode(condition="Src-Perc")
    with service.client(episode) as client:
        elapsed, body = first_chunk_after(
            client, f"{faulty.origin}/sse", {"Accept": "text/event-stream"}
        )
    assert elapsed < GAP_S - 0.5  # the first event came before the upstream's pause ended
    assert body == b"data: tick 0\n\ndata: tick 1\n\n"


def test_unshifted_html_streams_and_shifted_html_waits_for_its_end(
    service: ServiceProcess, faulty: FaultyUpstream
) -> None:
    with service.client(service.create_episode(condition="Src")) as client:
        elapsed, body = first_chunk_after(client, f"{faulty.origin}/slow-html", NAV)
    assert elapsed < GAP_S - 0.5 and b"Sign in" in body
    with service.client(service.create_episode(**RELABEL_ONLY)) as client:
        elapsed, body = first_chunk_after(client, f"{faulty.origin}/slow-html", NAV)
    assert elapsed >= GAP_S - 0.1 and b">Log in</a>" in body


def test_websocket_passes_through_untouched(
    service: ServiceProcess, faulty: FaultyUpstream
) -> None:
    episode = service.create_episode(condition="Src-Perc")
    binding = dict(episode["header"])  # type: ignore[call-overload]
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {faulty.origin}/ws HTTP/1.1\r\nHost: 127.0.0.1:{faulty.port}\r\n"
        f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
        f"Sec-WebSocket-Version: 13\r\n"
        + "".join(f"{name}: {value}\r\n" for name, value in binding.items())
        + "\r\n"
    )
    with socket.create_connection(("127.0.0.1", service.proxy_port), timeout=5) as conn:
        conn.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += conn.recv(1)
        assert head.startswith(b"HTTP/1.1 101"), head
        assert read_ws_frame(conn) == (1, b"hello from upstream")
        conn.sendall(ws_frame(b"ping \x00 \xff".decode("latin-1").encode(), mask=b"abcd"))
        assert read_ws_frame(conn) == (1, b"echo: " + "ping \x00 \xff".encode())


@pytest.mark.parametrize("path", ["/html-50mb", "/html-50mb-chunked"])
def test_a_50_mb_page_streams_through_whole_and_says_so(
    service: ServiceProcess, faulty: FaultyUpstream, path: str
) -> None:
    episode = service.create_episode(**RELABEL_ONLY)
    digest = hashlib.sha256()
    with (
        service.client(episode) as client,
        client.stream("GET", f"{faulty.origin}{path}", headers=NAV) as response,
    ):
        assert response.status_code == 200
        for chunk in response.iter_raw():
            digest.update(chunk)
    assert digest.digest() == hashlib.sha256(BIG_HTML).digest()
    events = service.wait_for_events(str(episode["id"]), {"rewrite_skipped"})
    skipped = [event for event in events if event["type"] == "rewrite_skipped"]
    assert len(skipped) == 1 and "ss_max_rewrite_bytes" in str(skipped[0]["reason"])
