"""The compiled `drop_attributes` against its definition (`locators._drop_attributes_read`): on
two copies of a page, the same attributes dropped from the same elements, the same count,
protected elements left alone; or None with nothing dropped where the C one declines."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from lxml import etree

from shifts import native
from shifts.perceptual.locators import _drift_hooks, _drop_attributes_read
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments
from tests.helpers.twins import protected_twins

HOOKS = ["data-testid", "data-qa-selector", "data-test", "data-cy", "id", "data-toggle"]


def drop_both(page: str | bytes, names: list[str], protect: float, seed: int) -> int:
    """Parse the page twice, protect the same elements of each, drop in C and in Python; the
    attributes dropped."""
    assert native.drop_attributes is not None, native.why_not
    trees, protected = protected_twins(page, protect, seed)
    compiled = native.drop_attributes(trees[0], names, protected[0])
    assert compiled is not None
    read = _drop_attributes_read(trees[1], names, protected[1])
    paths = [
        [tree.getroottree().getpath(e) for e in found]
        for tree, (found, _) in zip(trees, (compiled, read), strict=True)
    ]
    assert paths[0] == paths[1]
    assert compiled[1] == read[1]
    assert etree.tostring(trees[0]) == etree.tostring(trees[1])
    assert all(e not in protected[0] for e in compiled[0])
    return compiled[1]


def test_every_saved_page_drops_alike() -> None:
    dropped = 0
    for index, page in enumerate(fixture_pages()):
        raw = page.read_bytes()
        dropped += drop_both(raw, HOOKS[:3], protect=0.0, seed=index)
        dropped += drop_both(raw, HOOKS, protect=0.3, seed=index)
        dropped += drop_both(raw, ["class", "class", "href"], protect=0.1, seed=index)
    assert dropped > 1_000


def test_a_name_given_twice_drops_one_attribute() -> None:
    # (An XML parser's recovery keeps an attribute written twice: `del attrib[name]` drops the
    # first, and the name is asked once, however often it is given.)
    for parse in (native.drop_attributes, _drop_attributes_read):
        assert parse is not None
        root = etree.fromstring(
            '<r><a data-t="1" id="i" data-t="2"/><b data-u=""/><c/></r>',
            etree.XMLParser(recover=True),
        )
        found = parse(root, ["data-t", "data-t", "data-u", "data-v"], set())
        assert found is not None
        dropped_from, dropped = found
        assert [e.tag for e in dropped_from] == ["a", "b"] and dropped == 2
        assert etree.tostring(root) == b'<r><a id="i" data-t="2"/><b/><c/></r>'


def test_what_only_the_python_drops() -> None:
    assert native.drop_attributes is not None
    # An attribute in a namespace anywhere, even after a hook: nothing is dropped in C.
    root = etree.fromstring('<r xmlns:x="urn:x"><a data-t="1"/><b x:data-t="2"/></r>')
    before = etree.tostring(root)
    assert native.drop_attributes(root, ["data-t"], set()) is None
    assert etree.tostring(root) == before
    dropped_from, dropped = _drop_attributes_read(root, ["data-t"], set())
    assert [e.tag for e in dropped_from] == ["a"] and dropped == 1  # (`{urn:x}data-t` is not it)
    # A name lxml reads as namespaced; a protected set of another kind; DTD defaults.
    root = etree.fromstring("<r><a data-t='1'/></r>")
    assert native.drop_attributes(root, ["{urn:x}data-t"], set()) is None
    assert native.drop_attributes(root, ["data-t"], [root[0]]) is None
    root = etree.fromstring('<!DOCTYPE r [<!ATTLIST a data-t CDATA "d">]><r><a/></r>')
    assert native.drop_attributes(root, ["data-t"], set()) is None
    # Names that are no attribute's match nothing, as in Python.
    root = etree.fromstring("<r><a data-t='1'/></r>")
    assert native.drop_attributes(root, [1, "\ud800", "a\x00b"], set()) == ([], 0)
    assert native.drop_attributes(root, [], set()) == ([], 0)
    # The top itself is not below itself.
    assert native.drop_attributes(root[0], ["data-t"], set()) == ([], 0)


def test_the_drift_marks_the_elements_it_dropped_from() -> None:
    root = etree.fromstring(
        '<html><body><a data-testid="a">1</a><b data-testid="b" data-qa="q">2</b>'
        '<i data-qa="r">3</i></body></html>',
        etree.HTMLParser(),
    )
    protected = {root[0][2]}
    touched: set[etree._Element] = set()
    assert _drift_hooks(root, ["data-testid", "data-qa"], protected, touched) == 3
    assert {e.tag for e in touched} == {"a", "b"}
    assert root[0][2].get("data-qa") == "r"


TAGS = ["a", "div", "span", "p", "li"]
NAMES = ["id", "class", "data-testid", "data-", "data-qa", "dat", "href", "datax"]
VALUES = ["", "a b", "é", "x&amp;y"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment=fragments(TAGS, NAMES, VALUES, width=5))
def test_generated_trees_drop_alike(fragment: str) -> None:
    page = f"<html><body>{fragment}</body></html>"
    drop_both(page, ["data-testid", "data-qa", "data-"], protect=0.0, seed=1)
    drop_both(page, ["data-testid", "id", "dat"], protect=0.4, seed=2)
