"""What a request asks for and what a response is, on mitmproxy test flows."""

from __future__ import annotations

import pytest
from mitmproxy import http

from proxy.classify import (
    RequestKind,
    charset,
    content_encoding,
    declared_length,
    is_html,
    is_sniffed,
    may_be_rewritten,
    mime_type,
    request_kind,
    restrict_accept_encoding,
    sniffs_as_html,
    strip_conditionals,
)
from tests.unit.proxy.conftest import html_response, request_flow

XHR = {"X-Requested-With": "XMLHttpRequest"}


def request(headers: dict[str, str] | None = None, method: str = "GET") -> http.Request:
    return request_flow("/page", headers, method).request


@pytest.mark.parametrize(
    "headers, kind",
    [
        ({"Sec-Fetch-Dest": "document"}, RequestKind.DOCUMENT),
        ({"Sec-Fetch-Dest": "Document"}, RequestKind.DOCUMENT),
        ({"Sec-Fetch-Dest": "iframe"}, RequestKind.FRAME),
        ({"Sec-Fetch-Dest": "frame"}, RequestKind.FRAME),
        ({"Sec-Fetch-Dest": "embed"}, RequestKind.FRAME),
        ({"Sec-Fetch-Dest": "object"}, RequestKind.FRAME),
        ({"Sec-Fetch-Dest": "empty"}, RequestKind.FRAGMENT),
        ({"Sec-Fetch-Dest": "script"}, RequestKind.SUBRESOURCE),
        ({"Sec-Fetch-Dest": "style"}, RequestKind.SUBRESOURCE),
        ({"Sec-Fetch-Dest": "image"}, RequestKind.SUBRESOURCE),
        ({"Sec-Fetch-Dest": "font"}, RequestKind.SUBRESOURCE),
        # No Fetch Metadata (curl, old agents): a navigation unless it says it is XHR.
        ({}, RequestKind.DOCUMENT),
        ({"X-Requested-With": "XMLHttpRequest"}, RequestKind.FRAGMENT),
        ({"X-Requested-With": "xmlhttprequest"}, RequestKind.FRAGMENT),
        ({"X-Requested-With": "com.example.app"}, RequestKind.DOCUMENT),
        # Fetch Metadata wins over X-Requested-With.
        ({"Sec-Fetch-Dest": "document", **XHR}, RequestKind.DOCUMENT),
        ({"Sec-Fetch-Dest": "script", **XHR}, RequestKind.SUBRESOURCE),
    ],
)
def test_request_kind_by_fetch_metadata_then_x_requested_with(
    headers: dict[str, str], kind: RequestKind
) -> None:
    assert request_kind(request(headers)) is kind


@pytest.mark.parametrize(
    "headers, method, expected",
    [
        ({"Sec-Fetch-Dest": "document"}, "GET", True),
        ({"Sec-Fetch-Dest": "iframe"}, "GET", True),
        ({"Sec-Fetch-Dest": "empty"}, "POST", True),
        ({}, "GET", True),
        ({"Sec-Fetch-Dest": "document"}, "HEAD", False),  # no body to rewrite
        ({"Sec-Fetch-Dest": "style"}, "GET", False),
        ({"Sec-Fetch-Dest": "image"}, "GET", False),
    ],
)
def test_may_be_rewritten(headers: dict[str, str], method: str, expected: bool) -> None:
    assert may_be_rewritten(request(headers, method)) is expected


@pytest.mark.parametrize(
    "content_type, expected",
    [
        ("text/html", True),
        ("text/html; charset=utf-8", True),
        ("TEXT/HTML ; charset=utf-8", True),
        ("application/xhtml+xml", True),
        ("text/plain", False),
        ("application/json", False),
        ("text/html-sandboxed", False),
        ("", False),
    ],
)
def test_is_html(content_type: str, expected: bool) -> None:
    assert is_html(http.Response.make(200, b"", {"Content-Type": content_type})) is expected


def test_is_html_without_content_type_is_false() -> None:
    response = http.Response.make(200, b"<html></html>")
    response.headers.pop("content-type", None)
    assert is_html(response) is False


@pytest.mark.parametrize(
    "content_type, expected",
    [
        ("text/html; charset=utf-8", "utf-8"),
        ("text/html;charset=ISO-8859-1", "ISO-8859-1"),
        ('text/html; charset="windows-1252"', "windows-1252"),
        ("text/html; Charset='shift_jis'", "shift_jis"),
        ("text/html; boundary=x; charset=koi8-r", "koi8-r"),
        ("text/html", None),
        ("text/html; charset=", None),
        ('text/html; charset=""', None),
        ("charset=utf-8", None),  # the media type itself is never a parameter
    ],
)
def test_charset(content_type: str, expected: str | None) -> None:
    assert charset(http.Response.make(200, b"", {"Content-Type": content_type})) == expected


