"""The compiled structural questions (`shifts.native.structure_matters`, through
`KeptMatches.structure_matters`) against their definition, the Python index's
(`model._StructureIndex.matching(element, kept, first=True)`): the same answer for every element
of every saved page and of generated trees, under their own stylesheets' rules and rules of every
kind, asked again as wrappers go in (the parent told, `children_changed`); or None (the Python
then answers) only where the C one says it cannot. `tests/unit/shifts/references/test_model.py`
compares both with each rule tested on the tree."""

from __future__ import annotations

import functools
import gc
import types
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import native
from shifts.references import css_refs, inline_refs
from shifts.references.model import UNKNOWN, AssetRefs, KeptMatches, PageRefs, _StructureIndex
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments

# Rules of every kind of key (an id, a class, an attribute, a tag, none), each with a parent,
# an ancestor or a sibling, none true of every element (a rule with no condition but its
# compound, `*:last-child`, would say yes of each and test nothing else).
EVERY_KIND = css_refs(
    "#top > a {} .nav > li {} .nav > li.active {} ul.nav > li {} [role] > a {}"
    "[data-x='1'] > span {} li > a {} li.active > a {} .menu li > a {} section * > p {}"
    ".x > * {} div * > * {} a + span {} h2 ~ p {} ul > .card:nth-child(2) {}"
    "div > span.btn {} div > a.btn {} * > button.btn {} form a.btn.btn-default {}"
    ".nav-sidebar > * {} ul > * {} [role] > * {} #top > * {} div.x > * {} p + * {}"
    "li.active > a {} .nav > a {} [data-x] > a {} nav > a {} #main > a {} a ~ a {}"
    "section p + p {} [TYPE=Submit] ~ span {} body > div {} table > tr > td {} div a ~ a {}"
    "li > a + ul {} * + a {} a ~ b {}"
)


def test_it_is_built_here() -> None:
    # (Else every comparison below would compare the Python with itself.)
    assert native.structure_matters is not None, native.why_not
    assert _StructureIndex(EVERY_KIND.structure).compiled is not None


def asked_alike(
    root: etree._Element, refs: AssetRefs, kept: KeptMatches, declines: bool = False
) -> tuple[int, int]:
    """Each node below `root` asked through `kept` (the C's answers kept there) and of the
    Python index with nothing kept: how many the C answered (all, unless it may decline some:
    `declines`), and how many were "yes"."""
    index = refs._structure_index
    answered = yes = 0
    for node in root.iter():
        expected = bool(index.matching(node, KeptMatches(), first=True))
        assert kept.structure_matters(index, node) is expected, etree.tostring(node)[:120]
        assert native.structure_matters is not None
        state = kept._compiled_states[index]
        found = native.structure_matters(state, node)
        if found is not None or not declines:
            assert found is expected, etree.tostring(node)[:120]
            answered += 1
        yes += expected
    return answered, yes


def wrap_some(root: etree._Element, kept: KeptMatches, every: int) -> None:
    """A wrapper in the place of every `every`th link, paragraph and item, as the drift puts
    one (its parent told)."""
    for element in list(root.iter("a", "p", "li", "span"))[::every]:
        parent = element.getparent()
        if parent is None:
            continue
        wrapper = element.makeelement("x-wrap")
        element.addprevious(wrapper)
        wrapper.append(element)
        kept.children_changed(parent)


def test_every_element_of_every_saved_page_is_asked_alike() -> None:
    answered = yes = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        for refs in (inline_refs(root), EVERY_KIND):
            if not refs.has_structure:
                continue
            kept = KeptMatches()
            for every in (0, 3, 2):  # (none wrapped, then some, then more)
                if every:
                    wrap_some(root, kept, every)
                more, found = asked_alike(root, refs, kept)
                answered, yes = answered + more, yes + found
    assert answered > 20_000 and yes > 2_000


TAGS = ["a", "div", "li", "span", "p", "ul", "x-wrap", "section"]
NAMES = ["id", "class", "role", "data-x", "type", "TYPE"]
VALUES = ["", "top", "nav", "x card", "1", "Submit", "main", "a\u00a0nav"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment=fragments(TAGS, NAMES, VALUES, width=4), every=st.integers(1, 4))
def test_generated_trees_are_asked_alike(fragment: str, every: int) -> None:
    root = etree.fromstring(f"<html><body>{fragment}</body></html>", etree.HTMLParser())
    kept = KeptMatches()
    # (A value beyond ASCII that a rule's attribute test lowercases: the Python answers.)
    asked_alike(root, EVERY_KIND, kept, declines="\u00a0" in fragment)
    wrap_some(root, kept, every)
    asked_alike(root, EVERY_KIND, kept, declines="\u00a0" in fragment)


