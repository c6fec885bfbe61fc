"""A page's wrap candidates and their coins in C (`shifts.native.wrap_candidates`) against
their definition (`locators._wrap_candidates_read`): the same elements in the same order with
the same coins, on every saved page, with protected elements, keyed names and a memo filled
before; and None (the Python reads them) where the C one says it cannot."""

from __future__ import annotations

import random

import pytest
from lxml import etree

from shifts import native, rng
from shifts.perceptual import locators
from shifts.perceptual.locators import _wrap_candidates, _wrap_candidates_read
from tests.helpers.fixtures import fixture_pages


def compiled(
    body: etree._Element,
    seed: int,
    protected: set[etree._Element],
    keyed: object,
    below: float | None,
    memo: dict[str, float] | None = None,
    read: object = locators._signature_read,
) -> list[object] | None:
    """`native.wrap_candidates` as `_wrap_candidates` asks it (`read`: the Python signature
    it asks where the C declines)."""
    assert native.wrap_candidates is not None, native.why_not
    return native.wrap_candidates(
        body,
        locators._WRAPPABLE_TAGS,
        locators._FIXED_PARENT_TAGS,
        protected,
        keyed,
        read,
        rng.keys_prefix(seed, "wrap"),
        {} if memo is None else memo,
        below,
    )


def body_of(raw: bytes | str) -> etree._Element:
    root = etree.fromstring(raw, etree.HTMLParser())
    body = root.find("body")
    return root if body is None else body


