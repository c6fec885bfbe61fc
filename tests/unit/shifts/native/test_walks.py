"""The compiled walks (`shifts.native.interactive_elements`, `with_any_attributes`,
`with_a_class_of`, `links_to_keep`, `handlers_and_data_values`) against their definitions, the
Python ones: the same elements (and values) in the same order from every subtree of every saved
page and of generated trees, or None (the Python then walks) only where the C one says it
cannot."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from lxml import etree

from shifts import native
from shifts.document import _links_to_keep_read
from shifts.interactive import XPATH, _interactive_elements_read, interactive_elements
from shifts.perceptual.locators import ID_REFERENCES, _attribute_words_read
from shifts.references.inline import _handlers_and_data_values_read
from shifts.selectors import _with_a_class_of_read, _with_any_attributes_read, with_any_attributes
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments

HOOKS = frozenset({"data-testid", "data-test", "data-qa", "data-cy"})
# Classes a site protects (`sites/`), others the saved pages hold, and the empty name (between two
# separators of a class attribute, as XPath's `normalize-space` splits it).
CLASSES = frozenset({"title", "project-title", "entry-title", "page-title", "nav", "active"}) | {
    "btn",
    "",
    "a",
    "b",
    "é",
}


def test_they_are_built_here() -> None:
    # (Else every comparison below would compare the Python with itself.)
    assert native.interactive_elements is not None, native.why_not
    assert native.with_any_attributes is not None, native.why_not
    assert native.handlers_and_data_values is not None, native.why_not


def walked_alike(root: etree._Element) -> None:
    assert native.interactive_elements is not None and native.with_any_attributes is not None
    assert native.handlers_and_data_values is not None and native.with_a_class_of is not None
    # (Elements compare by identity: the C walk hands back lxml's own proxy of each node.)
    assert native.interactive_elements(root) == _interactive_elements_read(root)
    found = native.with_any_attributes(root, HOOKS, ID_REFERENCES, ())
    assert found == _with_any_attributes_read(root, HOOKS, ID_REFERENCES, ())
    assert native.handlers_and_data_values(root) == _handlers_and_data_values_read(root)
    assert native.with_a_class_of(root, CLASSES) == _with_a_class_of_read(root, CLASSES)
    assert native.links_to_keep is not None
    assert native.links_to_keep(root) == _links_to_keep_read(root)
    assert native.attribute_words is not None
    for name in ("class", "id", "data-testid"):
        for protected in (set(), set(root.iter("a", "div", "li"))):
            found = native.attribute_words(root, name, protected)
            assert found == _attribute_words_read(root, name, protected)


def test_every_saved_page_and_its_subtrees_walk_alike() -> None:
    members = classed = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        for subtree in [root, *root.iter("body", "form", "nav", "noscript", "template", "li")]:
            walked_alike(subtree)
        members += len(interactive_elements(root))
        assert interactive_elements(root) == XPATH(root)  # (the members' one definition)
        classed += len(_with_a_class_of_read(root, CLASSES))
        # (the saved pages' links are all written as they are: one of each kind made not)
        for tag, names in (("a", ("href", "name")), ("img", ("src",)), ("form", ("action",))):
            for element in itertools.islice(root.iter(tag), 1):
                for name in names:
                    element.set(name, "/é ?q=[x]|{y}")
        kept = _links_to_keep_read(root)
        assert native.links_to_keep is not None and native.links_to_keep(root) == kept
        assert len(kept) >= 2, page.name
    assert members > 500 and classed > 100


def test_an_attributes_words_are_each_once_in_document_order() -> None:
    root = etree.fromstring(
        '<div class="a"><p class="b c"/><p class="b c"/><p class="a"/><p class=""/>'
        '<i class=" c\xa0d\te "/><p class="b c"/><p id="x"/></div>',
        etree.HTMLParser(),
    )
    div = root.find(".//div")
    assert native.attribute_words is not None
    # (below the element: its own are not among them; split as `str.split` splits)
    found = native.attribute_words(div, "class", set())
    assert found == ["b", "c", "a", "d", "e"] == _attribute_words_read(div, "class", set())
    assert native.attribute_words(root, "class", set()) == ["a", "b", "c", "d", "e"]
    # (a protected element's are not: the walk that sets them leaves it)
    protected = {element for element in root.iter("p") if element.get("class") == "b c"}
    assert native.attribute_words(root, "class", protected) == ["a", "c", "d", "e"]
    assert _attribute_words_read(root, "class", protected) == ["a", "c", "d", "e"]
    assert native.attribute_words(root, "class", []) is None  # (no set: the Python's)

    class Nothing(set[etree._Element]):
        def __contains__(self, element: object) -> bool:
            return False

    # (a set's subclass may answer `in` its own way: the Python asks it)
    assert native.attribute_words(root, "class", Nothing(protected)) is None
    assert _attribute_words_read(root, "class", Nothing(protected)) == ["a", "b", "c", "d", "e"]
    assert native.attribute_words(root, "title", set()) == []


def test_a_namespaced_attribute_is_left_to_the_python() -> None:
    root = etree.fromstring(
        '<r xmlns:x="urn:x"><a x:data-testid="1" x:onclick="f()" href="/"/></r>'
    )
    assert native.with_any_attributes is not None
    assert native.with_any_attributes(root, {"data-testid"}) is None
    assert with_any_attributes(root, {"{urn:x}data-testid"})[0][0].tag == "a"
    # (Its name, `{urn:x}onclick` to Python, starts with neither prefix: no fallback.)
    assert native.handlers_and_data_values is not None
    assert native.handlers_and_data_values(root) == _handlers_and_data_values_read(root)
    assert native.handlers_and_data_values(root) == ([], [])
    # A namespaced element's links are links; its `name` is an anchor's only with no namespace.
    linked = etree.fromstring('<r xmlns:x="urn:x"><x:a name="a b" href="c d"/><a name="e f"/></r>')
    assert native.links_to_keep is not None
    assert native.links_to_keep(linked) == _links_to_keep_read(linked)
    assert [(e.tag, n, v) for e, n, v in _links_to_keep_read(linked)] == [
        ("{urn:x}a", "href", "c d"),
        ("a", "name", "e f"),
    ]


def test_name_sets_may_be_iterators_and_names_no_attribute_has_match_nothing() -> None:
    root = etree.fromstring('<div><a id="x" href="/">Go</a><b for="x">L</b></div>')
    names = (name for name in ["for"])
    assert [e.tag for e in with_any_attributes(root, names)[0]] == ["b"]
    # Bytes, a lone surrogate (no UTF-8 writes it), a NUL (no C string holds past it).
    odd: list[object] = [b"for", "\ud800", "href\x00zz", 7]
    assert native.with_any_attributes is not None
    assert native.with_any_attributes(root, odd) == _with_any_attributes_read(root, odd) == ([],)  # type: ignore[arg-type]
    classed = etree.fromstring('<div class="x"><a class="for">Go</a><b class="">L</b></div>')
    assert native.with_a_class_of is not None
    assert native.with_a_class_of(classed, odd) == [] == _with_a_class_of_read(classed, frozenset())
    assert native.with_a_class_of(classed, [*odd, ""]) == [classed[1]]
    # A carriage return in a class (set, or written `&#13;`: an HTML parser makes a line feed
    # of one written as it is) separates names, as a tab and a line feed do.
    classed[0].set("class", "for\rx")
    classed.set("class", "a\r\t\nb")
    for names in ({"x"}, {"b"}, {"for"}):
        assert native.with_a_class_of(classed, names) == _with_a_class_of_read(classed, names)
        assert len(_with_a_class_of_read(classed, frozenset(names))) == 1


def test_what_only_the_python_reads() -> None:
    assert native.interactive_elements is not None and native.with_any_attributes is not None
    assert native.handlers_and_data_values is not None and native.signature is not None
    # A proxy with no node: the Python refuses it in its own words, the C does not crash.
    empty = etree._Element.__new__(etree._Element)
    for walk in (native.interactive_elements, native.handlers_and_data_values, native.signature):
        assert walk(empty) is None
    assert native.with_any_attributes(empty, {"a"}) is None
    assert native.with_a_class_of is not None and native.with_a_class_of(empty, {"a"}) is None
    assert native.links_to_keep is not None and native.links_to_keep(empty) is None
    assert native.attribute_words is not None and native.attribute_words(empty, "a", set()) is None
    # A DTD's attribute defaults, which `get` reads of an element without its own.
    root = etree.fromstring(
        '<!DOCTYPE r [<!ATTLIST a href CDATA "x" class CDATA "c1">]><r><a>go</a></r>'
    )
    assert native.interactive_elements(root) is None and native.signature(root[0]) is None
    assert [e.tag for e in interactive_elements(root)] == ["a"]
    assert native.with_a_class_of(root, {"c1"}) is None
    # A class attribute that is no single text (an entity reference an XML parser kept).
    kept = etree.fromstring(
        '<!DOCTYPE r [<!ENTITY e "b">]><r><a class="a &e;"/></r>',
        etree.XMLParser(resolve_entities=False),
    )
    assert native.with_a_class_of(kept, {"a"}) is None
    assert native.attribute_words(kept, "class", set()) is None
    assert _attribute_words_read(kept, "class", set()) == ["a", "b"]  # (the Python's, then)
    linked = etree.fromstring(
        '<!DOCTYPE r [<!ENTITY e "b">]><r><a href="a &e;"/></r>',
        etree.XMLParser(resolve_entities=False),
    )
    assert native.links_to_keep(linked) is None
    # A repeated attribute (the HTML parser keeps the first; an XML parser's recovery, both):
    # `items` reads each by its name, so the first's value twice.
    twice = etree.fromstring('<div onclick="1" onclick="2"/>', etree.XMLParser(recover=True))
    assert native.handlers_and_data_values(twice) == _handlers_and_data_values_read(twice)


TAGS = ["a", "input", "button", "select", "summary", "div", "span", "noscript", "template", "form"]
VALUES = ["", "hidden", "HIDDEN", "button", "link", "tab", "menuitem", "checkbox", "x", "&amp;"] + [
    # (class attributes: separators of every kind, a no-break space, which is none)
    "a b",
    " a\tb\n",
    "b\r",
    "a\xa0b",
    "ab  é",
    "title",
    "/p?a=1&b=[2]|{3}",
    "/fine?a=1&b=2#x",
]
NAMES = ["href", "type", "role", "id", "data-testid", "data-qa", "for", "aria-labelledby"] + [
    "class",
    "src",
    "action",
    "name",
    "onclick",
    "on",
    "data-",
    "one",
    "datalist",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment=fragments(TAGS, NAMES, VALUES))
def test_generated_trees_walk_alike(fragment: str) -> None:
    root = etree.fromstring(f"<html><body>{fragment}</body></html>", etree.HTMLParser())
    for subtree in root.iter():
        if isinstance(subtree.tag, str):
            walked_alike(subtree)