def test_a_wrapper_is_asked_about_among_its_parents_children_as_they_are_then() -> None:
    """`a + span`: a span after a link matches; once the link is wrapped (the parent told), no
    link is the span's sibling, and what was kept of the parent is not read again."""
    root = etree.fromstring(
        "<html><body><div><a>1</a><span>2</span></div></body></html>", etree.HTMLParser()
    )
    refs = css_refs("a + span {}")
    span = root.find(".//span")
    assert span is not None
    kept = KeptMatches()
    index = refs._structure_index
    assert kept.structure_matters(index, span) is True
    a = root.find(".//a")
    assert a is not None
    wrapper = a.makeelement("x-wrap")
    a.addprevious(wrapper)
    wrapper.append(a)
    kept.children_changed(wrapper.getparent())  # type: ignore[arg-type]
    assert kept.structure_matters(index, span) is False
    assert bool(index.matching(span, KeptMatches(), first=True)) is False


def test_what_only_the_python_answers() -> None:
    refs = css_refs("ul > li {} * > b {} .x > i {}")
    index = refs._structure_index
    compiled = index.compiled
    assert native.structure_state is not None and native.structure_matters is not None
    state = native.structure_state(compiled)
    # A namespaced element, a name or a class beyond ASCII, DTD defaults, an element of a
    # subclass, a tag its proxy keeps that is not the node's (lxml reads the bytes set): the
    # Python answers (alike, through `KeptMatches`). The last two under rules that test
    # nothing of the element itself before (a class read of the defaults files it under `.x`;
    # a group of `*` names nothing): declined as soon as it is asked about.
    namespaced = etree.fromstring('<r xmlns="urn:x"><li/></r>')[0]
    beyond = etree.fromstring("<ul><\u0130/></ul>")[0]
    parser = etree.XMLParser()
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup(element=etree.ElementBase))
    own = etree.fromstring("<ul><li/></ul>", parser)[0]
    defaults = etree.fromstring('<!DOCTYPE r [<!ATTLIST i class CDATA "x">]><r><i/><b/></r>')[0]
    tagged = etree.fromstring("<ul><li/></ul>")[0]
    tagged.tag = b"li"  # type: ignore[assignment]
    for node, rules in (
        (namespaced, refs),
        (beyond, refs),
        (own, refs),
        (defaults, css_refs("* > b {} .x + b {}")),
        (tagged, css_refs("ul > * {}")),
    ):
        asked = rules._structure_index
        alone = native.structure_state(asked.compiled)  # (each its own document's: a state)
        assert native.structure_matters(alone, node) is None, etree.tostring(node)
        assert KeptMatches().structure_matters(asked, node) is bool(
            asked.matching(node, KeptMatches(), first=True)
        )
    # A comment is no element: no rule matches it.
    comment = etree.fromstring("<ul><!-- c --></ul>")[0]
    assert native.structure_matters(native.structure_state(compiled), comment) is False
    assert native.structure_matters(state, etree._Element.__new__(etree._Element)) is None
    # Arguments not as the index makes them: errors, never a guess.
    with pytest.raises(TypeError):
        native.structure_index(((None, True, ()),), {}, {}, {}, {})  # type: ignore[misc]
    with pytest.raises(TypeError):
        native.structure_index((("x", True, [()]),), {}, {}, {}, {}, ())  # type: ignore[misc]
    with pytest.raises(ValueError):  # (another capsule than a state)
        native.structure_matters(compiled, namespaced)
    with pytest.raises(ValueError):
        native.structure_state(state)
    with pytest.raises(TypeError):
        assert native.structure_children_changed is not None
        native.structure_children_changed(state, "ul")  # type: ignore[arg-type]
    # An index whose filing names a group it does not hold: declined, not read past its end.
    lost = native.structure_index((), {"li": (3,)}, {}, {}, {}, ())  # type: ignore[misc]
    li = etree.fromstring("<ul><li/></ul>")[0]
    assert native.structure_matters(native.structure_state(lost), li) is None


def test_an_element_passing_a_groups_filing_test_alone_is_not_matched() -> None:
    """`div > a.btn` is filed under the class `btn`: a `span.btn` is asked about it, and its
    compound then says no."""
    refs = css_refs("div > a.btn {} .nav > li.active {}")
    root = etree.fromstring(
        '<html><body><div class="nav"><i class="btn">1</i><p class="active">2</p></div>'
        '<div><a class="btn">3</a></div></body></html>',
        etree.HTMLParser(),
    )
    kept = KeptMatches()
    asked = {
        node.text: kept.structure_matters(refs._structure_index, node)
        for node in root.iter("i", "p", "a")
    }
    assert asked == {"1": False, "2": False, "3": True}


