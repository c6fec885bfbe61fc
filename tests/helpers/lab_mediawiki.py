"""A scripted task on the lab MediaWiki (deploy/lab/mediawiki.sh), with Playwright's sync API.

Elements are found only by role and accessible name, label or visible text, never by id, class
or XPath: the proxy under test renames ids and classes and wraps elements. The same locators work
on both skins (Vector 2010 on the source port, Vector 2022 on the target port)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

PAGES: tuple[str, ...] = (
    "/index.php/Main_Page",
    "/index.php/Lab_Table",
    "/index.php/Lab_Notes",
    "/index.php?title=Special:UserLogin",
)
TIMEOUT = 20_000  # ms: the PHP built-in server is slow on a first, uncached page


def task(
    page: Any, base_url: str, env: dict[str, str], dismiss_popups: Callable[[Any], Any]
) -> None:
    """Log in, edit "Lab Notes" (fill the edit form, save), sort the Lab Table by a column, fold
    and unfold its collapsible block; assert each outcome."""
    base = base_url.rstrip("/")
    user, password = env.get("LAB_USER", "admin"), env.get("LAB_PASSWORD", "admin-pass-123")

    def goto(path: str) -> None:  # every navigation is followed by a popup check
        page.goto(base + path)
        dismiss_popups(page)

    # Log in. MediaWiki shows user names capitalised: "admin" is the user page link "Admin".
    goto("/index.php?title=Special:UserLogin")
    page.get_by_label("Username", exact=True).fill(user)
    dismiss_popups(page)
    page.get_by_label("Password", exact=True).fill(password)
    dismiss_popups(page)
    page.get_by_role("button", name="Log in", exact=True).click()
    page.wait_for_url(re.compile(r"/index\.php/Main_Page"), timeout=TIMEOUT)
    dismiss_popups(page)
    display = user[:1].upper() + user[1:]
    expect(page.get_by_role("link", name=display, exact=True).first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_role("button", name="Log in", exact=True)).to_have_count(0)

    # Edit "Lab Notes": append a line with a token of this run, save, and find it after a reload.
    note = f"Lab note {secrets.token_hex(6)}"
    goto("/index.php/Lab_Notes")
    page.get_by_role("link", name="Edit", exact=True).first.click()  # the tab, not "edit" (section)
    dismiss_popups(page)
    editor = page.get_by_role("textbox", name="Wikitext source editor")
    expect(editor).to_be_visible(timeout=TIMEOUT)
    text = editor.input_value()
    dismiss_popups(page)
    editor.fill(text.rstrip("\n") + f"\n* {note}\n")
    dismiss_popups(page)
    page.get_by_label("Summary:", exact=True).fill(f"Add {note}")
    dismiss_popups(page)
    page.get_by_role("button", name="Save changes", exact=True).click()
    page.wait_for_url(re.compile(r"/index\.php/Lab_Notes$"), timeout=TIMEOUT)
    dismiss_popups(page)
    page.reload()
    dismiss_popups(page)
    expect(page.get_by_text(note, exact=True)).to_be_visible(timeout=TIMEOUT)

    # Sort the Lab Table by population, ascending and numerically (not as text).
    goto("/index.php/Lab_Table")
    table = page.get_by_role("table", name="Cities of the lab")
    expect(table).to_be_visible(timeout=TIMEOUT)

    def populations() -> list[int]:
        rows = table.get_by_role("row").filter(has=page.get_by_role("cell"))
        return [
            int(row.get_by_role("cell").nth(2).inner_text().replace(",", "")) for row in rows.all()
        ]

    original = before = populations()
    assert len(before) >= 4 and before != sorted(before), before
    # The first click sorts ascending, but only once the sorter has loaded (ResourceLoader does
    # that after the page): click again while the order did not change, or came out descending.
    header = table.get_by_role("columnheader", name="Population")
    after = before
    for _ in range(4):
        dismiss_popups(page)
        header.click()
        for _ in range(20):
            page.wait_for_timeout(100)
            after = populations()
            if after != before:
                break
        if after == sorted(before):
            break
        before = after
    assert after == sorted(original), (original, after)

    # Fold the collapsible block (jQuery makeCollapsible, loaded by ResourceLoader) and unfold it.
    block = page.get_by_text("This block can be collapsed.")
    expect(block).to_be_visible(timeout=TIMEOUT)
    dismiss_popups(page)
    page.get_by_role("button", name="Collapse").click()
    expect(block).to_be_hidden(timeout=TIMEOUT)
    dismiss_popups(page)
    page.get_by_role("button", name="Expand").click()
    expect(block).to_be_visible(timeout=TIMEOUT)
