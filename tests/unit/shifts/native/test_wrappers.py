"""A wrapper placed in C (`shifts.native.place_wrapper`) against its definition, lxml's move
(`locators._place_wrapper_read`): the same tree, written out the same, after each wrapper, on
every saved page and on generated trees; the elements' objects still theirs; and None, with
nothing changed, where the C one leaves the move to lxml."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from lxml import etree

from shifts import native
from shifts.perceptual.locators import _place_wrapper, _place_wrapper_read
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments

TAG = "ab12c-d3e4"


def compiled(element: etree._Element, tag: str = TAG) -> etree._Element | None:
    assert native.place_wrapper is not None, native.why_not
    return native.place_wrapper(element, tag)


def shape(node: etree._Element) -> list[object]:
    """Every node below `node` with its kind, name, text and tail, in document order: what the
    written page shows and what lxml reads of the links (a broken `prev` or `last` shows in the
    reversed children)."""
    return [
        (
            str(each.tag),
            each.text,
            each.tail,
            [str(child.tag) for child in reversed(each)],
            str(each.getparent().tag) if each.getparent() is not None else None,
        )
        for each in node.iter()
    ]


def wrapped_both_ways(raw: bytes | str, choose: random.Random, share: float = 0.4) -> None:
    """Parse the page twice; wrap the same elements (in document order, a share of them) with
    lxml in one and in C in the other; the two trees the same after every wrapper."""
    trees = [etree.fromstring(raw, etree.HTMLParser()) for _ in range(2)]
    elements = [list(tree.iter(etree.Element)) for tree in trees]
    picked = [i for i, e in enumerate(elements[0]) if e.getparent() is not None]
    picked = [i for i in picked if choose.random() < share]
    for i in picked:
        by_lxml = _place_wrapper_read(elements[0][i], TAG)
        by_c = compiled(elements[1][i])
        assert by_c is not None, elements[1][i].tag
        assert by_c.tag == by_lxml.tag == TAG and by_c.getparent() is not None
        assert elements[1][i].getparent() is by_c  # (its object is still the element's)
    assert shape(trees[1]) == shape(trees[0])
    assert etree.tostring(trees[1], method="html") == etree.tostring(trees[0], method="html")
    # libxml2's table of ids as lxml's move leaves it: the moved ones unregistered (`id()`).
    ids = sorted({e.get("id") or "" for e in elements[0]} - {""})
    found = [[len(tree.xpath("id($name)", name=name)) for name in ids] for tree in trees]
    assert found[1] == found[0]


def test_it_is_built_here() -> None:
    assert native.place_wrapper is not None, native.why_not
    # (and places the wrappers itself, with lxml's libxml2: else lxml places each)
    assert native._modules["_wrappers"].places_wrappers == 1


def test_a_tag_lxml_would_check_is_left_to_lxml() -> None:
    # Not a plain lower-case name (nor a str): lxml's `makeelement` is asked, and refuses what
    # it refuses.
    for tag in ("Upper", "x y", "", b"w-b", "w-\ud800"):
        root = etree.fromstring("<div><p>a</p></div>", etree.HTMLParser())
        paragraph = root.find(".//p")
        assert compiled(paragraph, tag) is None  # type: ignore[arg-type]
        assert etree.tostring(root) == b"<html><body><div><p>a</p></div></body></html>"
        try:
            wrapper = _place_wrapper(paragraph, tag)  # type: ignore[arg-type]
        except ValueError:
            assert tag in ("x y", "", "w-\ud800"), tag
            continue
        assert paragraph.getparent() is wrapper and wrapper.tag in ("Upper", "w-b")


def test_every_saved_page_is_wrapped_as_lxml_wraps_it() -> None:
    choose = random.Random(11)
    for page in fixture_pages():
        raw = page.read_bytes()
        wrapped_both_ways(raw, choose)
        wrapped_both_ways(raw, choose, share=1.0)  # (every element, nested in turn)


def test_each_place_among_siblings_and_tails() -> None:
    # First, middle and last child; with a tail and without; the only child; a text before it.
    page = "<div>lead<p>a</p>t1<b>b</b><i>c</i>t3</div><div><p>only</p></div><div><p>x</p>end</div>"
    for index in range(8):
        for share in (0.0, 1.0):
            choose = random.Random(index)
            wrapped_both_ways(page, choose, share=0.5 if share == 0.0 else share)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment=fragments(["div", "p", "span", "a", "input"], ["id", "class"], ["x", "y"]))
def test_generated_trees_are_wrapped_as_lxml_wraps_them(fragment: str) -> None:
    wrapped_both_ways(f"<body><div>{fragment}</div>{fragment}</body>", random.Random(fragment))


def test_what_it_cannot_place_is_left_to_lxml_unchanged() -> None:
    parser = etree.XMLParser(strip_cdata=False)
    for raw, path in (
        (b"<r><a/><![CDATA[c]]></r>", "a"),  # (a CDATA section beside it)
        (b'<r xmlns="urn:x"><a/></r>', "{urn:x}a"),  # (namespaced)
        (b'<r><a xmlns:p="urn:p"/></r>', "a"),  # (it declares a namespace)
        (b'<r xmlns:p="u"><d><p:x xmlns:p="u"/></d></r>', "d"),  # (one in it: lxml strips it)
        (b'<r xmlns:p="u"><d><e p:a="1"/></d></r>', "d"),  # (an attribute's namespace)
        (b"<r><a/>t<![CDATA[c]]></r>", "a"),  # (a text, then a CDATA section)
    ):
        root = etree.fromstring(raw, parser)
        element = root.find(path)
        before = etree.tostring(root)
        assert compiled(element) is None, raw
        assert etree.tostring(root) == before
        assert _place_wrapper(element, "w").getparent() is root  # (placed by lxml)
    root = etree.fromstring("<div><p>a</p>one<i>b</i>two</div>", etree.HTMLParser())
    paragraph = root.find(".//p")
    assert compiled(root) is None  # (the root: no element above it)
    assert compiled(paragraph) is not None  # (one text after it: placed in C)
    assert native.place_wrapper(paragraph, 3) is None  # type: ignore[arg-type]  # (lxml's to refuse)
    for wrong in ((), (paragraph,), ("p", TAG)):
        try:
            native.place_wrapper(*wrong)  # type: ignore[misc]
        except TypeError:
            continue
        raise AssertionError(f"place_wrapper{wrong!r} was read")
