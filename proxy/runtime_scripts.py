"""The client scripts the proxy serves itself (`r.js`, `i.js`: shifts/runtime.py) seen as
requests: which request asks for one, and the response that serves the current one.

Their URLs carry the script's version (`?v=`, a hash of its bytes), so a page recorded under an
older service asks for bytes the current service may no longer have: the recorder keeps the
scripts like any other response and a replay serves them from the recording.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from mitmproxy import http

from shifts.runtime import ASSETS, script_source, script_version


def runtime_script_asked(request: http.Request, prefix: str) -> str | None:
    """The client script a request asks for (`r.js`, `i.js`), or None."""
    if request.method not in ("GET", "HEAD") or not request.path.startswith(prefix):
        return None
    name = request.path[len(prefix) :].split("?")[0]
    return name if name in ASSETS else None


def version_asked(request: http.Request) -> str | None:
    """The version in the script's URL (`?v=`), as the page that loads it was served with."""
    found = parse_qs(urlsplit(request.path).query).get("v")
    return found[0] if found else None


def current_script_response(name: str) -> http.Response:
    return http.Response.make(
        200,
        script_source(name),
        {
            "Content-Type": "text/javascript; charset=utf-8",
            # The URL carries the script's version, so it may be cached for good.
            "Cache-Control": "public, max-age=31536000, immutable",
        },
    )


def is_current(name: str, version: str | None) -> bool:
    """Whether the version asked is the current script's: then its bytes are the same (the
    version is their hash)."""
    return version == script_version(name)
