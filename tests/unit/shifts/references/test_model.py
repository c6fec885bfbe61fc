"""What references are, merged."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from shifts.references import (
    EMPTY,
    AssetRefs,
    css_refs,
    js_refs,
    merge_refs,
)
from shifts.references.model import StructuralRule, _matches_read


def test_merging_keeps_everything_and_incompleteness_wins() -> None:
    merged = merge_refs([css_refs("#a {}"), js_refs("f('b')"), AssetRefs(complete=False)])
    assert merged.references("a") and merged.references("b") and not merged.complete
    assert merge_refs([EMPTY, EMPTY]).complete


def test_ancestor_answers_kept_per_node_are_what_walking_up_finds() -> None:
    from shifts.references.css import compound_keys
    from shifts.references.model import KeptMatches, _matches_read
    from tests.helpers.fixtures import fixture_pages

    compounds = [compound_keys(c) for c in (".nav-sidebar", "ul", "div.x", "*", "[role]", "#top")]
    for path in fixture_pages():
        root = etree.fromstring(path.read_bytes(), etree.HTMLParser())
        kept = KeptMatches()
        for element in root.iter():
            for keys in compounds:
                walked = any(_matches_read(node, keys) for node in element.iterancestors())
                assert kept.at_or_above(element.getparent(), keys) == walked
        # A wrapper put in above a node leaves every answer as walking up finds it.
        for element in list(root.iter("a"))[:50]:
            wrapper = etree.Element("x-wrap")
            element.addprevious(wrapper)
            wrapper.append(element)
        for element in root.iter():
            for keys in compounds:
                walked = any(_matches_read(node, keys) for node in element.iterancestors())
                assert kept.at_or_above(element.getparent(), keys) == walked


def test_the_attributes_whose_values_decide_a_place_are_those_a_rule_or_a_step_tests() -> None:
    """A structural rule's value test (`[data-step="3"] > a`, on any of its compounds) and a
    script's step to a sibling by a value (`.next("[data-pos=2]")`) decide by what the
    attribute holds; a test of its presence (`[data-controller] > a`), a rule that is no
    structure (`[data-kind="x"] a`) and a script that reads the attribute do not."""
    refs = merge_refs(
        [
            css_refs(
                '[data-step="3"] > a {} div > [Data-Col^="c"] {} [data-controller] > a {}'
                '[data-kind="x"] a {} [data-row="1"] + li {}'
            ),
            js_refs('$(el).next("[data-pos=2]"); el.getAttribute("data-read")'),
        ]
    )
    assert refs.values_tested == {"data-step", "data-col", "data-row", "data-pos"}


def could_match(rule: StructuralRule, element: etree._Element) -> bool:
    """The definition the index is held to: `rule` tested of `element` where it is in its
    tree (each compound by `_matches_read`, the ancestors walked, the siblings looked at)."""
    parent = element.getparent()
    above = [] if parent is None else [parent, *parent.iterancestors()]
    return (
        isinstance(element.tag, str)
        and _matches_read(element, rule.keys)
        and (rule.parent is None or parent is None or _matches_read(parent, rule.parent))
        and (rule.ancestor is None or any(_matches_read(n, rule.ancestor) for n in above))
        and (
            rule.sibling is None
            or parent is None
            or any(n is not element and _matches_read(n, rule.sibling) for n in parent)
        )
    )


def test_the_index_finds_the_rules_that_testing_each_rule_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`structural_rules_of` (rules filed by a name, grouped by compound and parent compound,
    answers kept per node) against each rule tested in turn, on every element of the saved
    pages, with their own stylesheets' rules and with rules of every kind of key: an id, a
    class, an attribute, a tag, none (`*`), each with a parent, an ancestor or a sibling."""
    from shifts.references import inline_refs
    from shifts.references.model import PageRefs, _Group
    from tests.helpers.fixtures import fixture_pages

    every_kind = css_refs(
        "#top > a {} .nav > li {} .nav > li.active {} ul.nav > li {} [role] > a {}"
        "[data-x='1'] > span {} li > a {} li.active > a {} .menu li > a {} * > p:first-child {}"
        ".x > * {} div * > * {} a + span {} h2 ~ p {} .card:nth-child(2) {} *:last-child {}"
        "div > span.btn {} div > a.btn {} * > button.btn {} form a.btn.btn-default {}"
        "div:has(> img) {}"
        # (one compound under many parent compounds, each of another kind of test: a parent
        # is asked about those whose test it passes, `_Group.parent_compounds`)
        ".nav-sidebar > * {} ul > * {} [role] > * {} #top > * {} div.x > * {} * + * {}"
        "li.active > a {} .nav > a {} [data-x] > a {} nav > a {} #main > a {} a ~ a {}"
    )
    found = 0
    for path in fixture_pages():
        root = etree.fromstring(path.read_bytes(), etree.HTMLParser())
        for assets in (EMPTY, every_kind):
            refs = PageRefs(assets, inline_refs(root))
            rules = [
                rule
                for rule in refs.assets.structure | refs.inline.structure
                if rule.kind != "subtree"
            ]
            for element in root.iter():
                expected = {rule for rule in rules if could_match(rule, element)}
                assert set(refs.structural_rules_of(element)) == expected, element.tag
                assert refs.structure_matters(element) == bool(expected)
                found += bool(expected)
            # A parent's compounds filed by their tests give the rules in the order they
            # come in without (each one tested).
            with monkeypatch.context() as patched:
                patched.setattr(_Group, "FILED_PAST", 10**9)
                unfiled = PageRefs(assets, inline_refs(root))
                for element in root.iter():
                    in_order = unfiled.structural_rules_of(element)
                    assert refs.structural_rules_of(element) == in_order, element.tag
    assert found > 1000  # (a test that found no rule would prove nothing)


