"""An upstream whose page can be held: the n-th request for it waits until the test opens the
gate, so a test can act while a browser is in the middle of a load (and know it is)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers.pages import page

GATE_PATH = "/gated.html"
HELD_AT_MOST_S = 120.0  # a test that never opens the gate fails, it does not hang


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: GatedServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet test output
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.split("?")[0] != GATE_PATH:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.server.arrived()
        body = page("Gated", body="<p><button>Add to cart</button></p>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class GatedServer(ThreadingHTTPServer):
    """Serves GATE_PATH; the request number `hold` (1-based) waits for `open()`."""

    daemon_threads = True

    def __init__(self, hold: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hold = hold
        self.requests = 0
        self.waiting = threading.Event()  # the held request has arrived and waits
        self.gate = threading.Event()
        self.held_too_long = False  # the gate was never opened: the held request went on alone
        self._lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self.server_address[1]}{GATE_PATH}"

    def arrived(self) -> None:
        with self._lock:
            self.requests += 1
            held = self.requests == self.hold
        if held:
            self.waiting.set()
            self.held_too_long = not self.gate.wait(HELD_AT_MOST_S)

    def open(self) -> None:
        self.gate.set()

    def __enter__(self) -> GatedServer:
        # shutdown() is noticed within poll_interval (0.5 s by default).
        threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        self.shutdown()
        self.server_close()
