"""The compiled compound test (`shifts.native.matches`) against its definition
(`references.model._matches_read`): the same answer for every element of every saved page against
every compound of their stylesheets' structural rules, and for generated elements and compounds
(tags and attribute values in any case, every attribute operator, classes split where Python's
`str.split` splits); or None (the Python then answers) only where the C one says it cannot."""

from __future__ import annotations

import html

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import native
from shifts.references.css import compound_keys
from shifts.references.inline import inline_refs
from shifts.references.model import Keys, _matches, _matches_read
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments


def test_it_is_built_here() -> None:
    # (Else every comparison below would compare the Python with itself.)
    assert native.matches is not None, native.why_not


def compounds_of_saved_pages() -> set[Keys]:
    found: set[Keys] = set()
    for page in fixture_pages():
        refs = inline_refs(etree.fromstring(page.read_bytes(), etree.HTMLParser()))
        for rule in refs.structure:
            found.update(k for k in (rule.keys, rule.parent, rule.ancestor, rule.sibling) if k)
    return found


# Compounds of every shape `compound_keys` reads, each operator, cases that lowercase.
WRITTEN = [
    "*",
    "A",
    "li",
    "div.row",
    ".a.b",
    "#main",
    "a#Main.x",
    "[data-step]",
    "[data-step=3]",
    '[type="Submit" i]',
    "[class~=b]",
    "[lang|=en]",
    "[href^=http]",
    "[href$='.PDF']",
    "[style*=color]",
    "[title*='']",
    "[title^='']",
    "input[type=checkbox][checked]",
    "button.btn[aria-expanded=true]",
]


def answers_alike(root: etree._Element, compounds: list[Keys]) -> tuple[int, int]:
    """Compare the two on every node below `root` (comments and PIs too) against each
    compound: how many answers the C gave and how many it declined."""
    assert native.matches is not None
    answered = declined = 0
    for node in root.iter():
        for keys in compounds:
            found = native.matches(node, keys)
            expected = _matches_read(node, keys)
            if found is None:
                declined += 1
            else:
                assert found is expected, (etree.tostring(node)[:200], keys)
                answered += 1
            assert _matches(node, keys) is expected
    return answered, declined


def test_every_element_of_every_saved_page_answers_alike() -> None:
    compounds = sorted(compounds_of_saved_pages() | {compound_keys(c) for c in WRITTEN}, key=repr)
    assert len(compounds) > 50
    answered = declined = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        more, fewer = answers_alike(root, compounds)
        answered, declined = answered + more, declined + fewer
    assert answered > 300_000
    assert declined < answered / 1000  # (a page's names and values are mostly ASCII)


TAGS = ["a", "div", "li", "span", "input", "x-wrap"]
NAMES = ["id", "class", "type", "data-step", "href", "lang", "title", "Data-Step"]
VALUES = [
    "",
    "a",
    "A b",
    "en-US",
    "x\u00a0y",  # (no-break space: Python splits there)
    "x\u200by",  # (zero-width space: it does not)
    "\x1cs\x1f",
    "HTTP://x.PDF",
    "é",
    "İ",
]
WORDS = ["a", "A", "b", "en", "x", "y", "s", "http", ".pdf", "", "é", "İ", "x\u200by", "a b", "-"]
OPERATORS = ["", "=", "~=", "|=", "^=", "$=", "*=", "!="]


@st.composite
def compounds(draw: st.DrawFn) -> Keys:
    return (
        draw(st.sampled_from([None, "a", "div", "li", "input", "é"])),
        frozenset(draw(st.lists(st.sampled_from(WORDS), max_size=2))),
        draw(st.sampled_from([None, "a", "A b", "é"])),
        frozenset(
            draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(NAMES[1:]).map(str.lower),
                        st.sampled_from(OPERATORS),
                        st.sampled_from(WORDS),
                    ),
                    max_size=3,
                )
            )
        ),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment=fragments(TAGS, NAMES, VALUES, width=4), keys=st.lists(compounds(), max_size=6))
