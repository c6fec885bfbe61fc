"""Site profiles: matching a page to its app (signatures, then host, then generic), that every
shipped profile is well-formed and recognises real saved pages of its app and no other's, and
the literal prefilter of signatures (`_required_literal`) against the regex it stands for."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml.cssselect import CSSSelector

from shifts import native
from sites import (
    GENERIC,
    GITLAB,
    HEAD_BYTES,
    MAGENTO,
    PROFILES,
    WORDPRESS,
    _match_head,
    _Profiles,
    holds_any_read,
    match_profile,
)
from sites.profile import SiteProfile, _required_literal, _signature
from tests.helpers.fixtures import fixture_pages

SPECIFIC = [GITLAB, MAGENTO, WORDPRESS]
PAGES = fixture_pages()
PLAIN = b"<!DOCTYPE html><html><head><title>t</title></head><body>hello</body></html>"


def head(page: Path) -> bytes:
    return page.read_bytes()[:HEAD_BYTES]


def test_the_shipped_profiles() -> None:
    assert set(PROFILES) == {"gitlab", "magento", "wordpress", "generic"}
    assert {fixture.parent.name for fixture in PAGES} == {"gitlab", "magento", "wordpress"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.name[:24]}")
def test_each_app_page_matches_its_profile_and_no_other(page: Path) -> None:
    own = PROFILES[page.parent.name]
    assert own.matches_page(head(page))
    for other in SPECIFIC:
        if other is not own:
            assert not other.matches_page(head(page)), other.name
    assert not GENERIC.matches_page(head(page))  # no signatures: matched by host only
    # Whatever the host says: signatures win, even on another app's port.
    assert match_profile("127.0.0.1:8023", page.read_bytes()) is own
    assert match_profile("unknown.test:80", page.read_bytes()) is own


@pytest.mark.parametrize("profile", list(PROFILES.values()), ids=lambda p: p.name)
def test_signatures_compile_and_selectors_parse_as_css(profile: SiteProfile) -> None:
    for signature in profile.signatures:
        re.compile(signature.encode())
        literal, regex = _signature(signature)
        assert regex.pattern == signature.encode() and isinstance(literal, bytes)
    selectors = [
        *profile.protected_selectors,
        *profile.nav_lists,
        *profile.sidebars,
        *profile.synthetic_target.reorder_selectors,
    ]
    assert profile.protected_selectors
    for selector in selectors:
        CSSSelector(selector)  # raises on a selector cssselect cannot parse
    assert profile.protected_selectors[:2] == ("h1", "title")


@pytest.mark.parametrize("profile", SPECIFIC, ids=lambda p: p.name)
def test_each_specific_profile_has_signatures_that_find_its_pages(profile: SiteProfile) -> None:
    pages = [page for page in PAGES if page.parent.name == profile.name]
    assert profile.signatures and pages
    # No single signature matches a page of another app.
    for signature in profile.signatures:
        for page in PAGES:
            if page.parent.name != profile.name:
                assert not re.search(signature.encode(), head(page)), (signature, page.name)


def test_match_by_signature_then_host_then_generic() -> None:
    wordpress_page = next(page for page in PAGES if page.parent.name == "wordpress").read_bytes()
    assert match_profile("127.0.0.1:7780", wordpress_page) is WORDPRESS  # signature beats host
    assert match_profile("127.0.0.1:7780", PLAIN) is MAGENTO  # no signature: the host
    assert match_profile("127.0.0.1:7780") is MAGENTO  # no page at all
    assert match_profile("gitlab.example:443", PLAIN) is GITLAB
    assert match_profile("127.0.0.1:8000", PLAIN) is WORDPRESS
    assert match_profile("shop.test:80", PLAIN) is GENERIC
    assert match_profile("shop.test:80", b"") is GENERIC


def test_signatures_only_look_at_the_head_of_the_page() -> None:
    late = PLAIN + b" " * HEAD_BYTES + b"/wp-content/"
    assert match_profile("shop.test:80", late) is GENERIC
    early = PLAIN.replace(b"hello", b"<img src='/wp-content/x.png'>")
    assert match_profile("shop.test:80", early) is WORDPRESS


def test_a_page_matched_again_is_matched_the_same_and_a_changed_profile_set_is_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = next(page for page in PAGES if page.parent.name == "wordpress").read_bytes()
    assert match_profile("shop.test:80", page) is WORDPRESS
    assert match_profile("shop.test:80", page) is WORDPRESS  # the remembered answer
    assert match_profile("shop.test:81", page) is WORDPRESS  # another host: matched anew
    # A profile put first after the page was matched wins on the same page from then on.
    first = replace(GENERIC, name="first", signatures=(r"<html",))
    monkeypatch.setattr("sites.PROFILES", {"first": first, **PROFILES})
    assert match_profile("shop.test:80", page) is first
    monkeypatch.undo()
    assert match_profile("shop.test:80", page) is WORDPRESS


def test_a_page_holding_none_of_the_literals_is_matched_by_host_alone() -> None:
    """`holds_any` rules a page out of every signature at once: told that a page holds none of
    their literals, the matcher asks no signature, and a WordPress page is its host's."""
    asked: list[tuple[bytes, ...]] = []

    def holds_none(page: bytes, words: tuple[bytes, ...]) -> bool:
        asked.append(words)
        return False

    page = next(page for page in PAGES if page.parent.name == "wordpress").read_bytes()
    assert match_profile("127.0.0.1:7780", page, holds_none) is MAGENTO
    (literals,) = asked
    every = [_signature(pattern)[0] for profile in SPECIFIC for pattern in profile.signatures]
    assert sorted(literals) == sorted(set(every))  # (each signature's, once)
    assert match_profile("127.0.0.1:7780", page) is WORDPRESS  # (`holds_any_read` finds one)


