"""An upstream that misbehaves on purpose, on a raw socket: stalls, resets, streams slowly,
speaks server-sent events and WebSocket. Each path is one behaviour."""

from __future__ import annotations

import base64
import hashlib
import socket
import struct
import threading
import time
from collections.abc import Iterable

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
# How long a streaming upstream pauses mid-body: long enough that "the first bytes arrived
# before the pause ended" cannot be an accident of a slow machine.
GAP_S = 3.0
HTML = (
    b"<!DOCTYPE html><html><head><title>t</title></head>"
    b"<body><a href='/x'>Sign in</a></body></html>"
)


# 50 MB of HTML, far past the default rewrite limit (8 MB).
BIG_HTML = HTML.replace(b"</body>", b"<p>filler</p>" * (50 * 1024 * 1024 // 13) + b"</body>")


def _read_head(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def ws_frame(payload: bytes, opcode: int = 1, mask: bytes | None = None) -> bytes:
    head = bytes([0x80 | opcode])
    length = len(payload)
    mask_bit = 0x80 if mask else 0
    if length < 126:
        head += bytes([mask_bit | length])
    else:
        head += bytes([mask_bit | 126]) + struct.pack("!H", length)
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        return head + mask + payload
    return head + payload


def read_ws_frame(conn: socket.socket) -> tuple[int, bytes]:
    first, second = conn.recv(1), conn.recv(1)
    opcode, masked, length = first[0] & 0x0F, second[0] & 0x80, second[0] & 0x7F
    if length == 126:
        length = struct.unpack("!H", conn.recv(2))[0]
    mask = conn.recv(4) if masked else b""
    payload = b""
    while len(payload) < length:
        payload += conn.recv(length - len(payload))
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return opcode, payload


class FaultyUpstream:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        self.sock.close()
        for conn in self._held:
            conn.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            head = _read_head(conn)
            path = head.split(b" ", 2)[1].decode() if head.count(b" ") >= 2 else "/"
            getattr(self, "_" + path.strip("/").split("?")[0].replace("-", "_"), self._other)(
                conn, head
            )
        except OSError:
            pass

    def _other(self, conn: socket.socket, head: bytes) -> None:
        conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        conn.close()

    def _stall(self, conn: socket.socket, head: bytes) -> None:
        self._held.append(conn)  # never answers; closed at stop()

    def _reset_mid_body(self, conn: socket.socket, head: bytes) -> None:
        body = HTML * 50
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n"
            % (len(body) * 10)
        )
        conn.sendall(body)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()  # RST

    def _error_500(self, conn: socket.socket, head: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(HTML), HTML)
        )
        conn.close()

    def _chunked(self, conn: socket.socket, head: bytes) -> None:
        self._send_chunked(conn, "text/html", (HTML[:20], HTML[20:60], HTML[60:]), pause=0.05)

    def _sse(self, conn: socket.socket, head: bytes) -> None:
        events = (b"data: tick %d\n\n" % index for index in range(2))
        self._send_chunked(conn, "text/event-stream", events, pause=GAP_S)

    def _slow_html(self, conn: socket.socket, head: bytes) -> None:
        """Chunked HTML whose end comes late: a rewrite must wait for it, a pass-through not."""
        self._send_chunked(conn, "text/html", (HTML,), pause=GAP_S)

    def _html_50mb(self, conn: socket.socket, head: bytes) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n"
            % len(BIG_HTML)
        )
        conn.sendall(BIG_HTML)
        conn.close()

    def _html_50mb_chunked(self, conn: socket.socket, head: bytes) -> None:
        step = 1024 * 1024
        parts = (BIG_HTML[start : start + step] for start in range(0, len(BIG_HTML), step))
        self._send_chunked(conn, "text/html", parts)

    @staticmethod
    def _send_chunked(
        conn: socket.socket, content_type: str, parts: Iterable[bytes], pause: float = 0.0
    ) -> None:
        """A chunked response, one chunk per part, pausing after each; then the end."""
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nCache-Control: no-cache\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" % content_type.encode()
        )
        for part in parts:
            conn.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            time.sleep(pause)
        conn.sendall(b"0\r\n\r\n")
        conn.close()

    def _ws(self, conn: socket.socket, head: bytes) -> None:
        key = next(
            line.split(b":", 1)[1].strip()
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accept = base64.b64encode(hashlib.sha1(key + WS_GUID.encode()).digest())
        conn.sendall(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )
        conn.sendall(ws_frame(b"hello from upstream"))
        opcode, payload = read_ws_frame(conn)
        conn.sendall(ws_frame(b"echo: " + payload))
        time.sleep(0.5)
        conn.close()