def test_generated_elements_answer_alike(fragment: str, keys: list[Keys]) -> None:
    root = etree.fromstring(f"<html><body>{fragment}</body></html>", etree.HTMLParser())
    answers_alike(root, keys)


def test_a_test_is_answered_past_what_the_c_declines_elsewhere() -> None:
    # A value beyond ASCII is lowercased only where its test reads it: there (presence), or
    # another test's answer first, the C answers.
    root = etree.fromstring(
        '<html><body><a title="İ" lang="en">x</a></body></html>', etree.HTMLParser()
    )
    a = root.find("body/a")
    assert native.matches is not None
    assert native.matches(a, (None, frozenset(), None, frozenset({("title", "", "")}))) is True
    assert native.matches(a, ("b", frozenset(), None, frozenset({("title", "=", "i")}))) is False
    assert native.matches(a, (None, frozenset(), None, frozenset({("title", "=", "i")}))) is None
    assert _matches(a, (None, frozenset(), None, frozenset({("title", "=", "i̇")}))) is True


class Own(etree.ElementBase):
    """An element class of its own."""


def test_what_only_the_python_answers() -> None:
    assert native.matches is not None
    element = etree.fromstring('<r><a id="i" class="c" title="t"/></r>')[0]
    any_a: Keys = ("a", frozenset(), None, frozenset())
    assert native.matches(element, any_a) is True
    # A namespaced element (its tag `{urn:x}a`), a name beyond ASCII (lowercased as Python
    # lowercases it), a value that is no single text, DTD defaults.
    namespaced = etree.fromstring('<r xmlns="urn:x"><a/></r>')[0]
    beyond = etree.fromstring("<r><\u0130a/></r>")[0]
    parser = etree.XMLParser(resolve_entities=False)
    entity = etree.fromstring(
        '<!DOCTYPE r [<!ENTITY e "v">]><r><a id="&e;" class="&e;"/></r>', parser
    )[0]
    defaults = etree.fromstring('<!DOCTYPE r [<!ATTLIST a class CDATA "c">]><r><a/></r>')[0]
    by_id: Keys = (None, frozenset(), "v", frozenset())
    by_class: Keys = (None, frozenset({"c"}), None, frozenset())
    for node, keys in (
        (namespaced, any_a),
        (beyond, any_a),
        (entity, by_id),
        (entity, by_class),
        (defaults, by_class),
    ):
        assert native.matches(node, keys) is None
        assert _matches(node, keys) is _matches_read(node, keys)
    assert _matches(defaults, by_class) is True
    # Keys not as `compound_keys` makes them; an attribute's name lxml reads as namespaced or
    # refuses (the Python raises), an operator or a value with a 0 in it.
    for keys in (
        ("a", frozenset(), None),
        ["a", frozenset(), None, frozenset()],
        ("a", {"c"}, None, frozenset()),
        (None, frozenset({1}), None, frozenset()),
        (1, frozenset(), None, frozenset()),
        (None, frozenset(), 1, frozenset()),
        (None, frozenset(), None, frozenset({("title", "=")})),
        (None, frozenset(), None, frozenset({("title", "=", 1)})),
        (None, frozenset(), None, frozenset({("{urn:x}title", "", "")})),
        (None, frozenset(), None, frozenset({("ti\x01tle", "", "")})),
        (None, frozenset(), None, frozenset({("title", "=\x00", "t")})),
        (None, frozenset(), "\ud800", frozenset()),
    ):
        assert native.matches(element, keys) is None, keys  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        _matches(element, (None, frozenset(), None, frozenset({("ti\x01tle", "", "")})))
    # A value with a 0 in it holds no attribute's: no answer but False.
    assert native.matches(element, (None, frozenset(), "i\x00", frozenset())) is False
    # No element: a comment's tag is no string; a proxy with no node, no element at all.
    comment = etree.fromstring("<r><!-- c --></r>")[0]
    assert native.matches(comment, any_a) is False is _matches_read(comment, any_a)
    empty = etree._Element.__new__(etree._Element)
    assert native.matches(empty, any_a) is None
    # An element of a subclass (which may read its names its own way).
    parser = etree.XMLParser()
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup(element=Own))
    own = etree.fromstring("<r><a/></r>", parser)[0]
    assert native.matches(own, any_a) is None and _matches(own, any_a) is True
    assert native.matches("a", any_a) is None  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        native.matches(element)  # type: ignore[call-arg]


