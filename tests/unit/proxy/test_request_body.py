"""The canonical form of a request body, which replay matches on."""

from __future__ import annotations

import hashlib

from mitmproxy.test import tutils

from proxy.request_body import (
    canonical_body,
    canonical_request_body,
    differing_fields,
    fields_of,
    without_fields,
)

FORM = "application/x-www-form-urlencoded"


def test_form_fields_are_sorted_by_name_and_repeated_ones_keep_their_order() -> None:
    one = canonical_body(FORM + "; charset=UTF-8", b"b=2&a=1&tag=y&tag=x&empty=")
    other = canonical_body(FORM, b"tag=y&a=1&empty=&tag=x&b=2")
    assert one == other == "form:a=1&b=2&empty=&tag=y&tag=x"
    assert canonical_body(FORM, b"tag=x&tag=y") != canonical_body(FORM, b"tag=y&tag=x")


def test_json_has_sorted_keys_and_no_spaces() -> None:
    assert canonical_body(
        "application/json", b'{ "b": [1, 2], "a": {"y": 1, "x": "\xc3\xa9"} }'
    ) == ('json:{"a":{"x":"é","y":1},"b":[1,2]}')
    assert canonical_body("application/vnd.api+json", b'{"a": 1}') == 'json:{"a":1}'


def test_other_bodies_are_their_hash_and_no_body_is_empty() -> None:
    digest = hashlib.sha256(b"\x00\x01").hexdigest()
    assert canonical_body("application/octet-stream", b"\x00\x01") == "sha256:" + digest
    assert canonical_body("application/json", b"{not json").startswith("sha256:")
    assert canonical_body("text/plain", b"a=1") == "sha256:" + hashlib.sha256(b"a=1").hexdigest()
    assert canonical_body(FORM, b"") == canonical_body("", b"") == ""


def test_a_request_s_body_is_read_without_its_content_encoding() -> None:
    request = tutils.treq(method=b"POST", content=b"")
    request.headers["content-type"] = FORM
    request.content = b"q=1"
    plain = canonical_request_body(request)
    request.encode("gzip")
    assert request.raw_content != b"q=1" and canonical_request_body(request) == plain == "form:q=1"


def test_ignored_fields_are_left_out_of_forms_and_json_objects() -> None:
    ignored = frozenset({"csrf"})
    assert without_fields("form:a=1&csrf=x", ignored) == "form:a=1"
    assert without_fields('json:{"a":1,"csrf":"x"}', ignored) == 'json:{"a":1}'
    assert without_fields('json:[{"csrf":"x"}]', ignored) == 'json:[{"csrf":"x"}]'  # top level only
    assert without_fields("sha256:ab", ignored) == "sha256:ab"
    assert without_fields("form:csrf=x", frozenset()) == "form:csrf=x"


def test_fields_are_told_where_a_body_has_them() -> None:
    assert fields_of("form:a=1&a=2") == {"a": ["1", "2"]}
    assert fields_of('json:{"a":{"b":1}}') == {"a": ['{"b":1}']}
    assert fields_of("") == {}
    assert fields_of("sha256:ab") is None and fields_of("json:[1]") is None
    assert differing_fields({"a": ["1"], "b": ["2"]}, {"a": ["1"], "b": ["3"], "c": [""]}) == [
        "b",
        "c",
    ]


def multipart(boundary: str, fields: list[tuple[str, bytes]]) -> tuple[str, bytes]:
    body = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        + value
        + b"\r\n"
        for name, value in fields
    )
    return f"multipart/form-data; boundary={boundary}", body + f"--{boundary}--\r\n".encode()


def test_a_multipart_form_is_its_fields_whatever_its_boundary() -> None:
    upload = b"\x89PNG" + bytes(range(256)) * 20
    one = canonical_body(*multipart("AaB03x", [("q", b"hats"), ("file", upload), ("a", b"1")]))
    other = canonical_body(
        *multipart("----7MA4YWx", [("a", b"1"), ("q", b"hats"), ("file", upload)])
    )
    digest = hashlib.sha256(upload).hexdigest()
    assert one == other == f"form:a=1&file=sha256%3A{digest}&q=hats"
    assert canonical_body(*multipart("b", [("q", b"shoes")])) == "form:q=shoes"
    assert canonical_body("multipart/form-data; boundary=b", b"junk").startswith("sha256:")
