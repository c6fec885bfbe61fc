"""The canonical form of a request body: what replay matches a request's body on, so that two
bodies a server reads alike (fields in another order, JSON spaced otherwise) are one body.

  ""                  no body
  "form:a=1&b=2"      application/x-www-form-urlencoded: its fields sorted by name (a field
                      given several times keeps the order of its values); multipart/form-data
                      alike (its boundary, random per request, left out), a part that is no
                      short text by its SHA-256
  'json:{"a":1}'      JSON (application/json, */*+json): keys sorted, no spaces
  "sha256:<hex>"      anything else (binary, JSON that does not parse): its hash

Form fields and a JSON object's top-level keys can be left out before two forms are compared
(`without_fields`): tokens a page makes anew on every load, such as CSRF tokens.
"""

from __future__ import annotations

import hashlib
import json
from email import policy
from email.parser import BytesParser
from typing import Any
from urllib.parse import parse_qsl, urlencode

from mitmproxy import http

FORM = "form:"
JSON = "json:"
HASHED = "sha256:"
FORM_TYPE = "application/x-www-form-urlencoded"
MULTIPART_TYPE = "multipart/form-data"
# A multipart part longer than this (a file, say) is compared by its hash.
MAX_PART_TEXT = 4096

Fields = dict[str, list[str]]


def canonical_request_body(request: http.Request) -> str:
    """The canonical form of the request's body as the server reads it: without its
    content-encoding when it has one that decodes, else as sent."""
    body = request.get_content(strict=False) or b""
    return canonical_body(request.headers.get("content-type", ""), body)


def canonical_body(content_type: str, body: bytes) -> str:
    """The body's canonical form, by its content type."""
    if not body:
        return ""
    mime = content_type.split(";")[0].strip().lower()
    if mime == FORM_TYPE:
        return FORM + _encode_form(parse_qsl(body.decode("utf-8", "replace"), True))
    if mime == MULTIPART_TYPE:
        parts = _multipart_fields(content_type, body)
        if parts is not None:
            return FORM + _encode_form(parts)
    if mime == "application/json" or mime.endswith("+json"):
        try:
            return JSON + _encode_json(json.loads(body))
        except ValueError:  # not JSON after all (UnicodeDecodeError is a ValueError too)
            pass
    return HASHED + hashlib.sha256(body).hexdigest()


def without_fields(canonical: str, ignored: frozenset[str]) -> str:
    """The canonical form without the named form fields or top-level JSON keys."""
    if not ignored:
        return canonical
    if canonical.startswith(FORM):
        pairs = parse_qsl(canonical.removeprefix(FORM), True)
        return FORM + _encode_form([(name, value) for name, value in pairs if name not in ignored])
    if canonical.startswith(JSON):
        value = json.loads(canonical.removeprefix(JSON))
        if isinstance(value, dict):
            value = {key: item for key, item in value.items() if key not in ignored}
        return JSON + _encode_json(value)
    return canonical


def fields_of(canonical: str) -> Fields | None:
    """A form's fields or a JSON object's top-level keys with their values ({} for no body);
    None for a body whose fields cannot be told (hashed, a JSON array or scalar)."""
    if not canonical:
        return {}
    if canonical.startswith(FORM):
        found: Fields = {}
        for name, value in parse_qsl(canonical.removeprefix(FORM), True):
            found.setdefault(name, []).append(value)
        return found
    if canonical.startswith(JSON):
        value = json.loads(canonical.removeprefix(JSON))
        if isinstance(value, dict):
            return {key: [_encode_json(item)] for key, item in value.items()}
    return None


def differing_fields(one: Fields, other: Fields) -> list[str]:
    """The names of the fields that one has and the other has not, or has with other values."""
    return sorted(name for name in one.keys() | other.keys() if one.get(name) != other.get(name))


def _multipart_fields(content_type: str, body: bytes) -> list[tuple[str, str]] | None:
    """The parts' names and values (None when it holds no named part): the email package's
    MIME parser reads each part's bytes exactly."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    fields = []
    for part in message.iter_parts() if message.is_multipart() else ():
        name = part.get_param("name", header="content-disposition")
        value = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(value, bytes):
            return None
        fields.append((name, _part_text(value)))
    return fields or None


def _part_text(value: bytes) -> str:
    if len(value) <= MAX_PART_TEXT:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return "sha256:" + hashlib.sha256(value).hexdigest()


def _encode_form(pairs: list[tuple[str, str]]) -> str:
    # sorted() is stable: the values of a repeated field stay in the order they were sent.
    return urlencode(sorted(pairs, key=lambda pair: pair[0]))


def _encode_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
