"""Which recorded exchanges answer a replayed request, and, when none does, how the nearest
recorded request differs from it.

A request matches a recorded one on its method, URL and canonical body (proxy/request_body.py),
less the fields the replay episode ignores for that URL (`replay_ignore`: in the query and in
the body). An entry recorded before request bodies were kept matches any body, as it did then.

Navigations step through the recording: the replay's n-th navigation is answered with the
recorded navigation `from_load + n - 1` when it asked for that URL, else with the nearest
recorded navigation of the URL after it (or, failing that, before it). Other requests get the
responses recorded for the page being replayed (the latest page at or before it that made the
request, else the first): all of them, in recorded order, for the caller to hand out one by
one to identical requests.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

from mitmproxy import http

from proxy.har import extension, load_of
from proxy.request_body import (
    canonical_request_body,
    differing_fields,
    fields_of,
    without_fields,
)

Entry = dict[str, Any]


class IgnoredFields:
    """A replay episode's `replay_ignore`: per path prefix (`/login`) or URL prefix
    (`http://host/login`), the names of the query and body fields a match leaves out."""

    def __init__(self, rules: Mapping[str, Sequence[str]] | None = None) -> None:
        self._rules = [(prefix, frozenset(names)) for prefix, names in (rules or {}).items()]

    def for_url(self, url: str) -> frozenset[str]:
        if not self._rules:
            return frozenset()
        split = urlsplit(url)
        path = split.path or "/"
        resource = f"{split.scheme}://{split.netloc}{path}"
        found: set[str] = set()
        for prefix, names in self._rules:
            if path.startswith(prefix) if prefix.startswith("/") else resource.startswith(prefix):
                found |= names
        return frozenset(found)


@dataclass(frozen=True)
class RequestKey:
    """What a request is matched on."""

    method: str
    url: str
    # The canonical body; None for an entry recorded before bodies were kept (any body matches).
    body: str | None

    def without(self, ignored: frozenset[str]) -> RequestKey:
        if not ignored:
            return self
        return replace(
            self,
            url=_url_without_fields(self.url, ignored),
            body=None if self.body is None else without_fields(self.body, ignored),
        )

    def answers(self, asked: RequestKey) -> bool:
        """Whether this recorded request answers the one asked."""
        return (
            self.method == asked.method
            and self.url == asked.url
            and (self.body is None or self.body == asked.body)
        )


def request_key(request: http.Request) -> RequestKey:
    return RequestKey(request.method, request.pretty_url, canonical_request_body(request))


def recorded_key(entry: Entry) -> RequestKey:
    request = entry["request"]
    return RequestKey(request["method"], request["url"], extension(entry).get("request_body"))


@dataclass
class Difference:
    """How the nearest recorded request differs from the one asked: the parts (`origin`,
    `method`, `path`, `query`, `body`) and, where they have fields, which fields."""

    parts: list[str]
    nearest: RequestKey | None = None
    query_fields: list[str] = field(default_factory=list)
    body_fields: list[str] = field(default_factory=list)

    def fields(self) -> dict[str, Any]:
        """The `replay_miss` event's fields."""
        found: dict[str, Any] = {"differs": self.parts}
        found["nearest"] = (
            {"method": self.nearest.method, "url": self.nearest.url} if self.nearest else None
        )
        if "query" in self.parts:
            found["query_fields"] = self.query_fields
        if "body" in self.parts:
            found["body_fields"] = self.body_fields
        return found

    def distance(self) -> tuple[int, ...]:
        # A recorded request on another path is farther than one with another method, which is
        # farther than one whose query or body differ (by how many fields).
        return (
            "path" in self.parts,
            "method" in self.parts,
            "query" in self.parts,
            len(self.query_fields),
            "body" in self.parts,
            len(self.body_fields),
        )


class RecordedExchanges:
    """A recording's entries, indexed by method and URL less its query."""

    def __init__(self, entries: list[Entry]) -> None:
        self._keyed = [(recorded_key(entry), entry) for entry in entries]
        self._by_resource: dict[tuple[str, str], list[tuple[RequestKey, Entry]]] = defaultdict(list)
        for key, entry in self._keyed:
            self._by_resource[(key.method, _resource(key.url))].append((key, entry))

    def matching(self, asked: RequestKey, ignored: frozenset[str]) -> list[Entry]:
        """Every recorded exchange that answers the request, in recorded order."""
        asked = asked.without(ignored)
        return [
            entry
            for key, entry in self._by_resource.get((asked.method, _resource(asked.url)), [])
            if key.without(ignored).answers(asked)
        ]

    def navigation(self, asked: RequestKey, ignored: frozenset[str], expected: int) -> list[Entry]:
        """The answer to the replay's navigation expected to be recorded load `expected`."""
        found = self.matching(asked, ignored)
        pages = [e for e in found if extension(e).get("navigation")]
        if not pages:
            return _of_page(found, expected)
        later = [e for e in pages if load_of(e) >= expected]
        return [min(later, key=load_of) if later else max(pages, key=load_of)]

    def subresource(
        self, asked: RequestKey, ignored: frozenset[str], page_load: int | None
    ) -> list[Entry]:
        """The answers recorded for the page being replayed, in recorded order."""
        return _of_page(self.matching(asked, ignored), page_load)

    def nearest(self, asked: RequestKey, ignored: frozenset[str]) -> Difference:
        """The recorded request of the same origin nearest the one asked, and how it differs."""
        asked = asked.without(ignored)
        best: Difference | None = None
        for key, _ in self._keyed:
            if _origin(key.url) != _origin(asked.url):
                continue
            found = _difference(key.without(ignored), asked)
            if best is None or found.distance() < best.distance():
                best = found
        return best or Difference(["origin"])


def _of_page(found: list[Entry], page_load: int | None) -> list[Entry]:
    if not found:
        return []
    pages = [_page_of(entry) for entry in found]
    before = [page for page in pages if page <= (page_load or 0)]
    chosen = max(before) if before else pages[0]
    return [entry for entry, page in zip(found, pages, strict=True) if page == chosen]


def _page_of(entry: Entry) -> int:
    return extension(entry).get("page_load") or 0


def _difference(recorded: RequestKey, asked: RequestKey) -> Difference:
    found = Difference([], nearest=recorded)
    if recorded.method != asked.method:
        found.parts.append("method")
    mine, theirs = urlsplit(recorded.url), urlsplit(asked.url)
    if mine.path != theirs.path:
        found.parts.append("path")
    if mine.query != theirs.query:
        found.parts.append("query")
        found.query_fields = differing_fields(
            parse_qs(mine.query, True), parse_qs(theirs.query, True)
        )
    if recorded.body is not None and recorded.body != asked.body:
        found.parts.append("body")
        one, other = fields_of(recorded.body), fields_of(asked.body or "")
        if one is not None and other is not None:
            found.body_fields = differing_fields(one, other)
    return found


def _url_without_fields(url: str, ignored: frozenset[str]) -> str:
    split = urlsplit(url)
    if not split.query:
        return url
    kept = [(name, value) for name, value in parse_qsl(split.query, True) if name not in ignored]
    return urlunsplit(split._replace(query=urlencode(kept)))


def _resource(url: str) -> str:
    return url.split("?", 1)[0].split("#", 1)[0]


def _origin(url: str) -> str:
    split = urlsplit(url)
    return f"{split.scheme}://{split.netloc}"
