"""What a request asks for and what a response is: the pipeline's routing decisions.

Pure functions over mitmproxy's Request/Response, so they are tested on test flows directly.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from mitmproxy import http

HTML_TYPES = ("text/html", "application/xhtml+xml")
DECODABLE_ENCODINGS = ("gzip", "deflate", "br", "zstd")
CONDITIONAL_HEADERS = ("if-none-match", "if-modified-since")
# Types that say nothing of what the body is: a browser sniffs it as if there were none.
UNKNOWN_TYPES = ("unknown/unknown", "application/unknown")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+")
_SNIFFED_HTML = re.compile(
    rb"[\t\n\x0c\r ]*(?:<!DOCTYPE HTML|<HTML|<HEAD|<SCRIPT|<IFRAME|<H1|<DIV|<FONT|<TABLE|<A"
    rb"|<STYLE|<TITLE|<BODY|<BR|<B|<P|<!--)[ >]",
    re.IGNORECASE,
)


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


def is_same_origin_fetch(request: http.Request) -> bool:
    """Whether the browser says the request is its page's own origin's (Fetch Metadata), as it
    does when the page sends no Referer (`Referrer-Policy: no-referrer`: phpMyAdmin's)."""
    site: str = request.headers.get("sec-fetch-site", "")
    return site.lower() == "same-origin"


def may_be_rewritten(request: http.Request) -> bool:
    """Whether the response to this request could be HTML we rewrite (decided before it exists)."""
    return request.method != "HEAD" and request_kind(request) is not RequestKind.SUBRESOURCE


@dataclass(frozen=True)
class BodyType:
    """What a browser takes a response's body for, by its headers: the type of its
    Content-Type (Fetch's "extract a MIME type": of every value, each comma-separated part,
    the last one whose type/subtype is one, other than `*/*`, which Fetch skips: `text/html,
    */*` is HTML), that value's charset (or that of the value of the same type before it, as
    Fetch keeps it), and whether sniffing is refused (`nosniff`). `mime`
    None: no type the browser reads (no header, or nonsense), and the body decides."""

    mime: str | None
    charset: str | None
    nosniff: bool

    @classmethod
    def of(cls, content_types: Iterable[str], content_type_options: str = "") -> BodyType:
        return _read_body_type(tuple(content_types), content_type_options)

    @property
    def is_html(self) -> bool:
        return self.mime in HTML_TYPES

    @property
    def is_sniffed(self) -> bool:
        """Whether a browser decides what the body is by its first bytes: it has no type that
        says (WHATWG MIME Sniffing), and sniffing is not refused."""
        return self.mime in (None, *UNKNOWN_TYPES) and not self.nosniff

    def renders_as_html(self, body: bytes) -> bool:
        return self.is_html or (self.is_sniffed and sniffs_as_html(body))


@functools.lru_cache(maxsize=256)  # (read at every response, of a few distinct headers)
def _read_body_type(content_types: tuple[str, ...], content_type_options: str) -> BodyType:
    mime: str | None = None
    charset: str | None = None
    for header in content_types:
        for part in header.split(","):
            essence, *parameters = part.split(";")
            kind, slash, subtype = essence.strip().lower().partition("/")
            if (kind, subtype) == ("*", "*"):
                continue
            if slash and _TOKEN.fullmatch(kind) and _TOKEN.fullmatch(subtype):
                given = _charset_of(parameters)
                # A value of the type before keeps its charset unless it gives one.
                if f"{kind}/{subtype}" != mime or given is not None:
                    charset = given
                mime = f"{kind}/{subtype}"
    return BodyType(
        mime=mime,
        charset=charset,
        nosniff=content_type_options.strip().lower() == "nosniff",
    )


def _charset_of(parameters: list[str]) -> str | None:
    for parameter in parameters:
        name, _, value = parameter.strip().partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def body_type(response: http.Response) -> BodyType:
    return BodyType.of(
        response.headers.get_all("content-type"),
        response.headers.get("x-content-type-options", ""),
    )


# The types a JavaScript body is served as (what a browser runs as a script; `module` as some
# servers name a module's): read as a script's by the learner, run by a page that asked for one.
JS_TYPES = (
    "text/javascript",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "application/x-ecmascript",
    "text/ecmascript",
    "module",
)


def mime_type(response: http.Response) -> str | None:
    """The type a browser reads the response as, by its headers; None when the body decides."""
    return body_type(response).mime


def is_html(response: http.Response) -> bool:
    return body_type(response).is_html


def is_sniffed(response: http.Response) -> bool:
    return body_type(response).is_sniffed


def sniffs_as_html(body: bytes) -> bool:
    """Whether a browser sniffing the body takes it for HTML (WHATWG MIME Sniffing, "identify
    an unknown MIME type": after whitespace, one of a set of tags, case-insensitive, followed by
    a space or `>`)."""
    return _SNIFFED_HTML.match(body) is not None


def content_encoding(response: http.Response) -> str:
    return coding_of(response.headers.get("content-encoding", ""))


def coding_of(content_encoding: str) -> str:
    """A Content-Encoding header's value as `proxy.codec` takes it (none: `identity`)."""
    return content_encoding.strip().lower() or "identity"


def declared_length(response: http.Response) -> int | None:
    try:
        return int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None


def charset(response: http.Response) -> str | None:
    return body_type(response).charset


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
