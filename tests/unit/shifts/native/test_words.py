"""The compiled word count (`shifts.native.count_words`) against its definition
(`locators._counted_words_read`): the same count of each name, as a word of the page, on every
saved page and on generated pages and names."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from shifts import native
from shifts.perceptual.locators import _counted_words, _counted_words_read
from tests.helpers.fixtures import fixture_pages


def test_it_is_built_here() -> None:
    assert native.count_words is not None, native.why_not


def test_every_saved_page_counts_its_ids_and_words_alike() -> None:
    for page in fixture_pages():
        raw = page.read_bytes()
        # Its ids and a sample of its words, and what is no word (a `.`, a space, nothing).
        ids = set(re.findall(rb'id="([^"]*)"', raw))
        words = set(re.findall(rb"[A-Za-z0-9_-]+", raw)[::7])
        names = frozenset(ids | words | {b"", b"a.b", b"x y", b"-", b"\xc3\xa9t\xc3\xa9"})
        assert _counted_words(page=raw, names=names) == _counted_words_read(raw, names)
        assert sum(_counted_words(raw, names).values()) > 0


PIECES = st.sampled_from(
    [b"a", b"ab", b"x-1", b"_", b"-", b" ", b".", b"\n", b"<p>", b"\xc3\xa9", b"9", b"id", b"\x00"]
)


@settings(max_examples=300, deadline=None)
@given(
    page=st.lists(PIECES, max_size=80).map(b"".join),
    names=st.frozensets(st.lists(PIECES, max_size=3).map(b"".join), max_size=12),
)
def test_generated_pages_count_alike(page: bytes, names: frozenset[bytes]) -> None:
    assert native.count_words is not None
    assert _counted_words(page, names) == _counted_words_read(page, names)


def test_words_and_names_longer_than_the_length_table() -> None:
    # (Lengths of 255 and more share the table's last entry: those are compared whole.)
    page = b"x " + b"a" * 300 + b" " + b"a" * 299 + b"-" + b"b" * 256 + b" " + b"a" * 300
    names = frozenset({b"a" * 300, b"a" * 299, b"a" * 256, b"a" * 299 + b"-" + b"b" * 256})
    assert _counted_words(page, names) == _counted_words_read(page, names)
    assert _counted_words(page, names) == {b"a" * 300: 2, b"a" * 299 + b"-" + b"b" * 256: 1}
