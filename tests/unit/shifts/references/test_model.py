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
