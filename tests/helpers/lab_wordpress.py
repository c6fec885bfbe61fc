"""The scripted task for the lab WordPress (deploy/wordpress/wordpress.sh): log in, search the
site with its search form, and open the dashboard's Screen Options panel (a JS widget).

Elements are found only by role, label and visible text: the proxy under test renames ids and
classes and wraps elements, but keeps labels and placement (in the benchmark's set). The source
theme and the target theme both show the search form and the same login page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

PAGES: tuple[str, ...] = ("/", "/?p=4", "/wp-login.php")


def task(
    page: Any, base_url: str, env: dict[str, str], dismiss_popups: Callable[[Any], object]
) -> None:
    base = base_url.rstrip("/")
    page.goto(f"{base}/wp-login.php")
    dismiss_popups(page)
    page.get_by_label("Username or Email Address").fill(env.get("LAB_USER", "admin"))
    dismiss_popups(page)
    page.get_by_label("Password", exact=True).fill(env.get("LAB_PASSWORD", "admin-pass"))
    dismiss_popups(page)
    page.get_by_role("button", name="Log In").click()
    page.wait_for_url(re.compile(r"/wp-admin/"))
    dismiss_popups(page)
    # The dashboard's Screen Options: a button whose panel JavaScript opens.
    toggle = page.get_by_role("button", name=re.compile("Screen Options"))
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    # The site's search form, from the front end: the post is found.
    page.goto(f"{base}/")
    dismiss_popups(page)
    search = page.get_by_role("search").get_by_role("searchbox").first
    search.fill("risotto")
    dismiss_popups(page)
    search.press("Enter")
    page.wait_for_url(re.compile(r"[?&]s=risotto"))
    dismiss_popups(page)
    expect(page.get_by_role("link", name="Lemon risotto in thirty minutes").first).to_be_visible()