def test_the_rules_found_after_wrappers_go_in_are_those_of_the_tree_then() -> None:
    """Asked of every element, then of every element again once wrappers took some links' and
    paragraphs' places (the parent told, as the drift tells it), the index finds what testing
    each rule on the tree as it is then finds: a sibling kept for a parent's children (`a +
    span`) is one no more once it is inside a wrapper."""
    from shifts.references import inline_refs
    from shifts.references.model import PageRefs
    from tests.helpers.fixtures import fixture_pages

    assets = css_refs(
        "a + span {} a ~ b {} h2 ~ p {} p + * {} * + a {} li > a + ul {} div a ~ a {} a ~ a {}"
    )
    changed = 0
    for path in fixture_pages():
        root = etree.fromstring(path.read_bytes(), etree.HTMLParser())
        refs = PageRefs(assets, inline_refs(root))
        rules = [r for r in refs.assets.structure | refs.inline.structure if r.kind != "subtree"]
        # (asked before, as the drift asks: what is kept then must be let go of as wrappers go in)
        before = {e: set(refs.structural_rules_of(e)) for e in root.iter()}
        for element in root.iter():
            assert refs.structure_matters(element) == bool(before[element]), element.tag
        for element in [*list(root.iter("a"))[::3], *list(root.iter("p"))[::2]]:
            parent = element.getparent()
            if parent is None:
                continue
            wrapper = etree.Element("x-wrap")
            element.addprevious(wrapper)
            wrapper.append(element)
            refs.children_changed(parent)
        for element in root.iter():
            expected = {rule for rule in rules if could_match(rule, element)}
            assert set(refs.structural_rules_of(element)) == expected, element.tag
            assert refs.structure_matters(element) == bool(expected), element.tag
            changed += element in before and before[element] != expected
    assert changed > 20  # (wrappers that changed no answer would prove nothing)


