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
