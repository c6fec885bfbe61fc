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


def test_a_script_reading_ids_as_data_is_stored() -> None:
    refs = js_refs("id = $link.attr('id').substr(2);")
    assert refs.parses_ids and refs_from_json(refs_to_json(refs)) == refs
    stored = refs_to_json(refs)
    del stored["parses_ids"]  # stored before REFS_VERSION 16: read as no such script
    assert not refs_from_json(stored).parses_ids


def test_the_steps_scripts_take_to_siblings_are_stored() -> None:
    refs = js_refs("$(a).next('span'); $(b).siblings('li.x')")
    assert refs_from_json(refs_to_json(refs)) == refs and len(refs.steps_held) == 3
    stored = refs_to_json(refs)
    del stored["steps_held"]  # stored before REFS_VERSION 16: read as none
    assert refs_from_json(stored).steps_held == frozenset()