@pytest.mark.parametrize(
    "values, mime, charset_",
    [
        ([], None, None),
        ([""], None, None),
        (["nonsense"], None, None),
        (["text/html; charset=koi8-r"], "text/html", "koi8-r"),
        # The last value that is a type wins, as a browser reads several (Fetch).
        (["text/plain", "text/html; charset=utf-8"], "text/html", "utf-8"),
        (["text/html", "text/plain"], "text/plain", None),
        (["text/html; charset=utf-8, text/plain"], "text/plain", None),
        (["text/html", "nonsense"], "text/html", None),
        # A value of the same type keeps the charset of the one before (Fetch).
        (["text/html; charset=koi8-r", "text/html"], "text/html", "koi8-r"),
        (["text/html; charset=koi8-r", "text/plain", "text/html"], "text/html", None),
        (["*/*"], None, None),
        # `*/*` is skipped, not read as the last type (Fetch, and Chromium's parser).
        (["text/html; charset=koi8-r, */*"], "text/html", "koi8-r"),
        (["text/html", "*/*"], "text/html", None),
    ],
)
def test_the_type_a_browser_reads(
    values: list[str], mime: str | None, charset_: str | None
) -> None:
    response = http.Response.make(200, b"")
    response.headers.pop("content-type", None)
    for value in values:
        response.headers.add("Content-Type", value)
    assert (mime_type(response), charset(response)) == (mime, charset_)
    assert is_sniffed(response) is (mime is None)
    response.headers["X-Content-Type-Options"] = "nosniff"
    assert is_sniffed(response) is False


@pytest.mark.parametrize(
    "body, expected",
    [
        (b"<!DOCTYPE html><html>", True),
        (b"\r\n\t <html lang='en'>", True),
        (b"<HEAD>", True),
        (b"<b>bold", True),
        (b"<br>", True),
        (b"<p>", True),
        (b"<!-- a comment -->", True),
        (b"<bx>", False),  # a tag of the set must end there
        (b"<html", False),
        (b"<?xml version='1.0'?><html>", False),
        (b"\xef\xbb\xbf<html>", False),  # a BOM first: text (WHATWG)
        (b"%PDF-1.4", False),
        (b"hello <html>", False),
    ],
)
def test_what_sniffs_as_html(body: bytes, expected: bool) -> None:
    assert sniffs_as_html(body) is expected


def test_content_encoding_and_declared_length() -> None:
    response = html_response(b"abc")
    assert content_encoding(response) == "identity"
    response.headers["content-encoding"] = " GZip "
    assert content_encoding(response) == "gzip"
    response.headers["content-encoding"] = ""
    assert content_encoding(response) == "identity"
    assert declared_length(html_response(b"abc")) == 3
    response.headers["content-length"] = "many"
    assert declared_length(response) is None
    del response.headers["content-length"]
    assert declared_length(response) is None


def test_strip_conditionals_removes_only_the_validators() -> None:
    req = request(
        {
            "If-None-Match": '"v1"',
            "If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT",
            "If-Match": '"v0"',
            "Accept": "text/html",
        }
    )
    strip_conditionals(req)
    assert "if-none-match" not in req.headers and "if-modified-since" not in req.headers
    assert req.headers["if-match"] == '"v0"' and req.headers["accept"] == "text/html"
    strip_conditionals(req)  # nothing left to remove is fine


@pytest.mark.parametrize(
    "offered, kept",
    [
        ("gzip, deflate, br, zstd", "gzip, deflate, br, zstd"),
        ("gzip, deflate, br, zstd, dcb, dcz", "gzip, deflate, br, zstd"),
        ("br;q=1.0, gzip;q=0.8, *;q=0.1", "br;q=1.0, gzip;q=0.8"),
        ("GZIP, Identity", "GZIP, Identity"),
        ("compress, dcz", "identity"),
        ("", "identity"),
    ],
)
def test_restrict_accept_encoding_offers_only_what_can_be_decoded(offered: str, kept: str) -> None:
    req = request({"Accept-Encoding": offered, "Available-Dictionary": ":abc=:"})
    restrict_accept_encoding(req)
    assert req.headers["accept-encoding"] == kept
    assert "available-dictionary" not in req.headers


def test_restrict_accept_encoding_leaves_a_request_without_one_alone() -> None:
    req = request({"Available-Dictionary": ":abc=:"})
    restrict_accept_encoding(req)
    assert "accept-encoding" not in req.headers
    assert req.headers["available-dictionary"] == ":abc=:"