def test_every_test_of_every_value_answers_alike() -> None:
    """Each operator with each word, each class, against each value (the generated trees meet
    few of these pairs), on elements whose names are in either case (an XML tree keeps them)."""
    compounds: list[Keys] = [
        (None, frozenset(), None, frozenset({("title", operator, word)}))
        for operator in OPERATORS
        for word in WORDS
    ]
    compounds += [(None, frozenset({word}), None, frozenset()) for word in WORDS]
    compounds += [(tag, frozenset(), None, frozenset()) for tag in ("a", "div", "é", None)]
    answered = 0
    for value in VALUES:
        quoted = html.escape(value)
        page = f'<html><body><a title="{quoted}" class="{quoted}">x</a><div/></body></html>'
        answered += answers_alike(etree.fromstring(page, etree.HTMLParser()), compounds)[0]
        if value.isprintable():  # (lxml's API refuses control characters: the parser keeps them)
            root = etree.Element("r")
            for tag in ("A", "DiV"):
                etree.SubElement(root, tag, title=value, attrib={"class": value})
            answered += answers_alike(root, compounds)[0]
    assert answered > 5_000


def test_names_lxml_refuses_are_the_pythons_in_either_order() -> None:
    """An attribute's name that lxml's `get` refuses (empty, U+FFFF): the Python raises, and
    the C declines, before or after a test that says no (a set's order is its own)."""
    element = etree.fromstring('<r><a title="t"/></r>')[0]
    assert native.matches is not None
    raised = answered = 0
    for refused in ("", "a\uffff", "a\ufffe", "\u00e9"):
        alone: Keys = (None, frozenset(), None, frozenset({(refused, "", "")}))
        assert native.matches(element, alone) is None, refused
        for missing in ("b", "c", "d", "e", "f"):  # (some before the refused name, some after)
            tests = frozenset({(refused, "", ""), (missing, "", "")})
            keys: Keys = (None, frozenset(), None, tests)
            found = native.matches(element, keys)
            try:
                expected = _matches_read(element, keys)
            except ValueError:
                assert found is None, (refused, missing)
                raised += 1
            else:
                assert found in (None, expected)
                answered += found is not None
    assert raised and answered  # (both orders met)


def test_long_values_answer_alike() -> None:
    """Values and words of every length around 256 bytes, with every operator."""
    compounds: list[Keys] = []
    for length in (1, 255, 256, 257, 600):
        word = "Ab" * (length // 2) + "c" * (length % 2)
        compounds += [
            (None, frozenset(), None, frozenset({("title", operator, word)}))
            for operator in OPERATORS
        ]
    root = etree.Element("r")
    for length in (0, 255, 256, 257, 600, 1200):
        value = ("aB" * 700)[:length]
        etree.SubElement(root, "a", title=value)
        etree.SubElement(root, "a", title=value + " " + value.upper() + "-x")
    assert answers_alike(root, compounds)[0] > 400


def test_a_tag_set_on_an_element_is_read_as_the_python_reads_it() -> None:
    """lxml reads the tag its proxy keeps (`element.tag = b"a"` keeps the bytes, and the
    Python then reads no string): what it keeps, the C declines where it is not the node's."""
    root = etree.fromstring("<r><a/><b/><c/></r>")
    a, b, c = root
    a.tag = b"a"  # type: ignore[assignment]
    b.tag = "{}b"
    assert c.tag == "c"  # (kept, as read: the node's own)
    assert native.matches is not None
    for node in (a, b, c):
        keys: Keys = (etree.QName(node).localname, frozenset(), None, frozenset())
        found = native.matches(node, keys)
        assert found is (None if node is not c else True)
        assert _matches(node, keys) is _matches_read(node, keys)
