"""The compiled locators (`shifts.native.locators`, `names`, `paths`) against their
definitions, the Python ones (`locators._locators`, `_names`, lxml's `getpath`): the same id,
classes, hooks and path for every element of every saved page and of generated trees, wrapped as
the drift wraps them, or None (the Python then reads them all) only where the C one says it
cannot."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from lxml import etree

from shifts import ShiftContext, apply_shifts, native
from shifts.document import HtmlDocument
from shifts.perceptual.locators import LocatorDrift, _all_locators, _locators, _names, _paths
from shifts.references import EMPTY
from sites import GENERIC
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments


def test_they_are_built_here() -> None:
    # (Else every comparison below would compare the Python with itself.)
    assert native.locators is not None and native.paths is not None, native.why_not
    assert native.names is not None, native.why_not


def read_alike(root: etree._Element) -> int:
    """Compare the two on every element below `root` (comments and PIs are no elements);
    how many were compared."""
    assert native.locators is not None and native.paths is not None
    tree = root.getroottree()
    elements = [element for element in root.iter() if isinstance(element.tag, str)]
    assert native.locators(elements) == [_locators(tree, element) for element in elements]
    assert native.paths(elements) == [tree.getpath(element) for element in elements]
    # In another order: a step's siblings are counted on from one read before it where that
    # one comes before it, and each path above is kept from the elements read before.
    shuffled = elements[::-1] + elements[::3] + elements[1::2]
    assert native.paths(shuffled) == [tree.getpath(element) for element in shuffled]
    assert native.names is not None
    assert native.names(elements) == [_names(element) for element in elements]
    return len(elements)


def test_every_element_of_every_saved_page_reads_alike() -> None:
    compared = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        compared += read_alike(root)
        # Wrapped as the drift wraps: a custom tag above some (a path step of its own), the
        # same tag beside others (the indices of the siblings of one name).
        for element in list(root.iter("a", "div", "li"))[::3]:
            wrapper = element.makeelement("x-wrap")
            element.addprevious(wrapper)
            wrapper.append(element)
        compared += read_alike(root)
    assert compared > 10_000


def test_an_index_counts_the_siblings_of_its_name_alone() -> None:
    root = etree.fromstring(
        "<html><body><p>a</p><!-- c --><div><a>1</a></div><p>b</p>text<div/><?pi x?><span/>"
        "</body></html>",
        etree.HTMLParser(),
    )
    assert native.paths is not None
    assert native.paths(list(root.iter("p", "a", "span", "div"))) == [
        "/html/body/p[1]",
        "/html/body/div[1]",
        "/html/body/div[1]/a",
        "/html/body/p[2]",
        "/html/body/div[2]",
        "/html/body/span",
    ]
    # Taken out of the tree: the path of the subtree it tops.
    taken = root.find("body/div")
    assert taken is not None
    taken.getparent().remove(taken)  # type: ignore[union-attr]
    assert (
        native.paths([taken, taken[0]])
        == ["/div", "/div/a"]
        == _paths(root.getroottree(), [taken, taken[0]])
    )


def test_a_long_list_counts_its_items_in_any_order() -> None:
    items = "".join(f"<li>{i}</li><p>x</p>" if i % 7 else f"<li>{i}</li>" for i in range(300))
    root = etree.fromstring(
        f"<html><body><ul>{items}</ul><p>y</p></body></html>", etree.HTMLParser()
    )
    tree = root.getroottree()
    elements = list(root.iter("li", "p"))
    for order in (elements, elements[::-1], elements[::5] + elements[2::3], elements[:1] * 3):
        assert native.paths is not None
        assert native.paths(order) == [tree.getpath(element) for element in order]
    # A name set anew (at another address than the parser's) is a sibling of its name still.
    root[0][0][4].tag = "li"
    root[0][0][9].tag = "p"
    elements = list(root.iter("li", "p"))
    assert native.paths(elements) == [tree.getpath(element) for element in elements]
    assert native.paths(elements[::-1]) == [tree.getpath(element) for element in elements[::-1]]


def test_what_only_the_python_reads() -> None:
    assert native.locators is not None and native.paths is not None
    tree_of = etree.ElementTree
    # A namespaced element on the way up (libxml2 writes a prefix, or `*`).
    root = etree.fromstring('<r xmlns:x="urn:x"><x:a><b id="1"/></x:a><c/></r>')
    b = root.find(".//b")
    assert native.paths([root, b]) is None and native.locators([b]) is None
    assert _paths(tree_of(root), [b]) == ["/r/x:a/b"] == [tree_of(root).getpath(b)]
    assert native.paths([root.find("c")]) == ["/r/c"]  # (a sibling's namespace is its own)
    # A sibling of its name in a namespace is not of its name; nor is a namespaced attribute
    # (`{urn:x}data-t` to Python) a hook.
    root = etree.fromstring('<r xmlns:x="urn:x"><x:a/><a x:data-t="1" data-u="2"/></r>')
    assert native.locators([root[1]]) == [(None, None, (("data-u", "2"),), "/r/a")]
    assert native.locators([root[1]]) == [_locators(tree_of(root), root[1])]
    # A name too long for libxml2's path buffer to hold whole (it is cut there).
    long_name, longest = "x" * 100, "y" * 99
    root = etree.fromstring(f"<r><{long_name}/><{longest}/></r>")
    assert native.paths([root[0]]) is None and native.locators([root[0]]) is None
    assert native.paths([root[1]]) == [f"/r/{longest}"] == [tree_of(root).getpath(root[1])]
    # A value that is no single text (an entity reference kept in it) and DTD defaults.
    parser = etree.XMLParser(resolve_entities=False)
    root = etree.fromstring(
        '<!DOCTYPE r [<!ENTITY e "v">]><r><a id="&e;" data-t="1"/><b data-t="&e;"/></r>', parser
    )
    assert native.locators([root[0]]) is None and native.locators([root[1]]) is None
    assert native.names is not None
    assert native.names([root[0]]) is None and native.names([root[1]]) is None
    assert native.locators([root]) == [_locators(tree_of(root), root)]
    root = etree.fromstring('<!DOCTYPE r [<!ATTLIST a class CDATA "c1">]><r><a/></r>')
    assert native.locators([root[0]]) is None and native.paths([root[0]]) is None
    assert _all_locators(tree_of(root), [root[0]]) == [(None, "c1", (), "/r/a")]
    # A proxy with no node, a comment: the Python's in its own words.
    empty = etree._Element.__new__(etree._Element)
    comment = etree.fromstring("<r><!-- c --></r>")[0]
    for elements in ([empty], [comment]):
        assert native.locators(elements) is None and native.paths(elements) is None
    root = etree.fromstring("<r><a/></r>")
    with pytest.raises(TypeError):
        native.paths(root)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        native.locators([root, "a"])  # type: ignore[list-item]
    with pytest.raises(TypeError):  # (one to decline before it: a wrong one is still an error)
        native.locators([comment, "a"])  # type: ignore[list-item]
    assert native.locators([]) == native.paths([]) == []


def test_a_hook_repeated_reads_its_first_value_twice() -> None:
    # (The HTML parser keeps the first; an XML parser's recovery, both: `attrib[name]`, the first.)
    root = etree.fromstring(
        '<div data-t="1" id="i" data-t="2" class="c"/>', etree.XMLParser(recover=True)
    )
    assert native.locators is not None
    assert native.locators([root]) == [_locators(root.getroottree(), root)]
    assert native.locators([root]) == [("i", "c", (("data-t", "1"), ("data-t", "1")), "/div")]
    assert native.names is not None and native.names([root]) == [_names(root)]


TAGS = ["a", "div", "span", "p", "x-wrap", "li"]
NAMES = ["id", "class", "data-testid", "data-", "data-qa", "dat", "href", "datax"]
VALUES = ["", "a b", "é", "x&amp;y", "  "]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment=fragments(TAGS, NAMES, VALUES, width=5))
def test_generated_trees_read_alike(fragment: str) -> None:
    read_alike(etree.fromstring(f"<html><body>{fragment}</body></html>", etree.HTMLParser()))


def test_a_hook_whose_name_xml_forbids_is_read_alike_and_shifts_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # libxml2's HTML parser keeps a control character in an attribute's name; lxml's
    # `attrib[name]` refuses such a name (the Python once raised, the whole shift with it).
    raw = b'<html><body><a href="/x" data-\x01x="1" data-\xef\xbf\xbe="2">go</a></body></html>'
    link = etree.fromstring(raw, etree.HTMLParser()).find(".//a")
    assert link is not None and native.names is not None
    assert (
        native.names([link])
        == [_names(link)]
        == [(None, None, (("data-\x01x", "1"), ("data-\ufffe", "2")))]
    )
    read_alike(link.getroottree().getroot())
    ctx = ShiftContext(
        episode_id="e",
        seed=2,
        site=GENERIC,
        is_navigation=True,
        shift_params={"locator_drift": {"id_rate": 1.0, "class_rate": 1.0, "wrap_rate": 1.0}},
        assets=EMPTY,
    )
    shifted = [apply_shifts([LocatorDrift.name], HtmlDocument(raw), ctx).to_bytes()]
    for name in ("locators", "names", "paths"):
        monkeypatch.setattr(native, name, None)
    shifted.append(apply_shifts([LocatorDrift.name], HtmlDocument(raw), ctx).to_bytes())
    assert shifted[0] == shifted[1] and b'href="/x"' in shifted[0]
