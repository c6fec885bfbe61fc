"""The scripted task for the lab WordPress (deploy/wordpress/wordpress.sh): log in, open the
dashboard's Screen Options panel (a JS widget), search the posts with the admin's search form
and open the post found on the site.

Elements are found only by role, label and visible text: the proxy under test renames ids and
classes and wraps elements, but keeps labels and placement (in the benchmark's set). The login
page and the admin are the same under both themes (the target theme has no search form).
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
    # The admin's search form: the post is found, and it opens on the site.
    page.goto(f"{base}/wp-admin/edit.php")
    dismiss_popups(page)
    page.get_by_role("searchbox", name="Search Posts").fill("risotto")
    dismiss_popups(page)
    page.get_by_role("button", name="Search Posts").click()
    page.wait_for_url(re.compile(r"[?&]s=risotto"))
    dismiss_popups(page)
    title = "Lemon risotto in thirty minutes"
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=title, exact=False))
    expect(row.first).to_be_visible()
    page.goto(f"{base}/?s=risotto")  # the theme's search results
    dismiss_popups(page)
    page.get_by_role("link", name=title).first.click()
    page.wait_for_url(re.compile(r"lemon-risotto"))
    dismiss_popups(page)
    expect(page.get_by_role("heading", name=title).first).to_be_visible()