def test_every_saved_page_draws_the_same_candidates_and_coins() -> None:
    chooser = random.Random(3)
    for page in fixture_pages():
        body = body_of(page.read_bytes())
        every = list(body.iter())
        names = {n for e in every for n in [*(e.get("class") or "").split(), e.get("id") or ""]}
        keyed = {name: f"k{index}-#" for index, name in enumerate(sorted(names)[::3]) if name}
        protected = set(chooser.sample(every, len(every) // 5))
        for seed in (1, 2**40 + 7):
            for keys in ({}, keyed):
                want = _wrap_candidates_read(body, seed, protected, keys, None)
                assert len(want) > 10, page.name
                memo: dict[str, float] = {}
                assert compiled(body, seed, protected, keys, None, memo) == want, page.name
                # Again with the coins kept from the first: the same, and none drawn anew.
                kept = dict(memo)
                assert compiled(body, seed, protected, keys, None, memo) == want
                assert memo == kept and len(memo) <= len(want)
                for below in (0.0, 0.3, 0.5, 1.0):
                    chosen = [e for coin, e in want if coin < below]
                    assert compiled(body, seed, protected, keys, below, memo) == chosen
                    assert _wrap_candidates_read(body, seed, protected, keys, below) == chosen
                    assert _wrap_candidates(body, seed, protected, keys, below) == chosen


def test_protected_elements_and_fixed_parents_are_no_candidates() -> None:
    body = body_of(
        "<body><div id=a><p>one</p><ul><li><div>in a list</div></li></ul>"
        "<a href=/x><span>in a link</span></a><section>kept</section></div></body>"
    )
    section = body.find(".//section")
    found = [e for _, e in compiled(body, 1, {section}, {}, None) or []]
    # (not the list item's child, the span in a link, the protected section)
    assert [e.tag for e in found] == ["div", "p", "ul", "div", "a"], found
    assert found == [e for _, e in _wrap_candidates_read(body, 1, {section}, {}, None)]


def declined_body() -> etree._Element:
    """A container whose text holds an entity reference (an XML parser's, kept unresolved): its
    signature is the Python's to read (`signature` declines it)."""
    parser = etree.XMLParser(resolve_entities=False)
    return etree.fromstring(
        '<!DOCTYPE body [<!ENTITY e "x">]><body><div><p>&e;<b>x</b> late words</p></div></body>',
        parser,
    )


def test_a_signature_the_c_one_declines_is_read_by_the_python() -> None:
    # (and its coin is drawn from what the Python reads)
    body = declined_body()
    paragraph = body.find(".//p")
    assert native.signature is not None and native.signature(paragraph) is None
    assert native.signature(body[0]) is None  # (the div's text starts as the paragraph's)
    asked: list[etree._Element] = []

    def read(element: etree._Element, keyed: dict[str, str]) -> str:
        asked.append(element)
        return locators._signature_read(element, keyed)

    found = compiled(body, 5, set(), {}, None, read=read)
    assert asked == [body[0], paragraph]
    assert found == _wrap_candidates_read(body, 5, set(), {}, None)


def test_what_it_cannot_read_is_left_to_the_python() -> None:
    body = body_of("<body><div><p>x</p></div></body>")

    class Keys(dict[str, str]):
        pass

    assert compiled(body, 1, set(), Keys(x="y"), None) is None  # (its `get` may be its own)

    class Everything(set[etree._Element]):
        def __contains__(self, element: object) -> bool:
            return True

    assert compiled(body, 1, [], {}, None) is None  # type: ignore[arg-type]  # (no set)
    assert compiled(body, 1, Everything(), {}, None) is None  # (its own `in`)
    assert compiled(body, 1, set(), {}, 1) is None  # (no float)
    # A memo holding what is no coin: the Python draws them (with its own memo).
    assert compiled(body, 1, set(), {}, 0.5, {locators._signature(body[0][0]): "x"}) is None
    namespaced = etree.fromstring('<r xmlns="urn:x"><div><p>x</p></div></r>')
    assert compiled(namespaced, 1, set(), {}, None) is None
    # (a namespaced top: its tag, as the parent of its children, is lxml's to say)
    fixed = etree.fromstring('<ul xmlns="urn:x"><div xmlns=""/></ul>')
    assert compiled(fixed, 1, set(), {}, None) is None
    assert _wrap_candidates(fixed, 1, set(), {}, None) == _wrap_candidates_read(
        fixed, 1, set(), {}, None
    )
    # ... and the callers then read them in Python: the same candidates.
    assert _wrap_candidates(namespaced, 1, set(), {}, None) == _wrap_candidates_read(
        namespaced, 1, set(), {}, None
    )
    assert native.wrap_candidates is not None
    assert compiled(body, 1, set(), {}, None) is not None
    assert native.wrap_candidates(body, ["div"], (), set(), {}, str, b"", {}, None) is None
    for wrong in ((), ("div",), ("div", (), (), set(), {}, str, b"", {}, None)):
        try:
            native.wrap_candidates(*wrong)
        except TypeError:
            continue
        raise AssertionError(f"wrap_candidates{wrong!r} was read")


def test_a_failing_read_is_raised_and_another_string_read_as_its_str() -> None:
    body = declined_body()

    def read_with(read: object) -> list[object] | None:
        return compiled(body, 1, set(), {}, None, read=read)

    def fails(element: etree._Element, keyed: dict[str, str]) -> str:
        raise ValueError("read")

    with pytest.raises(ValueError):
        read_with(fails)

    class Text(str):
        def __str__(self) -> str:
            return "its own"

    # (as `derive_seed` reads a key, by its `str`: the coin of "its own", and of "3")
    for read, key in ((lambda e, k: Text("x"), "its own"), (lambda e, k: 3, "3")):
        found = read_with(read)
        assert found is not None and [coin for coin, _ in found] == [rng.chance(1, "wrap", key)] * 2


def test_a_read_that_changes_the_memo_leaves_the_coins_to_the_python() -> None:
    # The coins are drawn once every candidate is found: a `read` that took one out of the
    # memo meanwhile (none of the project's does) has the Python draw them, not an error.
    body = etree.fromstring(
        '<!DOCTYPE body [<!ENTITY e "x">]><body><div>plain</div><div><p>&e; late</p></div></body>',
        etree.XMLParser(resolve_entities=False),
    )
    memo: dict[str, float] = {}
    seen: list[str] = []

    def clearing(element: etree._Element, keyed: dict[str, str]) -> str:
        memo.clear()
        seen.append(locators._signature_read(element, keyed))
        return seen[-1]

    assert native.signature is not None and native.signature(body[0]) is not None
    memo[locators._signature(body[0])] = 0.5  # (the first `<div>`'s, read in C: held)
    found = compiled(body, 1, set(), {}, None, memo, read=clearing)
    assert seen and found is None


def test_a_coin_is_held_while_an_element_is_made() -> None:
    # Making an element may run Python (a parser's element class lookup), which may put
    # another float in the memo for a signature: the coin read before it is still the one
    # handed back (it was read from freed memory).
    memo: dict[str, float] = {}

    class Lookup(etree.PythonElementClassLookup):
        def lookup(self, doc: object, element: object) -> None:
            for key in list(memo):
                memo[key] = float(repr(memo[key]))  # (equal, another object)
            for _ in range(50):
                float("0.123")  # (what may take the freed one's place)
            return None

    parser = etree.HTMLParser()
    parser.set_element_class_lookup(Lookup())
    markup = b"<html><body>" + b"".join(b"<div>x%d</div>" % i for i in range(20)) + b"</body>"
    body = etree.fromstring(markup, parser).find("body")
    assert body is not None
    expected = [coin for coin, _ in _wrap_candidates_read(body, 5, set(), {}, None)]
    memo.clear()
    found = compiled(body, 5, set(), {}, None, memo)
    assert found is not None and [coin for coin, _ in found] == expected
