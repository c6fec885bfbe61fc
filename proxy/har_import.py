"""A HAR 1.2 document made into a recording a replay can answer from: the service's own export
(moved to another machine, say) or one another tool wrote (Playwright's `record_har_path`,
Chrome DevTools, Firefox).

Each entry becomes a recorded exchange as the recorder writes it (proxy/recorder.py): its body
as served (decoded from the HAR's text or base64), the canonical form of its request body
(proxy/request_body.py), and its place in the run: which entries are navigations (page loads,
numbered in order) and which page every other exchange belongs to. The service's own export
says so itself (`_skillshift`); another tool's HAR is read for it: a request the browser sent
for a document (`Sec-Fetch-Dest: document`, else the tool's `_resourceType`) that was not a
redirect is a navigation, and an exchange belongs to the last navigation that started before it.

What cannot be replayed faithfully is said, never guessed: a document that is no HAR, an entry
without a method, URL or status, a body that does not decode, a body kept in a separate file
(Playwright's `content: "attach"`) are errors naming the entry. A request that failed when it
was recorded (status 0: blocked, aborted) is left out and listed, so that a replay answers it
with a miss, as the recording had no answer for it either.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

from proxy.har import EXTENSION, SECRET_HEADERS, HarExtension, extension
from proxy.request_body import canonical_body

# What the service's own export carries of an entry and a replay reads back. Its body and
# source digests are not among them: the bodies are inline in the HAR and stored afresh.
KEPT_FIELDS = ("navigation", "load", "page_load", "shifts", "changes", "incomplete", "request_body")
# The bytes on the wire, which a HAR's decoded text no longer has.
WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
# A body size the tool did not know (HAR 1.2 has -1 for "not available").
UNKNOWN_SIZE = -1


class UnreadableHar(ValueError):
    """A HAR that cannot be made into a recording; the message names the entry and why."""


@dataclass
class ImportedEntry:
    """One exchange as the recording keeps it: its HAR entry (with `_skillshift`), and its
    body as served (None when the HAR holds none)."""

    entry: dict[str, Any]
    body: bytes | None


@dataclass
class Skipped:
    entry: int  # its place in the HAR's entries, from 1
    url: str
    why: str


@dataclass
class ImportedHar:
    entries: list[ImportedEntry]
    skipped: list[Skipped] = field(default_factory=list)
    creator: dict[str, Any] = field(default_factory=dict)

    @property
    def pages(self) -> int:
        return sum(1 for item in self.entries if extension(item.entry).get("navigation"))


def read_har(document: object, run: str) -> ImportedHar:
    """The HAR's exchanges as recorded entries of `run`, in the order they started."""
    log = document.get("log") if isinstance(document, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(log, dict) or not isinstance(entries, list):
        raise UnreadableHar("not a HAR: a HAR is a JSON object with log.entries, a list")
    creator = log.get("creator")
    numbered = [(number, _checked(number, entry)) for number, entry in enumerate(entries, 1)]
    # In the order they started (stable: a tool that wrote them in completion order keeps its
    # order among equal times), as the recorder numbers the loads.
    numbered.sort(key=lambda pair: _started(pair[0], pair[1]))
    found = ImportedHar([], creator=dict(creator) if isinstance(creator, dict) else {})
    load = 0
    page_load: int | None = None
    for number, entry in numbered:
        url = entry["request"]["url"]
        if entry["response"]["status"] == 0:
            found.skipped.append(Skipped(number, url, "it failed when it was recorded (status 0)"))
            continue
        extra = _own_fields(entry) if EXTENSION in entry else _read_fields(entry)
        if extra.get("navigation"):
            load += 1
            extra["load"] = load
        if extra.get("load"):
            page_load = extra["load"]
        extra["page_load"] = page_load
        extra["run"] = run
        body = _body(number, entry)
        if body is None:
            extra["body_omitted"] = "the HAR holds no body for it"
        found.entries.append(ImportedEntry(_recorded(entry, extra), body))
    return found


def recorded_episode(document: object) -> dict[str, Any]:
    """The episode the service's own export names (`log._skillshift.episode`: its
    configuration and beacon key, no token), or {} for another tool's HAR."""
    log = document.get("log") if isinstance(document, dict) else None
    own = log.get(EXTENSION) if isinstance(log, dict) else None
    found = own.get("episode") if isinstance(own, dict) else None
    return found if isinstance(found, dict) else {}


def _checked(number: int, entry: object) -> dict[str, Any]:
    """The entry, if it has what a replay matches and answers with."""
    where = f"entry {number}"
    if not isinstance(entry, dict):
        raise UnreadableHar(f"{where}: not a JSON object")
    request, response = entry.get("request"), entry.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise UnreadableHar(f"{where}: it needs a request and a response object")
    url = request.get("url")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
        raise UnreadableHar(f"{where}: request.url {url!r} is not an http(s) URL")
    where = f"entry {number} ({url})"
    if not isinstance(request.get("method"), str) or not request["method"]:
        raise UnreadableHar(f"{where}: request.method is missing")
    status = response.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 0 <= status <= 999:
        raise UnreadableHar(f"{where}: response.status {status!r} is not an HTTP status")
    for side, headers in (
        ("request", request.get("headers", [])),
        ("response", response.get("headers", [])),
    ):
        if not isinstance(headers, list) or not all(
            isinstance(h, dict)
            and isinstance(h.get("name"), str)
            and isinstance(h.get("value"), str)
            for h in headers
        ):
            raise UnreadableHar(f"{where}: {side}.headers is not a list of name and value")
    if not isinstance(response.get("content", {}), dict):
        raise UnreadableHar(f"{where}: response.content is not an object")
    return entry


def _started(number: int, entry: dict[str, Any]) -> float:
    started = entry.get("startedDateTime")
    try:
        return datetime.fromisoformat(str(started).replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise UnreadableHar(
            f"entry {number} ({entry['request']['url']}): startedDateTime {started!r} is not an "
            "ISO 8601 time"
        ) from None


def _own_fields(entry: dict[str, Any]) -> HarExtension:
    """The service's own export: what it recorded of the exchange (its load is numbered again,
    in case the HAR was cut to some of its pages)."""
    recorded = extension(entry)
    kept: dict[str, Any] = {name: recorded[name] for name in KEPT_FIELDS if name in recorded}  # type: ignore[literal-required]
    kept.pop("load", None)
    return kept  # type: ignore[return-value]


def _read_fields(entry: dict[str, Any]) -> HarExtension:
    """Another tool's entry: whether it is a navigation, and its request body's canonical form."""
    request = entry["request"]
    extra: HarExtension = {"request_body": _canonical_request_body(request)}
    if _is_navigation(entry):
        extra["navigation"] = True
    return extra


def _is_navigation(entry: dict[str, Any]) -> bool:
    """A top-level document the browser asked for and got (a redirect on the way is not one)."""
    status = entry["response"]["status"]
    if 300 <= status < 400:
        return False
    destination = _header(entry["request"], "sec-fetch-dest")
    if destination is not None:
        return destination.lower() == "document"  # an iframe's document is `iframe`
    return str(entry.get("_resourceType", "")).lower() == "document"


def _canonical_request_body(request: dict[str, Any]) -> str:
    posted = request.get("postData")
    if not isinstance(posted, dict):
        return ""
    mime = str(posted.get("mimeType") or _header(request, "content-type") or "")
    text = posted.get("text")
    if isinstance(text, str):
        return canonical_body(mime, text.encode("utf-8"))
    params = posted.get("params")
    if isinstance(params, list) and params:  # a form given only as its fields
        pairs = [
            (str(p.get("name", "")), str(p.get("value", ""))) for p in params if isinstance(p, dict)
        ]
        return canonical_body("application/x-www-form-urlencoded", urlencode(pairs).encode())
    return ""


def _body(number: int, entry: dict[str, Any]) -> bytes | None:
    """The response body the HAR holds, as bytes; None when it holds none."""
    content = entry["response"].get("content", {})
    where = f"entry {number} ({entry['request']['url']})"
    text = content.get("text")
    if text is None:
        if content.get("_file"):
            raise UnreadableHar(
                f"{where}: its body is in a separate file ({content['_file']}), not in the HAR: "
                "record the HAR with the bodies embedded (Playwright: record_har_content='embed')"
            )
        return b"" if _had_no_body(entry) else None  # else the tool did not keep it
    if not isinstance(text, str):
        raise UnreadableHar(f"{where}: response.content.text is not a string")
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except binascii.Error as error:
            raise UnreadableHar(f"{where}: response.content.text is not base64 ({error})") from None
    if EXTENSION in entry:
        return text.encode("utf-8")  # the service's export holds text only where it is UTF-8
    return _encoded(text, content.get("mimeType", "") or _header(entry["response"], "content-type"))


def _had_no_body(entry: dict[str, Any]) -> bool:
    """Whether an entry without text had an empty body, so nothing was left out: its size
    says so, HTTP gives it none (the answer to a HEAD, 1xx, 204, 304), or its size is unknown
    (-1: Playwright's for a body Chromium never handed over) and it is a redirect, whose body a
    browser never reads, or its Content-Length is 0."""
    response = entry["response"]
    size = response.get("content", {}).get("size")
    status = response["status"]
    if not size or entry["request"]["method"] == "HEAD" or status < 200 or status in (204, 304):
        return True
    redirect = 300 <= status < 400 and _header(response, "location") is not None
    return size == UNKNOWN_SIZE and (redirect or _header(response, "content-length") == "0")


def _encoded(text: str, mime_type: object) -> bytes:
    """The text in the charset its type names (a HAR holds text decoded, by that charset): the
    bytes the page was served as, when that charset can hold the text; else UTF-8."""
    charset = "utf-8"
    for parameter in str(mime_type or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        return text.encode(charset)
    except (LookupError, UnicodeEncodeError):
        return text.encode("utf-8")


def _recorded(entry: dict[str, Any], extra: HarExtension) -> dict[str, Any]:
    """The entry as the recorder writes it: without its body text (kept by hash) and without
    the headers of the wire form the text no longer has."""
    response = dict(entry["response"])
    content = {
        k: v for k, v in response.get("content", {}).items() if k not in ("text", "encoding")
    }
    response["content"] = content
    response["headers"] = [
        h for h in response.get("headers", []) if h["name"].lower() not in WIRE_HEADERS
    ]
    recorded = {k: v for k, v in entry.items() if k != EXTENSION}
    request = dict(entry["request"])
    request["headers"] = [
        h for h in request.get("headers", []) if h["name"].lower() not in SECRET_HEADERS
    ]
    recorded["request"] = request
    recorded["response"] = response
    recorded[EXTENSION] = extra
    if extra.get("page_load"):
        recorded["pageref"] = f"load_{extra['page_load']}"
    return recorded


def _header(message: dict[str, Any], name: str) -> str | None:
    for header in message.get("headers", []):
        if header["name"].lower() == name:
            return str(header["value"])
    return None
