from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shifts import ShiftContext, apply_shifts
from shifts.document import HtmlDocument
from shifts.perceptual.locators import LocatorDrift
from sites import GENERIC

ALWAYS = {"hook_drop_rate": 0.0, "id_rate": 1.0, "wrap_rate": 1.0, "tag_rate": 1.0}
CTX = ShiftContext(
    episode_id="e",
    seed=2,
    site=GENERIC,
    is_navigation=False,
    shift_params={"locator_drift": ALWAYS},
)
PAGE = (
    b"<html><body>"
    b"<div id='banner' data-testid='hero'><label for='q'>Query</label></div>"
    b"<form action='/s'><input id='q' name='q'><button>Go</button>"
    b"<button name='act' value='x'>Named</button></form>"
    b"<a href='#top'>Top</a><div id='top' aria-labelledby='banner'>x</div>"
    b"<span class='qa-thing other'>y</span>"
    b"<script>document.getElementById('used').focus()</script><p id='used'>z</p>"
    b"</body></html>"
)


def drift(raw: bytes = PAGE, ctx: ShiftContext = CTX) -> tuple[bytes, dict]:  # type: ignore[type-arg]
    doc = apply_shifts([LocatorDrift.name], HtmlDocument(raw), ctx)
    return doc.to_bytes(), doc.notes[LocatorDrift.name]


def test_independent_ids_and_their_references_move_together() -> None:
    out, notes = drift()
    assert b'id="banner"' not in out and notes["ids"] == 1
    new_id = out.split(b'aria-labelledby="')[1].split(b'"')[0]
    assert b'<div id="' + new_id + b'"' in out  # the reference follows the rename


def test_ids_that_something_depends_on_stay() -> None:
    out, _ = drift()
    assert b'id="q"' in out and b'for="q"' in out  # a form control
    assert b'id="top"' in out  # a fragment-link target
    assert b'id="used"' in out  # mentioned by an inline script


def test_hooks_classes_tags_and_wrappers() -> None:
    out, notes = drift()
    assert b"data-testid" not in out and b'"hero"' not in out  # renamed attribute and value
    assert b"qa-thing" not in out and b"other" in out
    assert b'<input type="submit" value="Go">' in out  # nameless submit button
    assert b'<button name="act" value="x">' in out  # a named one submits its value: kept
    assert b"><span class=" in out and notes["wrappers"] >= 1


def test_no_drift_when_rates_are_zero_except_hooks() -> None:
    ctx = ShiftContext(
        episode_id="e",
        seed=2,
        site=GENERIC,
        is_navigation=False,
        shift_params={
            "locator_drift": {
                "hook_drop_rate": 1.0,
                "id_rate": 0.0,
                "wrap_rate": 0.0,
                "tag_rate": 0.0,
            }
        },
    )
    out, notes = drift(ctx=ctx)
    assert b'id="banner"' in out and b"<button>Go</button>" in out
    assert notes == {"hooks": 1, "classes": 1}
    assert b'"hero"' not in out  # dropped outright


@given(
    page=st.text(alphabet="ab-_ .#\"'<>=x1é", max_size=80),
    name=st.text(alphabet="ab-_x1", min_size=1, max_size=4),
)
def test_mentions_count_words_as_tokenising_would(page: str, name: str) -> None:
    import re
    from collections import Counter

    from shifts.perceptual.locators import _Mentions

    raw = page.encode()
    tokens = Counter(re.findall(rb"[A-Za-z0-9_-]+", raw))
    assert _Mentions(raw).count(name) == tokens[name.encode()]
