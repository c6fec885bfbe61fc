"""A URL the service is asked to fetch (a check, a learn, the browser oracle's page): what
makes one unusable, said before anything is fetched, rather than as an error of the HTTP
library halfway through (an unparseable URL, a port no socket takes)."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

MAX_PORT = 65535


def url_problem(url: str) -> str | None:
    """Why `url` cannot be fetched, or None: not http(s), no host, a port out of range, or
    anything else httpx (which sends it) or the standard library (which joins URLs with it)
    cannot read."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        return f"{url!r} is not a URL that can be fetched ({error})"
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return f"{url!r} is not an http(s) URL"
    if parsed.port is not None and not 0 < parsed.port <= MAX_PORT:
        return f"{url!r} names port {parsed.port}, outside 1-{MAX_PORT}"
    try:
        urlsplit(url).port  # noqa: B018 - (raises on what httpx lets through: "http://[")
    except ValueError as error:
        return f"{url!r} is not a URL that can be fetched ({error})"
    return None
