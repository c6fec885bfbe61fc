"""What references are, merged."""

from __future__ import annotations

from shifts.references import (
    EMPTY,
    AssetRefs,
    css_refs,
    js_refs,
    merge_refs,
)


def test_merging_keeps_everything_and_incompleteness_wins() -> None:
    merged = merge_refs([css_refs("#a {}"), js_refs("f('b')"), AssetRefs(complete=False)])
    assert merged.references("a") and merged.references("b") and not merged.complete
    assert merge_refs([EMPTY, EMPTY]).complete


def test_ancestor_answers_kept_per_node_are_what_walking_up_finds() -> None:
    from lxml import etree

    from shifts.references.css import compound_keys
    from shifts.references.model import AncestorMatches, _matches
    from tests.helpers.fixtures import fixture_pages

    compounds = [compound_keys(c) for c in (".nav-sidebar", "ul", "div.x", "*", "[role]", "#top")]
    for path in fixture_pages():
        root = etree.fromstring(path.read_bytes(), etree.HTMLParser())
        kept = AncestorMatches()
        for element in root.iter():
            for keys in compounds:
                walked = any(_matches(node, keys) for node in element.iterancestors())
                assert kept.at_or_above(element.getparent(), keys) == walked
        # A wrapper put in above a node leaves every answer as walking up finds it.
        for element in list(root.iter("a"))[:50]:
            wrapper = etree.Element("x-wrap")
            element.addprevious(wrapper)
            wrapper.append(element)
        for element in root.iter():
            for keys in compounds:
                walked = any(_matches(node, keys) for node in element.iterancestors())
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
