"""What a request asks for and what a response is: the pipeline's routing decisions.

Pure functions over mitmproxy's Request/Response, so they are tested on test flows directly.
"""

from __future__ import annotations

from enum import StrEnum

from mitmproxy import http

HTML_TYPES = ("text/html", "application/xhtml+xml")
DECODABLE_ENCODINGS = ("gzip", "deflate", "br", "zstd")
CONDITIONAL_HEADERS = ("if-none-match", "if-modified-since")


class RequestKind(StrEnum):
    DOCUMENT = "document"  # top-level navigation: perceptual shifts and popups
    FRAME = "frame"  # iframe/frame document: perceptual shifts, never popups
    FRAGMENT = "fragment"  # fetch/XHR: perceptual shifts on HTML fragments, never popups
    SUBRESOURCE = "subresource"  # script, style, image, font...: never rewritten


def request_kind(request: http.Request) -> RequestKind:
    """Classify by Fetch Metadata; clients without it (curl, old agents) count as navigations
    unless they mark themselves as XHR."""
    dest = request.headers.get("sec-fetch-dest", "").lower()
    if dest == "document":
        return RequestKind.DOCUMENT
    if dest in ("iframe", "frame", "embed", "object"):
        return RequestKind.FRAME
    if dest == "empty":
        return RequestKind.FRAGMENT
    if dest:
        return RequestKind.SUBRESOURCE
    if request.headers.get("x-requested-with", "").lower() == "xmlhttprequest":
        return RequestKind.FRAGMENT
    return RequestKind.DOCUMENT


def may_be_rewritten(request: http.Request) -> bool:
    """Whether the response to this request could be HTML we rewrite (decided before it exists)."""
    return request.method != "HEAD" and request_kind(request) is not RequestKind.SUBRESOURCE


def is_html(response: http.Response) -> bool:
    mime = response.headers.get("content-type", "").split(";")[0].strip().lower()
    return mime in HTML_TYPES


def content_encoding(response: http.Response) -> str:
    return response.headers.get("content-encoding", "identity").strip().lower() or "identity"


def declared_length(response: http.Response) -> int | None:
    try:
        return int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None


def charset(response: http.Response) -> str | None:
    for part in response.headers.get("content-type", "").split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def strip_conditionals(request: http.Request) -> None:
    """Ask for a full body, so the upstream never answers 304 for a page we must rewrite."""
    for name in CONDITIONAL_HEADERS:
        request.headers.pop(name, None)


def restrict_accept_encoding(request: http.Request) -> None:
    """Offer only encodings we can decode (Chromium may offer dictionary compression)."""
    offered = request.headers.get("accept-encoding")
    if offered is None:
        return
    kept = [
        item.strip()
        for item in offered.split(",")
        if item.split(";")[0].strip().lower() in (*DECODABLE_ENCODINGS, "identity")
    ]
    request.headers["accept-encoding"] = ", ".join(kept) if kept else "identity"
    request.headers.pop("available-dictionary", None)
