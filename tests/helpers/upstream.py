"""A real HTTP(S) upstream on loopback, serving every kind of response the pipeline must handle."""

from __future__ import annotations

import gzip
import json
import ssl
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import brotli
import zstandard

from tests.helpers.pages import page

BIG_BINARY = bytes(range(256)) * (5 * 1024 * 1024 // 256)
PAGE = page("Shop", size=200 * 1024).encode()
ETAG = '"v1"'
LAST_MODIFIED = "Mon, 01 Jan 2024 00:00:00 GMT"
CSP_NONCE = "upstreamNonce123"


def _compress(encoding: str, body: bytes) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    if encoding == "br":
        return brotli.compress(body)
    if encoding == "zstd":
        return zstandard.ZstdCompressor().compress(body)
    raise ValueError(encoding)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle's algorithm and delayed
    # ACKs add ~40 ms to every small response on a persistent connection.
    disable_nagle_algorithm = True
    server: UpstreamServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if "Content-Length" not in (headers or {}) and "Transfer-Encoding" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        self.server.requests.append(
            {"path": self.path, "method": "POST", "headers": dict(self.headers.items())}
        )
        self._send(
            200,
            page("Posted", body=f"<pre>{len(body)} bytes</pre>").encode(),
            {"Content-Type": "text/html; charset=utf-8"},
        )

    def do_GET(self) -> None:  # noqa: N802
        self.server.requests.append({"path": self.path, "headers": dict(self.headers.items())})
        path = self.path.split("?")[0]
        html = {"Content-Type": "text/html; charset=utf-8"}
        if path in self.server.generated:
            content_type, make = self.server.generated[path]
            self._send(200, make(), {"Content-Type": content_type})
        elif path in self.server.extra:
            content_type, content = self.server.extra[path]
            headers = {"Content-Type": content_type} if content_type else {}  # "": no header
            self._send(200, content, {**headers, **self.server.extra_headers.get(path, {})})
        elif path in self.server.redirects:
            self._send(302, b"", {"Location": self.server.redirects[path]})
        elif path == "/hang":
            # Answers only when the test releases it (a learn's timeout, whatever the speed).
            self.server.release.wait(60)
            self._send(200, page("Late").encode(), html)
        elif path == "/hang.js":
            self.server.hang_asked.set()
            self.server.release.wait(60)
            self._send(200, b"window.late = 1;", {"Content-Type": "text/javascript"})
        elif path == "/after-hang.js":
            # Answers once /hang.js was asked for: a page loading both has `load` only after.
            self.server.hang_asked.wait(60)
            self._send(200, b"window.after = 1;", {"Content-Type": "text/javascript"})
        elif path == "/error500":
            self._send(500, page("Server error").encode(), html)
        elif path in ("/", "/page.html"):
            self._send(200, PAGE, html)
        elif path == "/login":
            self._send(200, page("Log in form").encode(), html)
        elif path == "/dynamic":
            # Controls rendered by JavaScript after load, re-rendered once more later.
            script = (
                "<script>setTimeout(function () {"
                "var b = document.createElement('button'); b.id = 'late';"
                "b.setAttribute('data-testid', 'late-button'); b.textContent = 'Sign in';"
                "document.body.appendChild(b);"
                "setTimeout(function () { b.textContent = 'Sign in'; }, 200);"
                "}, 100);</script>"
            )
            self._send(200, page("Dynamic", body=script).encode(), html)
        elif path == "/favicon.ico":
            self._send(204, b"")
        elif path.startswith("/encoded/"):
            encoding = path.rsplit("/", 1)[1]
            self._send(200, _compress(encoding, PAGE), {**html, "Content-Encoding": encoding})
        elif path == "/truncated-gzip":
            self._send(200, gzip.compress(PAGE)[:500], {**html, "Content-Encoding": "gzip"})
        elif path == "/csp":
            body = page("CSP", f'<script nonce="{CSP_NONCE}">window.own = 1;</script>')
            policy = (
                f"script-src 'nonce-{CSP_NONCE}' 'strict-dynamic'; "
                "style-src 'self'; object-src 'none'"
            )
            self._send(200, body.encode(), {**html, "Content-Security-Policy": policy})
        elif path == "/csp-meta":
            meta = (
                '<meta http-equiv="Content-Security-Policy" '
                "content=\"default-src 'self'; script-src 'self'\">"
            )
            self._send(200, page("Meta CSP", meta).encode(), html)
        elif path == "/latin1":
            latin1 = page("Caf\u00e9 cr\u00e8me").encode("latin-1")
            self._send(200, latin1, {"Content-Type": "text/html; charset=iso-8859-1"})
        elif path == "/etag":
            if self.headers.get("If-None-Match") == ETAG:
                self._send(304, b"", {"ETag": ETAG})
            else:
                self._send(
                    200,
                    PAGE,
                    {
                        **html,
                        "ETag": ETAG,
                        "Last-Modified": LAST_MODIFIED,
                        "Cache-Control": "max-age=60",
                    },
                )
        elif path == "/fragment":
            self._send(200, b"<div class='frag'><button>Sign in</button></div>", html)
        elif path == "/missing":
            self._send(404, page("Not found").encode(), html)
        elif path == "/data.json":
            self._send(
                200, json.dumps({"label": "Sign in"}).encode(), {"Content-Type": "application/json"}
            )
        elif path == "/big.bin":
            self._send(200, BIG_BINARY, {"Content-Type": "application/octet-stream"})
        elif path == "/style.css":
            self._send(200, b"body{color:#333}", {"Content-Type": "text/css", "ETag": ETAG})
        elif path == "/echo":
            self._send(
                200,
                json.dumps(dict(self.headers.items())).encode(),
                {"Content-Type": "application/json"},
            )
        elif path == "/redirect":
            self._send(302, b"", {"Location": f"{self.server.origin}/page.html"})
        elif path == "/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in (PAGE[:1000], PAGE[1000:]):
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/variant":
            self._send(
                200,
                page(self.server.label, f'<link href="{self.server.origin}/style.css">').encode(),
                html,
            )
        else:
            self._send(404, b"no such test page", {"Content-Type": "text/plain"})


class UpstreamServer(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver listens with a backlog of 5: 64 clients connecting at once would lose
    # SYNs and wait a second for the retry, a delay of the test upstream, not of a proxy.
    request_queue_size = 128

    def __init__(self, label: str = "source", tls: tuple[Path, Path] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.label = label
        self.requests: list[dict[str, Any]] = []
        # More pages to serve: path -> (content type, body), e.g. saved pages for benchmarks.
        self.extra: dict[str, tuple[str, bytes]] = {}
        self.extra_headers: dict[str, dict[str, str]] = {}  # path -> more headers of its answer
        # Pages made anew for every request: path -> (content type, a function giving the body),
        # e.g. a page with a per-request token, as an app's nonce or CSRF field.
        self.generated: dict[str, tuple[str, Callable[[], bytes]]] = {}
        self.redirects: dict[str, str] = {}  # path -> Location
        self.release = threading.Event()  # lets /hang answer
        self.hang_asked = threading.Event()
        scheme = "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self.socket = context.wrap_socket(self.socket, server_side=True)
            scheme = "https"
        self.port = int(self.server_address[1])
        self.origin = f"{scheme}://127.0.0.1:{self.port}"
        # serve_forever looks for shutdown() every poll_interval: 0.5 s by default, which each
        # stop() waited out.
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> UpstreamServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()

    @classmethod
    @contextmanager
    def serving(
        cls, label: str, add_app: Callable[[UpstreamServer], object]
    ) -> Iterator[UpstreamServer]:
        """A started server with an app added (`add_app`, e.g. `add_chunked_app`), stopped after."""
        server = cls(label)
        add_app(server)
        server.start()
        try:
            yield server
        finally:
            server.stop()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up mid-connection (wrk stopping, a reset test) is not a server error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)
