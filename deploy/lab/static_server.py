#!/usr/bin/env python3
"""A tiny static file server for the lab's single-page apps (deploy/lab/spa.sh).

    python3 deploy/lab/static_server.py --dir DIR --port PORT [--host 127.0.0.1]

Serves the files under DIR. A path that names no file and has no extension (a client-side
route such as /about) gets DIR/index.html, so the app's router can take over; a missing path
with an extension (/assets/x.js) is a plain 404, so a broken asset reference shows up as one.
Content types come from a fixed table rather than the host's /etc/mime.types, and every
response is `Cache-Control: no-store` with no validators: the proxy under test and the browser
always get the whole current body, never a 304 or a stale copy. Python's standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import posixpath
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".webmanifest": "application/manifest+json",
    ".txt": "text/plain; charset=utf-8",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".ico": "image/x-icon",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".wasm": "application/wasm",
}


class Handler(BaseHTTPRequestHandler):
    root = "."
    server_version = "lab-static"
    protocol_version = "HTTP/1.1"  # keep-alive: a page's dozen assets reuse one connection

    def version_string(self) -> str:
        return self.server_version

    def do_GET(self) -> None:
        self.respond(body=True)

    def do_HEAD(self) -> None:
        self.respond(body=False)

    def resolve(self) -> str | None:
        """The file to send for the request path, or None for a 404."""
        path = posixpath.normpath(unquote(urlsplit(self.path).path))
        parts = [p for p in path.split("/") if p and p not in (".", "..")]
        candidate = os.path.join(self.root, *parts)
        if os.path.isdir(candidate):
            candidate = os.path.join(candidate, "index.html")
        if os.path.isfile(candidate):
            return candidate
        if not posixpath.splitext(path)[1]:
            return os.path.join(self.root, "index.html")  # a client-side route
        return None

    def respond(self, body: bool) -> None:
        file = self.resolve()
        if file is None or not os.path.isfile(file):
            data = b"not found\n"
            self.send_response(HTTPStatus.NOT_FOUND)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
        else:
            with open(file, "rb") as f:
                data = f.read()
            self.send_response(HTTPStatus.OK)
            ext = os.path.splitext(file)[1].lower()
            self.send_header("Content-Type", TYPES.get(ext, "application/octet-stream"))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if body:
            # A client that went away needs no answer (and no traceback in the log).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # the stdlib's signature
        sys.stderr.write(f"{self.log_date_time_string()} {format % args}\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a built single-page app.")
    parser.add_argument("--dir", required=True, help="the directory to serve (a built app)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    Handler.root = os.path.realpath(args.dir)
    if not os.path.isfile(os.path.join(Handler.root, "index.html")):
        parser.error(f"{args.dir} has no index.html")
    with (
        ThreadingHTTPServer((args.host, args.port), Handler) as server,
        contextlib.suppress(KeyboardInterrupt),
    ):
        server.serve_forever()


if __name__ == "__main__":
    main()
