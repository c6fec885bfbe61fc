"""Hostile pages, one defined outcome each: shifted and still aligned, or refused saying why
(a page the parser cannot read whole), never another exception.

(50 MB pages go through the proxy in tests/integration/test_proxy_http.py: they stream.)"""

from __future__ import annotations

import pytest

from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import shift_offline
from shifts.alignment import check_alignment
from shifts.conditions import CONDITIONS
from shifts.document import HtmlDocument
from shifts.parsing import UnparsablePage
from tests.helpers.pages import RELABEL_ONLY

HEAD = b"<!DOCTYPE html><html><head><title>t</title></head><body>"
LINK = b"<a href='/x?a=1&b=2'>Sign in</a><button>Search</button>"
TAIL = b"</body></html>"
PAGES = {
    # Deeper than libxml2's default 256 levels, and than Chromium's 512.
    "nested 2,000 deep": HEAD + b"<div>" * 2_000 + LINK + b"</div>" * 2_000 + TAIL,
    "unclosed 2,000 deep": HEAD + b"<div><span>" * 1_000 + LINK + TAIL,
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
    if name.endswith("2,000 deep"):  # libxml2's depth limit did not cut the tree
        assert HtmlDocument(out).tree.find(".//button") is not None
        assert out.count(b"<div") == (2_000 if name.startswith("nested") else 1_000)
    if name == "12 MB attribute":
        assert b"a" * (12 * 1024 * 1024) in out
    if name == "NUL bytes in text" and doc.changed:
        assert b"after" in out  # a NUL does not end the document


def test_a_page_past_what_the_parser_reads_is_refused_wherever_it_is_parsed() -> None:
    """Past 2,048 levels libxml2 stops, dropping the rest: a shift that parses the page
    refuses it (the proxy answers 502, saying so); a popup goes in without a parse."""
    deep = HEAD + b"<div>" * 10_000 + LINK + b"</div>" * 10_000 + TAIL
    with pytest.raises(UnparsablePage, match="deeper than the parser reads"):
        shift_offline(new_episode(EpisodeConfig(**RELABEL_ONLY)), "http://127.0.0.1:9/", deep)
    popup = EpisodeConfig(condition="Src-Exec", regime="multiple", seed=1)
    _, doc = shift_offline(new_episode(popup), "http://127.0.0.1:9/", deep)
    assert doc.changed and doc.to_bytes().count(b"<div>") == 10_000
