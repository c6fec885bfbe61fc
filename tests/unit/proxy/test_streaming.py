"""Which requests may go upstream before their `request` hook: streamed already, or of a
length not declared."""

from __future__ import annotations

import pytest
from mitmproxy.test import tutils

from proxy.streaming import may_stream


@pytest.mark.parametrize(
    "method, version, headers, stream, expected",
    [
        ("POST", "HTTP/1.1", {"content-length": "3"}, True, True),  # over the limit already
        ("POST", "HTTP/1.1", {"content-length": "3"}, False, False),
        ("POST", "HTTP/1.1", {"transfer-encoding": "chunked"}, False, True),
        ("POST", "HTTP/1.1", {"Transfer-Encoding": "gzip, Chunked"}, False, True),
        ("GET", "HTTP/1.1", {}, False, False),
        ("POST", "HTTP/1.1", {}, False, False),  # HTTP/1: no length, no chunks, no body
        ("POST", "HTTP/2.0", {}, False, True),  # an upload stream
        ("PUT", "HTTP/3", {}, False, True),
        ("POST", "HTTP/2.0", {"content-length": "0"}, False, False),
        ("GET", "HTTP/2.0", {}, False, False),
        ("DELETE", "HTTP/2.0", {}, False, False),
        ("PATCH", "HTTP/2.0", {}, False, False),  # (no body: Chromium declares no length)
    ],
)
def test_what_may_be_streamed(
    method: str, version: str, headers: dict[str, str], stream: bool, expected: bool
) -> None:
    request = tutils.treq(method=method.encode(), http_version=version.encode(), content=b"")
    request.headers.clear()
    request.headers.update(headers)
    request.stream = stream
    assert may_stream(request) is expected
