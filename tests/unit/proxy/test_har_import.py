"""A HAR made into recorded entries: which entries are page loads, which page the others belong
to, their bodies and request bodies as a replay matches them, and every HAR it cannot replay
faithfully refused with the entry named."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from proxy.har import extension
from proxy.har_import import UnreadableHar, read_har, recorded_episode
from proxy.request_body import canonical_body

RUN = "1.000000/0"


def entry(
    url: str,
    started: str = "2026-01-01T00:00:00.000Z",
    status: int = 200,
    dest: str | None = None,
    mime: str = "text/html",
    text: str | None = "<p>hi</p>",
    **extra: Any,
) -> dict[str, Any]:
    headers = [{"name": "Sec-Fetch-Dest", "value": dest}] if dest else []
    content: dict[str, Any] = {"size": len(text or ""), "mimeType": mime}
    if text is not None:
        content["text"] = text
    return {
        "startedDateTime": started,
        "request": {"method": "GET", "url": url, "headers": headers},
        "response": {
            "status": status,
            "headers": [
                {"name": "Content-Type", "value": mime},
                {"name": "Content-Encoding", "value": "gzip"},
                {"name": "Content-Length", "value": "12"},
            ],
            "content": content,
        },
        **extra,
    }


def har(*entries: dict[str, Any], **log: Any) -> dict[str, Any]:
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "Tool", "version": "1"},
            "entries": list(entries),
            **log,
        }
    }


def test_documents_are_page_loads_numbered_in_the_order_they_started() -> None:
    found = read_har(
        har(
            entry("http://a/two", "2026-01-01T00:00:02Z", dest="document"),
            entry("http://a/style.css", "2026-01-01T00:00:01.5Z", dest="style", mime="text/css"),
            entry("http://a/one", "2026-01-01T00:00:01Z", dest="document"),
            entry("http://a/frame", "2026-01-01T00:00:03Z", dest="iframe"),
            entry("http://a/moved", "2026-01-01T00:00:04Z", status=302, dest="document", text=""),
            entry("http://a/chrome", "2026-01-01T00:00:05Z", _resourceType="document"),
        ),
        RUN,
    )
    rows = [
        (
            item.entry["request"]["url"],
            extension(item.entry).get("load"),
            extension(item.entry)["page_load"],
        )
        for item in found.entries
    ]
    assert rows == [
        ("http://a/one", 1, 1),
        ("http://a/style.css", None, 1),  # belongs to the page that started before it
        ("http://a/two", 2, 2),
        ("http://a/frame", None, 2),  # an iframe's document is no page load
        ("http://a/moved", None, 2),  # nor is a redirect on the way to one
        ("http://a/chrome", 3, 3),  # no Sec-Fetch-Dest: the tool's resource type says
    ]
    assert found.pages == 3
    assert all(extension(item.entry)["run"] == RUN for item in found.entries)
    assert found.entries[0].entry["pageref"] == "load_1"


def test_bodies_are_the_bytes_served_and_the_wire_headers_are_dropped() -> None:
    latin = entry("http://a/", dest="document", mime="text/html; charset=iso-8859-1", text="café")
    latin["request"]["headers"] += [
        {"name": "X-SkillShift-Episode", "value": "id:token"},
        {"name": "Proxy-Authorization", "value": "Basic aWQ6dG9rZW4="},
    ]
    binary = entry(
        "http://a/i.png", mime="image/png", text=base64.b64encode(b"\x89PNG\x00").decode()
    )
    binary["response"]["content"]["encoding"] = "base64"
    missing = entry("http://a/gone.js", mime="text/javascript", text=None)
    missing["response"]["content"]["size"] = 1234  # a body the tool did not keep
    empty = entry("http://a/204", status=204, text=None)
    empty["response"]["content"]["size"] = 0
    found = read_har(har(latin, binary, missing, empty), RUN)
    bodies = [item.body for item in found.entries]
    assert bodies == ["café".encode("iso-8859-1"), b"\x89PNG\x00", None, b""]
    assert extension(found.entries[2].entry)["body_omitted"] == "the HAR holds no body for it"
    assert found.entries[0].entry["request"]["headers"] == [
        {"name": "Sec-Fetch-Dest", "value": "document"}  # never the episode's credentials
    ]
    first = found.entries[0].entry["response"]
    assert [h["name"] for h in first["headers"]] == ["Content-Type"]  # the text is decoded
    assert "text" not in first["content"]  # kept by hash, not inline


def as_playwright_writes_it(item: dict[str, Any], content_length: str | None) -> dict[str, Any]:
    """An entry whose body Chromium never handed over: size -1, no text."""
    item["response"]["content"] = {"size": -1, "mimeType": "x-unknown", "compression": 0}
    item["response"]["headers"] = [{"name": "Location", "value": "/orders/"}]
    if content_length is not None:
        item["response"]["headers"].append({"name": "Content-Length", "value": content_length})
    return item


def test_a_body_of_unknown_size_is_empty_where_there_was_none() -> None:
    """Playwright's size -1 with no text: an empty body for a redirect (a 301, a form's 303,
    whatever its Content-Length), a 304 and a Content-Length 0; the body of a 200 it does not
    know is not kept."""
    redirect = as_playwright_writes_it(entry("http://a/orders", status=301, text=None), "0")
    form = as_playwright_writes_it(entry("http://a/post", status=303, text=None), None)
    form["request"]["method"] = "POST"
    not_modified = as_playwright_writes_it(entry("http://a/style.css", status=304), None)
    emptied = as_playwright_writes_it(entry("http://a/ping", status=200, text=None), "0")
    unknown = as_playwright_writes_it(entry("http://a/data", status=200, text=None), None)
    kept_elsewhere = entry("http://a/moved", status=302, text=None)
    kept_elsewhere["response"]["headers"] = [{"name": "Location", "value": "/"}]
    kept_elsewhere["response"]["content"]["size"] = 120  # a body the tool knew and did not keep
    page = entry("http://a/orders/", "2026-01-01T00:00:01Z", dest="document")
    found = read_har(har(redirect, form, not_modified, emptied, unknown, kept_elsewhere, page), RUN)
    assert [item.body for item in found.entries] == [b"", b"", b"", b"", None, None, b"<p>hi</p>"]
    assert ["body_omitted" in extension(item.entry) for item in found.entries] == [
        False,
        False,
        False,
        False,
        True,
        True,
        False,
    ]


def test_a_request_body_is_matched_in_its_canonical_form() -> None:
    posted = entry("http://a/api", dest="empty", mime="application/json", text="{}")
    posted["request"]["method"] = "POST"
    posted["request"]["postData"] = {"mimeType": "application/json", "text": '{"b": 2, "a": 1}'}
    form = entry("http://a/form", dest="document")
    form["request"]["method"] = "POST"
    form["request"]["postData"] = {
        "mimeType": "application/x-www-form-urlencoded",
        "params": [{"name": "z", "value": "1"}, {"name": "a", "value": "x y"}],
    }
    found = read_har(har(posted, form), RUN)
    assert extension(found.entries[0].entry)["request_body"] == 'json:{"a":1,"b":2}'
    assert extension(found.entries[1].entry)["request_body"] == canonical_body(
        "application/x-www-form-urlencoded", b"a=x+y&z=1"
    )


def test_a_request_that_failed_when_recorded_is_left_out_and_said() -> None:
    found = read_har(
        har(entry("http://a/", dest="document"), entry("http://a/ad.js", status=0)), RUN
    )
    assert [item.entry["request"]["url"] for item in found.entries] == ["http://a/"]
    assert [(s.entry, s.url) for s in found.skipped] == [(2, "http://a/ad.js")]


def test_the_services_own_export_keeps_what_it_recorded() -> None:
    own = entry("http://a/", dest="document")
    own["_skillshift"] = {
        "navigation": True,
        "load": 7,  # the HAR may hold a later part of a run: numbered again
        "shifts": {"locator_drift": {"changed": 3}},
        "changes": {"elements": []},
        "request_body": "",
        "body": "0" * 64,  # the old recording's digests are not carried over
        "run": "old",
    }
    episode = {"condition": "Src-Perc", "seed": 3, "beacon_key": "k"}
    document = har(own, _skillshift={"episode": episode})
    found = read_har(document, RUN)
    extra = extension(found.entries[0].entry)
    assert extra["load"] == 1 and extra["shifts"] == {"locator_drift": {"changed": 3}}
    assert "body" not in extra and extra["run"] == RUN
    assert recorded_episode(document) == episode
    assert recorded_episode(har()) == {}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "not a HAR"),
        ({"log": {}}, "not a HAR"),
        (har("nope"), "entry 1: not a JSON object"),
        (har(entry("http://a/"), {"request": {}}), "entry 2: it needs a request and a response"),
        (har(entry("ftp://a/")), "entry 1: request.url 'ftp://a/' is not an http(s) URL"),
        (har(entry("http://a/", status="200")), "entry 1 (http://a/): response.status '200'"),
        (har(entry("http://a/", started="yesterday")), "startedDateTime 'yesterday'"),
    ],
)
def test_a_har_it_cannot_replay_is_refused_naming_the_entry(document: Any, message: str) -> None:
    with pytest.raises(UnreadableHar, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_har(document, RUN)


def test_bodies_it_cannot_read_are_refused_naming_the_entry() -> None:
    broken = entry("http://a/i.png", text="not base64!")
    broken["response"]["content"]["encoding"] = "base64"
    with pytest.raises(UnreadableHar, match=r"entry 1 \(http://a/i.png\): .* not base64"):
        read_har(har(broken), RUN)
    attached = entry("http://a/", text=None)
    attached["response"]["content"]["_file"] = "75841e.html"
    with pytest.raises(UnreadableHar, match="separate file .*record_har_content='embed'"):
        read_har(har(attached), RUN)
    headers = entry("http://a/")
    headers["response"]["headers"] = {"Content-Type": "text/html"}
    with pytest.raises(UnreadableHar, match="response.headers is not a list"):
        read_har(har(headers), RUN)
