"""Stored references read back as the readers that stored them read them."""

from __future__ import annotations

from shifts.references import css_refs, js_refs, merge_refs, refs_from_json, refs_to_json


def test_refs_round_trip() -> None:
    refs = merge_refs([css_refs("[role=tree] > li { x: y }"), js_refs('q("[data-sortable]")')])
    assert refs_from_json(refs_to_json(refs)) == refs


def test_refs_stored_before_script_attributes_keep_their_widget_attributes() -> None:
    """A page learnt before REFS_VERSION 12 is shifted as before (docs/knowledge.md): its
    stored refs have no `script_attributes`, and every attribute they read held a widget's
    children then. Read as none, every `[data-controller]`'s children came free."""
    stored = refs_to_json(js_refs('document.querySelectorAll("[data-controller]")'))
    del stored["script_attributes"]
    refs = refs_from_json(stored)
    assert refs.reads_widget_attributes
    assert refs.scripts_read_attribute("data-controller")