def test_a_page_only_a_later_signature_matches_is_matched_through_the_compiled_prefilter() -> None:
    """Each signature's literal keeps a page in: one that holds Magento's sixth alone."""
    page = b"<html><head><script>var BLANK_URL = '/x';</script></head><body></body></html>"
    assert _signature(MAGENTO.signatures[5])[0] == b"var BLANK_URL"
    assert match_profile("shop.test:80", page, compiled_holds_any) is MAGENTO
    assert match_profile("shop.test:80", page.replace(b"BLANK", b"BLANC")) is GENERIC


def compiled_holds_any(page: bytes, words: tuple[bytes, ...]) -> bool:
    assert native.holds_any is not None, native.why_not
    answer = native.holds_any(page, words)
    assert answer is not None
    return answer


def test_host_patterns_are_globs_over_host_and_port() -> None:
    assert GITLAB.matches_host("10.0.0.1:8023") and GITLAB.matches_host("gitlab.lab:80")
    assert not GITLAB.matches_host("10.0.0.1:80231") and not GITLAB.matches_host("lab:80")
    assert GENERIC.matches_host("anything:1")


@pytest.mark.parametrize(
    "pattern, literal",
    [
        ("wp-login", "wp-login"),
        (r"wp-login\.php", "wp-login.php"),
        ("[abc]def", "def"),  # a class is no literal
        ("x[.]yz", "x.yz"),  # ... but a one-character class is that character to `re`
        ("(?i)wordpress", ""),  # case-insensitive: no byte literal is required
        ("(?i:abc)defg", "defg"),  # scoped flag: the literals after it are case-sensitive
        (r"\x41BC", "ABC"),  # an escape is the character it stands for
        (r"\101BC", "ABC"),
        (r"ab\sde", "ab"),  # \s is a class: it splits the runs (ties: the first longest)
        (r"abc\s*=", "abc"),
        ("abcd?e", "abc"),  # an optional character is not required
        ("ab?", "a"),
        ("ab*c", "a"),
        ("ab+c", "a"),
        ("ab{2}cd", "cd"),
        ("foo(bar)?bazz", "bazz"),
        ("ab|cd", ""),  # alternation: neither side is required
        ("x(ab|cd)yz", "yz"),
        (r"/static/version\d+/", "/static/version"),
        ('data-page="[a-z_:]+"', 'data-page="'),
        ("(?x) a b  c", "abc"),  # verbose: spaces are not part of the pattern
        ("a.b", "a"),
        ("^<html", "<html"),
        ("(?=abc)ab", "ab"),
        ("[", ""),  # not a regex at all: no literal rather than an error
    ],
)
def test_required_literal(pattern: str, literal: str) -> None:
    assert _required_literal(pattern) == literal


TRICKY = [
    r'name="generator" content="WordPress',
    r"/static/version\d+/",
    r"window\.gon\s*=",
    r"data-page=\"[a-z_:]+\"",
    r"(?i)wp-content",
    r"(?i:wp-)content",
    r"wp-(content|includes)/",
    r"ab|cd",
    r"a?bc",
    r"ab*c",
    r"abc?d",
    r"x{0}yz",
    r"x{0,1}yz",
    r"\x41BC",
    r"\101BC",
    r"[.]js",
    r"\.js",
    r"(?x) a b c",
    r"a\nb",
    r"\tab",
    r"(?s)a.b",
    r"\d\d\dabc",
    r"[^x]yz",
    r"(?=abc)a",
    r"(?!abc)xyz",
    r"abc\b",
    r"^<html",
    r"Mage\.Cookies",
    r"[aA]bc",
    r"(?:ab)+c",
    r"\x00ab",
    r"\Aab",
]


def profile_of(pattern: str) -> SiteProfile:
    return replace(GENERIC, name="t", signatures=(pattern,))


@pytest.mark.parametrize("pattern", TRICKY)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_matches_page_whenever_the_regex_matches(pattern: str, data: st.DataObject) -> None:
    """The prefilter never rules out a page the signature's regex matches."""
    regex = re.compile(pattern.encode())
    found = data.draw(st.from_regex(regex))
    padded = data.draw(st.binary(max_size=20)) + found + data.draw(st.binary(max_size=20))
    page = padded if regex.search(padded) else found  # anchors may refuse the padding
    assert regex.search(page)
    assert profile_of(pattern).matches_page(page), (pattern, page, _required_literal(pattern))


@pytest.mark.parametrize("pattern", TRICKY)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_page_is_matched_whenever_the_regex_matches_whichever_holds_any(
    pattern: str, data: st.DataObject
) -> None:
    """Ruling out every signature at once (`holds_any`, in Python and in C) never rules out a
    page a signature's regex matches, whatever its literal (an empty one: any page)."""
    regex = re.compile(pattern.encode())
    page = data.draw(st.from_regex(regex))
    current = _Profiles((replace(profile_of(pattern), host_patterns=()), GENERIC))
    for holds_any in (holds_any_read, compiled_holds_any):
        assert _match_head("shop.test:80", page, current, holds_any).name == "t", holds_any
        assert _match_head("shop.test:80", b"<body>nothing</body>", current, holds_any) is GENERIC


@pytest.mark.parametrize("pattern", TRICKY)
def test_the_prefilter_still_rules_pages_out(pattern: str) -> None:
    assert not profile_of(pattern).matches_page(b"<body>nothing</body>")


def test_a_byte_escape_above_ascii_is_the_byte_it_stands_for() -> None:
    page = "<p>caf\u00e9</p>".encode("latin-1")
    assert re.search(rb"caf\xe9", page)
    assert profile_of(r"caf\xe9").matches_page(page)
