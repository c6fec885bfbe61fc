"""Which page loads the perceptual drift changed, from the `page_served` events' notes."""

from __future__ import annotations

from typing import Any

from api.analysis.drift import drift_counts, drift_summary


def served(kind: str = "document", **notes: Any) -> dict[str, Any]:
    shifts = {"locator_drift": notes} if notes else {}
    return {"type": "page_served", "kind": kind, "shifts": shifts, "changed": bool(notes)}


def test_a_load_counts_as_drifted_when_the_drift_changed_an_element() -> None:
    events = [
        served(interactive=12, locators_changed=5, share=0.417, ids=3),  # a page of controls
        served(interactive=0, wrappers=1, share=None),  # an SPA's mount point wrapped
        served(interactive=4, hooks=2, locators_changed=0, share=0.0),  # hooks dropped only
        # An app that renders into <body> itself: nothing in its markup to change.
        served(interactive=0, locators_changed=0, share=None, assets="complete"),
        # A page shifted without its assets' knowledge renames nothing.
        served(interactive=9, locators_changed=0, share=0.0, assets="incomplete"),
        # Angular's prerendered page: only its event-dispatch script's id renamed.
        served(interactive=5, locators_changed=0, ids=1, share=0.0),
        served(kind="fragment", interactive=3, locators_changed=3),  # no navigation
        served(),  # Src: no drift ran
        {"type": "popup_shown", "shifts": {"locator_drift": {"wrappers": 1}}},
    ]
    assert drift_counts(events) == {"pages_drifted": 3, "pages_not_drifted": 3}
    assert drift_summary(events)["median_share"] == 0.0  # of 0.417, 0.0, 0.0, 0.0
    assert drift_summary([served()]) == {
        "pages_drifted": 0,
        "pages_not_drifted": 0,
        "median_share": None,
        "fragments_drifted": 0,
        "fragments_not_drifted": 0,
        "fragments_unshifted": 0,
        "markup_left": {},
        "script_answers": 0,
    }


def test_fragments_are_counted_apart_with_the_screens_that_went_out_as_they_came() -> None:
    """phpMyAdmin changes screens by XHR: what its agent sees after the first page is
    fragments, HTML or the markup of JSON answers, counted as loads are; a JSON screen whose
    scripts could not be learnt went out as it came, and is counted so."""
    unshifted = {
        **served(kind="fragment"),
        "markup_strings": {"found": 1, "changed": 0, "unknown_scripts": ["sql.js"]},
    }
    events = [
        served(interactive=12, locators_changed=5, share=0.417),
        served(kind="fragment", interactive=3, locators_changed=1, share=0.333),
        served(kind="fragment", interactive=2, locators_changed=0, share=0.0),
        unshifted,
        # An HTML fragment that carries a script that could not be learnt.
        {**served(kind="fragment"), "unknown_scripts": ["http://app.test/js/missing.js"]},
    ]
    assert drift_summary(events) == {
        "pages_drifted": 1,
        "pages_not_drifted": 0,
        "median_share": 0.417,
        "fragments_drifted": 1,
        "fragments_not_drifted": 1,
        "fragments_unshifted": 2,
        "markup_left": {},
        "script_answers": 0,
    }


def test_the_keys_json_markup_was_left_under_are_summed_most_first() -> None:
    """An app's screens under a key no rule reads go out as they came: the report names the
    keys (an editor's source is among them, as it must be), summed over the episode."""
    events = [
        {"type": "markup_left", "url": "http://app.test/api", "keys": {"list": 2, "raw": 1}},
        {"type": "markup_left", "keys": {"list": 1, "odd": True, "neg": -1, "none": None}},
        {**served(kind="fragment", interactive=1), "markup_strings": {"left": {"raw": 3}}},
        {**served(kind="fragment"), "markup_strings": {"found": 1, "changed": 1}},
        {"type": "markup_left", "keys": ["list"]},  # (not the service's shape: nothing)
        {"type": "note", "keys": {"list": 9}},
    ]
    assert drift_summary(events)["markup_left"] == {"raw": 4, "list": 3}
    many = [{"type": "markup_left", "keys": {f"k{i}": i + 1 for i in range(30)}}]
    assert list(drift_summary(many)["markup_left"]) == [f"k{i}" for i in range(29, 9, -1)]


def test_the_screens_that_came_as_code_are_counted() -> None:
    events = [{"type": "script_answer", "url": "u", "selectors_widened": 2}] * 3
    assert drift_summary([*events, served()])["script_answers"] == 3
