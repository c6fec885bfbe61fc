"""Real saved pages of GitLab, Magento and WordPress (tests/fixtures, provenance in its
SOURCES.md), for the shifts, the checkers and the benchmarks."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture_pages() -> list[Path]:
    pages = sorted(FIXTURES.glob("*/*.html"))
    if not pages:
        raise RuntimeError(f"no fixture pages under {FIXTURES}")
    return pages
