"""The compiled signature (`shifts.native.signature`) against its definition, the Python one
(`locators._signature_read`): the same string for every element of every saved page and of
generated trees, or None (the Python then reads it) only where the C one says it cannot."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import native
from shifts.perceptual.locators import _READ, _signature, _signature_read
from tests.helpers.fixtures import fixture_pages


def compiled(element: etree._Element, keyed: dict[str, str] | None = None) -> str | None:
    assert native.signature is not None, native.why_not
    return native.signature(element, keyed)


def test_it_is_built_here() -> None:
    # The suite runs where `scripts/bootstrap` installed a C compiler: the compiled path is the
    # one under test, not skipped (without it, every other test here would pass vacuously).
    assert native.signature is not None, native.why_not


def elements(raw: bytes | str) -> list[etree._Element]:
    return list(etree.fromstring(raw, etree.HTMLParser()).iter(etree.Element))


def reads_the_same(element: etree._Element, keyed: dict[str, str] | None = None) -> None:
    """The C signature is the Python's, or None only where the element or its text holds what
    the C leaves to the Python (an entity reference)."""
    signature = compiled(element, keyed)
    if signature is not None:
        assert signature == _signature_read(element, keyed)
        return
    assert any(node.tag is etree.Entity for node in element.iter()), element.tag


def test_every_element_of_every_saved_page_reads_the_same() -> None:
    read = fallen_back = 0
    for page in fixture_pages():
        found = elements(page.read_bytes())
        # (every other class and id of the page keyed, as a drift's tokens are)
        names = {n for e in found for n in [*(e.get("class") or "").split(), e.get("id") or ""]}
        keyed = {name: f"k{index}-#" for index, name in enumerate(sorted(names)[::2]) if name}
        for element in found:
            reads_the_same(element)
            reads_the_same(element, keyed)
            if compiled(element) is None:
                fallen_back += 1
            else:
                read += 1
    # (All read in C, a container whose text starts with a long stretch of whitespace too: it
    # reads on, as the Python does.)
    assert read > 4_000 and fallen_back == 0, (read, fallen_back)


@pytest.mark.parametrize("spaces", [0, 60, 79, 80, 81, 150, 200, 201, 300, 1_000, 5_000, 20_000])
def test_a_text_that_starts_with_whitespace_is_read_on_as_far_as_it_takes(spaces: int) -> None:
    """A start mostly indentation is read again further (four times as far each time), to
    the words the Python reads on to part by part: at each length the first read, the second
    and the later ones end, in one text node and spread over many."""
    words = "Sign in to your account now, 1234567 times"
    for body in (" " * spaces + f"<span>{words}</span>", "<i> </i>" * (spaces // 8) + words):
        for element in elements(f"<div>{body}</div>")[-2:]:
            assert compiled(element) == _signature_read(element), (spaces, element.tag)
        div = next(e for e in elements(f"<div>{body}</div>") if e.tag == "div")
        assert compiled(div) == "div|||||Sign in to your account now, # times"
        assert compiled(div, {"x": "y"}) == _signature_read(div, {"x": "y"})


def test_a_text_of_whitespace_alone_is_read_whole() -> None:
    for spaces in (0, 80, 201, 3_000):
        div = elements(f"<div>{' ' * spaces}<span>\n\t </span></div>")[-2]
        assert compiled(div) == _signature_read(div) == "div|||||", spaces


def test_the_caller_falls_back_to_the_python_where_the_c_cannot() -> None:
    # An entity reference in the text (an XML parser's, kept unresolved): the Python reads it.
    parser = etree.XMLParser(resolve_entities=False)
    root = etree.fromstring('<!DOCTYPE r [<!ENTITY e "Sign in">]><r><div>&e; now</div></r>', parser)
    div = root[0]
    assert compiled(div) is None
    assert _signature(div) == _signature_read(div)


def test_keyed_names_read_as_their_keys() -> None:
    # Tokens of names made anew at each request read as the names' keys, the id's and each
    # class's; with keys, the classes are read split and joined by one space (as the Python
    # reads them), without, as written.
    page = '<a id="n1" class=" c1\tplain\u3000c2 " name="n1" href="/c1">Go</a>'
    link = next(e for e in elements(page) if e.tag == "a")
    keyed = {"n1": "form-#", "c1": "row-#", "c2": "cell-#"}
    assert compiled(link, keyed) == _signature_read(link, keyed)
    assert compiled(link, keyed) == "a|form-#|row-# plain cell-#|n1|/c1|Go"
    assert compiled(link, {}) == compiled(link) == _signature_read(link)
    assert compiled(link) == "a|n1| c1\tplain\u3000c2 |n1|/c1|Go"
    assert _signature(link, keyed) == _signature_read(link, keyed)
    # A key that is no plain string, and keys in a dict's subclass (whose `get` may answer its
    # own way), are the Python's to read.
    assert compiled(link, {"n1": 7}) is None  # type: ignore[dict-item]
    assert compiled(link, {"n1": type("Formatted", (str,), {})("x")}) is None

    class Keys(dict[str, str]):
        def get(self, name: str, default: object = None) -> str:  # type: ignore[override]
            return "own"

    assert compiled(link, Keys(keyed)) is None
    assert _signature(link, Keys(keyed)) == "a|own|own own own|n1|/c1|Go"


def test_namespaced_and_foreign_nodes_fall_back() -> None:
    tree = etree.fromstring('<r xmlns="urn:x"><a id="q">x</a></r>')
    assert compiled(tree) is None
    assert compiled(etree.Comment("x")) is None  # (no element: a comment's node)


def test_it_refuses_what_is_no_element() -> None:
    link = elements("<a>x</a>")[-1]
    assert native.signature is not None, native.why_not
    assert native.signature(link, ["n1"]) is None  # (no dict: the Python's to read)
    for args in (("a",), (), (link, None, None)):
        try:
            native.signature(*args)
        except TypeError:
            continue
        raise AssertionError(f"signature{args!r} was read")


def test_the_masks_read_as_the_patterns_do() -> None:
    # Each rule of the masks, by hand: a value (8 or more word characters with a digit), a
    # number in a text, a random run in a name (hex with a letter and a digit, a UUID, 10 or
    # more digits), and what is none of them.
    page = (
        '<a id="rating_6a0f6f8893708" class="post-1234 x1b2c3d4e5 123456789 1234567890'
        ' 550e8400-e29b-41d4-a716-446655440000 deadbeef"'
        ' name="f_ab12cd34ef" href="/p?_wpnonce=3f9a1c2b7e&amp;n=1234567&amp;go=abcdefgh">'
        "Inbox 372 items, updated 12:04:59 by user_8a7b6c5d4e</a>"
    )
    link = next(e for e in elements(page) if e.tag == "a")
    assert (
        compiled(link)
        == _signature_read(link)
        == (
            "a|rating_#|post-1234 x# 123456789 # # deadbeef|#|/p?_wpnonce=#&n=1234567&go=abcdefgh|"
            "Inbox # items, updated #:#:# by #"
        )
    )


# Texts of what the patterns tell apart: word characters, hex digits, digits, `-` and `_`,
# whitespace of every kind `str.split` splits on, and characters of 2, 3 and 4 bytes.
PIECES = st.sampled_from(
    ["a", "F", "e", "z", "0", "7", "9", "-", "_", " ", "\t", "\n", "\xa0", "\u2003", "\u3000"]
    + ["é", "€", "🙂", ".", "|", "#", "ab12cd34", "1234567890", "550e8400-e29b-41d4-a716-"]
    + ["446655440000", "consectetur", "x" * 30, "9" * 12, "&amp;", "&#x31;", "<br>", "<!--c-->"]
)
WORDS = st.lists(PIECES, max_size=60).map("".join)


def attribute(name: str, value: str) -> str:
    return f' {name}="{value.replace("<br>", "").replace("<!--c-->", "")}"'


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    element_id=WORDS,
    classes=WORDS,
    name=WORDS,
    href=WORDS,
    texts=st.lists(WORDS, min_size=1, max_size=8),
    nested=st.booleans(),
)
def test_generated_elements_read_the_same(
    element_id: str, classes: str, name: str, href: str, texts: list[str], nested: bool
) -> None:
    # A control with every attribute the signature reads, its text plain or spread over
    # nested tags (a container: its text read in C up to 201 characters, as XPath does).
    body = "".join(f"<span>{text}</span>" if nested else text for text in texts)
    attributes = "".join(
        attribute(key, value)
        for key, value in (("id", element_id), ("class", classes), ("name", name), ("href", href))
    )
    page = f"<div id='outer'><a{attributes}>{body}</a><p>{''.join(texts) * 9}</p></div>"
    # Keys for some of its names: every other class, and the id.
    keyed = {name: f"{name[:3]}é#" for name in [element_id, *classes.split()[::2]]}
    for element in elements(page):
        reads_the_same(element)
        reads_the_same(element, keyed)


def test_a_text_of_the_first_reads_length_is_read_whole() -> None:
    # Around the 201 characters read at first: whole below, a start from there on (whose last
    # run may go on). Runs that mask to `#` keep the masked text short of the 40 a coin reads.
    for length in range(_READ - 3, _READ + 3):
        text = ("abcdefghijk1 " * 20)[:length]
        for page in (f"<p>{text}</p>", f"<p><b>{text[:100]}</b>{text[100:]}</p>"):
            for element in elements(page):
                reads_the_same(element)
