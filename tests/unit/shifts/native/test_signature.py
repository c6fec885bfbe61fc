"""The compiled signature (`shifts.native.signature`) against its definition, the Python one
(`locators._signature_read`): the same string for every element of every saved page and of
generated trees, or None (the Python then reads it) only where the C one says it cannot."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import native
from shifts.perceptual.locators import _READ, _TEXT_START, _masked, _signature, _signature_read
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
    """The C signature is the Python's, or None only where the Python reads on past its first
    characters (a start it cannot tell the masked text's start from)."""
    signature = compiled(element, keyed)
    if signature is not None:
        assert signature == _signature_read(element, keyed)
        return
    start = (element.text or "")[:_READ] if len(element) == 0 else str(_TEXT_START(element))
    assert _masked(start, whole=len(start) < _READ) is None, (element.tag, start)


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
    # (Almost all read in C: what falls back is a container whose text starts with a long
    # stretch of whitespace.)
    assert read > 4_000 and fallen_back < read // 50, (read, fallen_back)


def test_the_caller_falls_back_to_the_python_where_the_c_cannot() -> None:
    # A text whose first 201 characters are mostly indentation: the Python reads on.
    container = elements("<div>" + " " * 300 + "<span>Sign in to your account now</span></div>")
    div = next(e for e in container if e.tag == "div")
    assert compiled(div) is None
    assert _signature(div) == _signature_read(div) == "div|||||Sign in to your account now"
    assert _signature(div, {"x": "y"}) == _signature_read(div, {"x": "y"})


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
