from __future__ import annotations

import json
from dataclasses import replace
from html import unescape

from shifts import ShiftContext, apply_shifts
from shifts.document import HtmlDocument
from shifts.perceptual.relabel import chosen_labels
from sites import GENERIC

PAGE = (
    b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    b"<a href='/login'>Sign in</a>"
    b"<button class='b'> Search </button>"
    b"<button><span>Save</span> <b>draft</b></button>"
    b"<h1>How to Sign in safely</h1>"
    b"<input name='q' placeholder='Search'>"
    b"<input type='submit' value='Submit'>"
    b"<input type='submit' name='action' value='Submit'>"
    b"<form class='keep'><button>Cancel</button></form>"
    b"</body></html>"
)
SITE = replace(
    GENERIC,
    protected_selectors=("form.keep",),
    relabels={
        "Sign in": ("Log in",),
        "Search": ("Find",),
        "Submit": ("Send",),
        "Save": ("Save changes",),
        "Cancel": ("Dismiss",),
    },
)
CTX = ShiftContext(episode_id="e", seed=1, site=SITE)


def relabel(raw: bytes, ctx: ShiftContext = CTX) -> bytes:
    return apply_shifts(["relabel"], HtmlDocument(raw), ctx).to_bytes()


def test_controls_and_accessible_names_are_relabeled() -> None:
    out = relabel(PAGE)
    assert b'<a href="/login">Log in</a>' in out
    assert b'<button class="b"> Find </button>' in out  # whitespace around the label kept
    assert b'placeholder="Find"' in out
    assert b'<input type="submit" value="Send">' in out


def test_entities_submitted_values_and_protected_elements_stay() -> None:
    out = relabel(PAGE)
    assert b"<title>Sign in</title>" in out  # not a control
    assert b"<h1>How to Sign in safely</h1>" in out  # entity text, not a whole label
    assert b"<span>Save</span> <b>draft</b>" in out  # two text nodes: not one label
    assert b'name="action" value="Submit"' in out  # a named button submits its value
    assert b"<button>Cancel</button>" in out  # protected by the site profile


def test_same_seed_same_bytes_and_rate_is_seeded() -> None:
    ctx = replace(CTX, shift_params={"relabel": {"rate": 0.5}})

    def relabeled(seed: int) -> tuple[int, int, int]:
        out = relabel(PAGE, replace(ctx, seed=seed))
        return out.count(b"Log in"), out.count(b"Find"), out.count(b"Send")

    # Pinned (computed once): which labels a seed relabels is the same in every process, and
    # a label moves everywhere or nowhere in an episode (all 3 "Search", 2 "Sign in", 2
    # "Submit" occurrences of the page together), so the runtime can apply the same mapping.
    assert [relabeled(seed) for seed in range(6)] == [
        (0, 3, 0),
        (0, 0, 0),
        (0, 0, 2),
        (0, 3, 2),
        (2, 0, 0),
        (0, 3, 0),
    ]
    outputs = {relabel(PAGE, replace(ctx, seed=seed)) for seed in range(12)}
    assert len(outputs) > 1  # the rate draw depends on the seed


def test_fragment_without_any_label_is_not_parsed_or_changed() -> None:
    raw = b"<html><body><p>nothing to relabel</p></body></html>"
    doc = apply_shifts(["relabel"], HtmlDocument(raw), replace(CTX, is_navigation=False))
    assert doc._tree is None and doc.to_bytes() is raw


def test_navigation_carries_the_labels_for_the_runtime() -> None:
    raw = b"<html><head></head><body><div id='app'></div></body></html>"
    out = apply_shifts(["relabel"], HtmlDocument(raw), CTX).to_bytes().decode()
    config = json.loads(unescape(out.split('data-cfg="')[1].split('"')[0]))
    assert config["r"]["labels"]["Sign in"] == "Log in" and config["p"] is None


def test_the_mapping_is_idempotent_for_every_seed() -> None:
    """No chosen synonym is itself a moving label: the runtime re-applying the mapping to a
    control the server (or itself) relabelled changes nothing, whatever site JS does."""
    for seed in range(50):
        labels = chosen_labels(replace(CTX, seed=seed))
        assert labels, seed
        assert not set(labels.values()) & set(labels), (seed, labels)
        assert {labels.get(label, label) for label in labels.values()} == set(labels.values())
