"""The scripted task for the lab's React starter (deploy/lab/spa.sh --app react): the official
create-vite `react` template, an older release as the source and a newer one as the target.

Both releases are one page whose JS widget is the counter button ("count is 0" in the older
starter, "Count is 0" in the newer). Elements are found only by role and accessible name: the
proxy under test renames ids and classes and wraps elements, but keeps labels and placement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

# The starter's distinct routes (LAB_PAGES): it has no router, so just the one page.
PAGES: tuple[str, ...] = ("/",)
COUNTER = re.compile(r"count is", re.IGNORECASE)
CLICKS = 3


def task(
    page: Any,
    base_url: str,
    env: dict[str, str],
    dismiss_popups: Callable[[Any], object],
    checkpoint: Callable[[str], object] = lambda step: None,
) -> None:
    """Click the counter button three times and check it shows 3. `checkpoint` is called with
    the step's name once each step's expectations hold (the page is as the step left it)."""
    page.goto(base_url.rstrip("/") + "/")
    dismiss_popups(page)
    button = page.get_by_role("button", name=COUNTER)
    expect(button).to_have_text(re.compile(r"count is 0", re.IGNORECASE))
    checkpoint("load /")
    for clicks in range(1, CLICKS + 1):
        dismiss_popups(page)
        button.click()
        # Each click is checked before the next: a lost or doubled click shows as itself.
        expect(button).to_have_text(re.compile(rf"count is {clicks}\b", re.IGNORECASE))
        checkpoint(f"click {clicks}")
