"""Which requests mitmproxy may send upstream before the `request` hook runs.

A request body over `stream_large_bodies` is streamed: its headers go upstream as soon as
mitmproxy knows the body is that long, and the `request` hook (where a replay answers and the
guard refuses an upstream) runs only once it was sent. Known from the headers when the length
says so (mitmproxy sets `request.stream` before the hooks). A body of no declared length (a
chunked HTTP/1 upload, an HTTP/2 upload stream) is streamed once it grows past the limit, with
no hook between: an addon that must keep a request from the upstream decides for it in
`requestheaders`, when nothing has been sent.
"""

from __future__ import annotations

from mitmproxy import http

# The methods a browser declares a length for, even of no body (Chromium sets Content-Length
# on every POST and PUT that is not an upload stream, `Content-Length: 0` when empty; a PATCH
# or DELETE with no body has none, and is no upload stream).
BODY_METHODS = frozenset({"POST", "PUT"})


def may_stream(request: http.Request) -> bool:
    """Whether the request's headers may go upstream before its `request` hook: its body is
    streamed already, or its length is not declared (so it may grow past the limit)."""
    if request.stream:
        return True
    if "content-length" in request.headers:
        return False
    if "chunked" in request.headers.get("transfer-encoding", "").lower():
        return True
    # HTTP/2 and 3 frame a body with no header saying so: a browser declares the length of
    # any body it knows (forms, fetch and XHR bodies), so a POST or PUT without one is an
    # upload stream.
    return (request.is_http2 or request.is_http3) and request.method.upper() in BODY_METHODS