def test_two_rules_each_with_one_sibling_match_any_child() -> None:
    """`span ~ span` and `i ~ span` under one compound: the span is the first rule's only
    sibling (which it cannot be its own), and the `i` the second's; in either order."""
    assert native.structure_index is not None and native.structure_state is not None
    assert native.structure_matters is not None
    span: tuple = ("span", frozenset(), None, frozenset())
    i: tuple = ("i", frozenset(), None, frozenset())
    root = etree.fromstring("<html><body><div><i/><span/></div></body></html>", etree.HTMLParser())
    element = root.find(".//span")
    for rules in (((None, span), (None, i)), ((None, i), (None, span))):
        index = native.structure_index(
            ((span, False, ((None, rules),)),), {"span": (0,)}, {}, {}, {}, ()
        )
        assert native.structure_matters(native.structure_state(index), element) is True
    # The span alone: the first rule's only sibling is itself.
    index = native.structure_index(
        ((span, False, ((None, ((None, span),)),)),), {"span": (0,)}, {}, {}, {}, ()
    )
    assert native.structure_matters(native.structure_state(index), element) is False


def test_answers_are_kept_of_one_document() -> None:
    """Asked of a second document's elements (a page's references asked again of another
    tree), the C leaves them to the Python: its answers are kept by node, of the first."""
    refs = css_refs("ul > li {}")
    kept = KeptMatches()
    index = refs._structure_index
    first = etree.fromstring("<html><body><ul><li>1</li></ul></body></html>", etree.HTMLParser())
    li = first.find(".//li")
    assert li is not None and kept.structure_matters(index, li) is True
    state = kept._compiled_states[index]
    assert native.structure_matters is not None
    for _ in range(20):  # (the first's nodes kept alive: none of these reuses their addresses)
        other = etree.fromstring(
            "<html><body><ol><li>2</li></ol></body></html>", etree.HTMLParser()
        )
        other_li = other.find(".//li")
        assert other_li is not None
        assert native.structure_matters(state, other_li) is None
        assert kept.structure_matters(index, other_li) is False
    assert native.structure_matters(state, li) is True


def test_the_page_question_is_page_refs_structure_matters() -> None:
    """`PageRefs.structure_question()`, asking the C's states directly, answers as
    `structure_matters` does, for every element of every saved page, with an asset's rules of
    every kind and the page's own (each side alone, both, none), as wrappers go in."""
    asked = yes = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        inline = inline_refs(root)
        for assets, own in ((EVERY_KIND, inline), (UNKNOWN, inline), (EVERY_KIND, UNKNOWN)):
            refs, python = PageRefs(assets, own), PageRefs(assets, own)
            question = refs.structure_question()
            assert isinstance(question, types.FunctionType)  # (the C's, not the fallback)
            for every in (0, 3):
                if every:
                    wrap_some(root, refs._kept, every)
                    python = PageRefs(assets, own)  # (its answers made anew, of the tree now)
                for node in root.iter():
                    expected = python.structure_matters(node)
                    assert question(node) is expected, etree.tostring(node)[:120]
                    asked, yes = asked + 1, yes + expected
    assert asked > 20_000 and yes > 2_000


def test_the_page_question_holds_no_reference_to_the_page_refs() -> None:
    """Kept on the references it came from, it would make a reference cycle: the page's tree,
    held by what the question keeps, freed only by a collection. Without the C, it is the
    Python's."""
    root = etree.fromstring(b"<ul class=nav><li>a</li></ul>", etree.HTMLParser())
    refs = PageRefs(EVERY_KIND, inline_refs(root))
    question = refs.structure_question()
    assert refs not in gc.get_referents(*(cell.cell_contents for cell in question.__closure__))
    with patch.object(native, "structure_matters", None):
        fallback = PageRefs(EVERY_KIND, inline_refs(root)).structure_question()
    assert isinstance(fallback, functools.partial)
    for node in root.iter():
        assert question(node) is fallback(node) is refs.structure_matters(node)
    # The C keeps answers of the first document it is asked about: another's are the Python's.
    other = etree.fromstring(b"<ul class=nav><li>b</li></ul>", etree.HTMLParser())
    li = other.find(".//li")
    assert li is not None and question(li) is True is refs.structure_matters(li)
