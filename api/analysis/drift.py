"""Whether the perceptual drift changed anything an agent could locate by, page by page.

A `-Perc` condition is `Src` (or `Tgt`) on a page where its drift changed nothing: an app that
renders everything into `<body>` itself (JupyterLab's Lumino, Ember) serves markup with no
interactive element and no mount point to wrap, and a page shifted without its assets'
knowledge renames nothing. A result there says nothing about the perceptual shift, so the
reports count such navigations instead of leaving them to look like drifted ones. Read from
the `page_served` events' `shifts.locator_drift` notes.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable
from typing import Any

from proxy.json_markup import MAX_LEFT_KEYS


def drift_notes(event: dict[str, Any], kind: str = "document") -> dict[str, Any] | None:
    """The locator drift's notes of a navigation (or, of `kind` "fragment", a fragment) it
    ran on; None for any other event."""
    if event.get("type") != "page_served" or event.get("kind") != kind:
        return None
    shifts = event.get("shifts")
    notes = shifts.get("locator_drift") if isinstance(shifts, dict) else None
    return notes if isinstance(notes, dict) else None


def _count(notes: dict[str, Any], name: str) -> int:
    value = notes.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def drifted(notes: dict[str, Any]) -> bool:
    """Whether the drift changed what an agent could locate by on the page: a control's
    locator (id, classes, test hooks, path), a test hook anywhere, or, where the markup holds
    no control (a single-page app's shell), a wrapper around what the app renders into. An id
    renamed on something no agent locates (Angular's `<script id="ng-event-dispatch-
    contract">`) is no drift of the task's page."""
    if _count(notes, "locators_changed") or _count(notes, "hooks"):
        return True
    return not _count(notes, "interactive") and _count(notes, "wrappers") > 0


def drift_counts(events: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Navigations served under the locator drift, those it changed and those it did not."""
    return _counts(_navigations(events))


def drift_summary(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """`drift_counts`, the median share of interactive elements whose locator changed over
    the navigations that had any (`share`: None without one), and the fragments scripts
    fetched (HTML, or the markup of a JSON answer) counted alike, with the JSON screens that
    went out as they came for want of the scripts they name (`fragments_unshifted`): an app
    that changes screens by XHR (phpMyAdmin) shows its agent those after its first page."""
    events = list(events)
    found = _navigations(events)
    shares = [float(n["share"]) for n in found if isinstance(n.get("share"), int | float)]
    median = round(statistics.median(shares), 3) if shares else None
    fragments = [notes for event in events if (notes := drift_notes(event, "fragment")) is not None]
    changed = sum(map(drifted, fragments))
    return {
        **_counts(found),
        "median_share": median,
        "fragments_drifted": changed,
        "fragments_not_drifted": len(fragments) - changed,
        "fragments_unshifted": sum(map(_unshifted_screen, events)),
        "markup_left": _markup_left(events),
        # (code the page runs: its selectors widened to what the drift named,
        # `proxy.script_answer`, its markup counted with the fragments, `proxy.script_markup`)
        "script_answers": sum(event.get("type") == "script_answer" for event in events),
    }


def _markup_left(events: list[dict[str, Any]]) -> dict[str, int]:
    """The keys of JSON answers whose markup no rule reads, with how many strings were left
    under each over the episode, most first (at most `MAX_LEFT_KEYS`): an editor's source,
    as it must be, or an app's screens under a key the service does not know, whose drift is
    then off where the counts above say nothing (`markup_left` events, and the `left` of an
    answer whose other strings were shifted)."""
    left: Counter[str] = Counter()
    for event in events:
        if event.get("type") == "markup_left":
            keys = event.get("keys")
        elif event.get("type") == "page_served" and isinstance(event.get("markup_strings"), dict):
            keys = event["markup_strings"].get("left")
        else:
            continue
        if isinstance(keys, dict):
            left.update({str(key): max(_count(keys, key), 0) for key in keys})
    return {key: count for key, count in left.most_common(MAX_LEFT_KEYS) if count}


def _unshifted_screen(event: dict[str, Any]) -> bool:
    """A fragment (HTML, or a JSON answer's markup) served as it came: the scripts it brings
    could not be learnt."""
    if event.get("type") != "page_served":
        return False
    found = event.get("markup_strings")
    in_json = isinstance(found, dict) and bool(found.get("unknown_scripts"))
    return in_json or bool(event.get("unknown_scripts"))


def _navigations(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [notes for event in events if (notes := drift_notes(event)) is not None]


def _counts(found: list[dict[str, Any]]) -> dict[str, int]:
    changed = sum(map(drifted, found))
    return {"pages_drifted": changed, "pages_not_drifted": len(found) - changed}
