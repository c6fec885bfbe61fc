"""The scripted task for the lab's Vue starter (deploy/lab/spa.sh --app vue): the official
create-vue project with Vue Router, an older release as the source and a newer one as the
target.

That starter has no counter button: its JS widget is the router, whose nav links ("Home",
"About") swap the page without a reload. Elements are found only by role and accessible name:
the proxy under test renames ids and classes and wraps elements, but keeps labels and placement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

# The starter's distinct routes (LAB_PAGES).
PAGES: tuple[str, ...] = ("/", "/about")
ABOUT_HEADING = "This is an about page"
HOME_HEADING = "You did it!"  # in the header, on every page
WELCOME_HEADING = "Documentation"  # the first item of the home page's welcome list


def task(
    page: Any,
    base_url: str,
    env: dict[str, str],
    dismiss_popups: Callable[[Any], object],
    checkpoint: Callable[[str], object] = lambda step: None,
) -> None:
    """Go from Home to About and back through the nav links, then open /about directly.
    `checkpoint` is called with the step's name once each step's expectations hold."""
    base = base_url.rstrip("/")
    page.goto(base + "/")
    dismiss_popups(page)
    expect(page.get_by_role("heading", name=HOME_HEADING)).to_be_visible()
    expect(page.get_by_role("heading", name=WELCOME_HEADING)).to_be_visible()
    checkpoint("load /")

    dismiss_popups(page)
    page.get_by_role("navigation").get_by_role("link", name="About", exact=True).click()
    expect(page).to_have_url(re.compile(r"/about$"))
    dismiss_popups(page)  # a client-side navigation is still one
    expect(page.get_by_role("heading", name=ABOUT_HEADING, level=1)).to_be_visible()
    checkpoint("nav About")

    dismiss_popups(page)
    page.get_by_role("navigation").get_by_role("link", name="Home", exact=True).click()
    expect(page).to_have_url(re.compile(r"/$"))
    dismiss_popups(page)
    expect(page.get_by_role("heading", name=WELCOME_HEADING)).to_be_visible()
    expect(page.get_by_role("heading", name=ABOUT_HEADING)).to_have_count(0)
    checkpoint("nav Home")

    # A deep link: the server hands /about the app shell and the router renders the page.
    page.goto(base + "/about")
    dismiss_popups(page)
    expect(page.get_by_role("heading", name=ABOUT_HEADING, level=1)).to_be_visible()
    checkpoint("load /about")