def test_a_page_references_what_either_of_its_assets_does() -> None:
    # Names, prefixes and suffixes of the external assets and of the inline ones, asked in one.
    from shifts.references.model import PageRefs

    assets = merge_refs([css_refs(".card {} #top {}"), js_refs("el.classList.add('is-' + s)")])
    inline = merge_refs([js_refs("x = name + '-group'; y = 'drawer'")])
    page = PageRefs(assets, inline)
    names = ["card", "top", "is-open", "drawer", "size-group", "wrapper", "is", "group", ""]
    for name in names:
        assert page.references(name) == (assets.references(name) or inline.references(name))
    assert [page.references(name) for name in names[:6]] == [True] * 5 + [False]


def test_the_names_unreached_are_those_neither_referenced_nor_reached() -> None:
    """`unreached` (set differences and one pass for the built names) against `references`
    and `reaches_id` asked of each name: on every saved page's ids, classes and script words
    with its own inline references, beside assets of every kind of name (ids, classes,
    attribute values, words, free names, prefixes, suffixes) and none."""
    from shifts.references import inline_refs
    from shifts.references.model import PageRefs
    from tests.helpers.fixtures import fixture_pages

    every_kind = merge_refs(
        [
            css_refs(".card {} #top {} [data-role='menu'] {}"),
            js_refs(
                "el.classList.add('is-' + s); x = name + '-group'; main.focus(); "
                "document.getElementById('drawer')"
            ),
        ]
    )
    assert every_kind.prefixes and every_kind.suffixes and every_kind.free_names
    # (and assets with a script's prefix alone, or its suffix alone)
    prefixed = js_refs("el.classList.add('is-' + s)")
    suffixed = js_refs("x = name + '-group'")
    assert prefixed.prefixes and not prefixed.suffixes
    assert suffixed.suffixes and not suffixed.prefixes
    asked = 0
    for path in fixture_pages():
        root = etree.fromstring(path.read_bytes(), etree.HTMLParser())
        names = {"", "card", "top", "menu", "is-open", "size-group", "main", "drawer", "zq-none"}
        for element in root.iter(etree.Element):
            names.update([element.get("id") or "", *(element.get("class") or "").split()])
        for assets in (EMPTY, every_kind, prefixed, suffixed):
            refs = PageRefs(assets, inline_refs(root))
            names.update(refs.inline.words, refs.inline.free_names, refs.assets.free_names)
            expected = {n for n in names if not (refs.references(n) or refs.reaches_id(n))}
            assert refs.unreached(names) == expected
            assert refs.unreached(iter(sorted(names))) == expected  # (any iterable)
            asked += len(names)
            # (a name of every kind is told apart: each is reached, `zq-none` is not)
            every = {"card", "top", "menu", "is-open", "size-group", "main", "drawer"}
            assert assets is not every_kind or not every & expected
            assert assets is not prefixed or "is-open" not in expected
            assert assets is not suffixed or "size-group" not in expected
            assert "zq-none" in expected
    assert asked > 10_000


@given(
    st.none() | st.text("aAbB- x", max_size=6),
    st.sampled_from(["", "=", "~=", "|=", "^=", "$=", "*=", "!="]),
    st.text("aAbB- x", max_size=3),
)
def test_an_attribute_test_is_its_operators_alone(actual: str | None, op: str, wanted: str) -> None:
    """Each operator's test, case-insensitively (`[a]` only asks for the attribute; one no
    compound is read with may match), as a table of every operator's test said."""
    from shifts.references.model import _attribute_matches

    def table(actual: str | None) -> bool:
        if actual is None:
            return False
        actual, low = actual.lower(), wanted.lower()
        return {
            "": True,
            "=": actual == low,
            "~=": low in actual.split(),
            "|=": actual == low or actual.startswith(low + "-"),
            "^=": actual.startswith(low),
            "$=": actual.endswith(low),
            "*=": low in actual,
        }.get(op, True)

    assert _attribute_matches(actual, op, wanted) == table(actual)
