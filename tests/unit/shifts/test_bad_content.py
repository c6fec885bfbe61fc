"""Hostile pages, one defined outcome each: shifted and still aligned, never an exception.

(50 MB pages go through the proxy in tests/integration/test_proxy_http.py: they stream.)"""

from __future__ import annotations

import pytest

from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import shift_offline
from shifts.alignment import check_alignment
from shifts.conditions import CONDITIONS

HEAD = b"<!DOCTYPE html><html><head><title>t</title></head><body>"
LINK = b"<a href='/x?a=1&b=2'>Sign in</a><button>Search</button>"
TAIL = b"</body></html>"
PAGES = {
    "nested 10,000 deep": HEAD + b"<div>" * 10_000 + LINK + b"</div>" * 10_000 + TAIL,
    "unclosed 10,000 deep": HEAD + b"<div><span>" * 5_000 + LINK + TAIL,
    "12 MB attribute": HEAD
    + b"<div data-x='"
    + b"a" * (12 * 1024 * 1024)
    + b"'>x</div>"
    + LINK
    + TAIL,
    # libxml2 checks each attribute against the element's others (quadratic): 10,000 take
    # 0.1 s to parse, 100,000 about 9 s (the shift runs off the event loop, see rewrite.py).
    "10,000 attributes": HEAD
    + b"<div "
    + b" ".join(b"a%d=1" % i for i in range(10_000))
    + b">x</div>"
    + LINK
    + TAIL,
    "NUL bytes in text": HEAD + b"<p>a\x00b</p>" + LINK + b"<p>after\x00</p>" + TAIL,
    "NUL bytes in markup": HEAD + b"<di\x00v cl\x00ass='c'>x</div>" + LINK + TAIL,
    "binary labelled HTML": bytes(range(256)) * 64,
    "binary after a valid head": HEAD + bytes(range(256)) * 16 + LINK + TAIL,
    "unknown charset": b"<!DOCTYPE html><html><head><meta charset='x-klingon'><title>t</title>"
    b"</head><body>" + LINK + b"\xe9\xff" + TAIL,
    "wrong charset": b"<html><head><meta charset='utf-8'></head><body>\xe9t\xe9 " + LINK + TAIL,
    "only a comment": b"<!-- nothing -->",
    "empty": b"",
}


@pytest.mark.parametrize("name", list(PAGES))
@pytest.mark.parametrize("condition", list(CONDITIONS))
def test_hostile_page_is_shifted_and_stays_aligned(name: str, condition: str) -> None:
    raw = PAGES[name]
    episode = new_episode(EpisodeConfig(condition=condition, seed=1))
    context, doc = shift_offline(episode, "http://127.0.0.1:9/", raw)
    out = doc.to_bytes() if doc.changed else raw
    assert isinstance(out, bytes)
    assert check_alignment(raw, out, context.site) == [], name
    if name == "nested 10,000 deep":
        assert out.count(b"<div") == 10_000  # libxml2's depth limit did not cut the tree
    if name == "12 MB attribute":
        assert b"a" * (12 * 1024 * 1024) in out
    if name == "NUL bytes in text" and doc.changed:
        assert b"after" in out  # a NUL does not end the document
