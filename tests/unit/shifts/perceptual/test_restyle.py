"""Restyle: colours only, carried to the runtime; the page's bytes get no stylesheet."""

from __future__ import annotations

import json
from dataclasses import replace
from html import unescape

from shifts import HtmlDocument, ShiftContext, apply_shifts
from sites import WORDPRESS

PAGE = (
    b"<!DOCTYPE html><html><head><title>t</title></head>"
    b"<body><a href='/x'>Home</a><button>Go</button></body></html>"
)
CTX = ShiftContext(episode_id="e", seed=4, site=WORDPRESS, load_index=1, nonce="n0nce")


def runtime_config(out: bytes) -> dict:  # type: ignore[type-arg]
    return dict(json.loads(unescape(out.decode().split('data-cfg="')[1].split('"')[0])))


def test_colours_only_through_the_runtime() -> None:
    doc = apply_shifts(["restyle"], HtmlDocument(PAGE), CTX)
    out = doc.to_bytes()
    # No stylesheet: fonts, spacing and filters would move, resize or recolour images.
    assert b"<style" not in out and b"filter" not in out
    rules = runtime_config(out)["r"]
    assert rules["restyle"] == {"angle": doc.notes["restyle"]["hue_angle"]}
    assert rules["controls"].startswith("a, button") and "h1" in rules["protect"]
    # The body is untouched: only the runtime tag (with the page's nonce) was added.
    assert out.replace(out[out.index(b"<script") : out.index(b"</script>") + 9], b"") == PAGE
    assert b'nonce="n0nce"' in out


def test_the_angle_is_seeded_and_pinned() -> None:
    angles = [
        apply_shifts(["restyle"], HtmlDocument(PAGE), replace(CTX, seed=seed)).notes["restyle"]
        for seed in range(4)
    ]
    assert [a["hue_angle"] for a in angles] == [255, 115, 152, 258]


def test_the_angle_stays_in_the_configured_range() -> None:
    params = {"restyle": {"min_angle": 90, "max_angle": 100}}
    for seed in range(30):
        notes = apply_shifts(
            ["restyle"], HtmlDocument(PAGE), replace(CTX, seed=seed, shift_params=params)
        ).notes
        assert 90 <= notes["restyle"]["hue_angle"] <= 100


def test_fragments_are_left_to_the_page_they_land_in() -> None:
    doc = apply_shifts(["restyle"], HtmlDocument(PAGE), replace(CTX, is_navigation=False))
    assert doc.to_bytes() is PAGE
