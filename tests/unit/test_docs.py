"""The README and docs/: a short README, and every link between pages resolves (a file that
exists, an anchor that is a heading of it), so moving a section never leaves a dead link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", REPO / "bench" / "results.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
README_MAX_LINES = 300


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of the page's headings (code spans and punctuation dropped)."""
    found = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        heading = re.match(r"#{1,6} (.*)", line)
        if heading and not fenced:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower().replace("`", ""))
            found.add(text.replace(" ", "-"))
    return found


def test_the_readme_is_short() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= README_MAX_LINES


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_between_pages_resolves(page: Path) -> None:
    dead = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("/"):
            continue  # another site, or a path on a running service
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (
            anchor and linked.suffix == ".md" and anchor not in anchors(linked)
        ):
            dead.append(target)
    assert dead == []


def test_a_dead_link_is_found(tmp_path: Path) -> None:
    """The checker itself: a page linking to a missing file and a missing heading fails."""
    page = "# A\n\n## Here it is\n\n[x](b.md#here) [y](#nowhere) [z](#here-it-is)"
    (tmp_path / "a.md").write_text(page)
    assert anchors(tmp_path / "a.md") == {"a", "here-it-is"}
    with pytest.raises(AssertionError):
        test_every_link_between_pages_resolves(tmp_path / "a.md")
