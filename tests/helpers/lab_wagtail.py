"""The scripted task on the lab Wagtail (deploy/lab/wagtail.sh): log in to the admin, fold and
unfold the sidebar, create a page under News through the "More actions" dropdown's Publish, and
find it in the page explorer and on the public site. Elements are found by role and accessible
name, label or visible text only (the proxy renames ids and classes), with locators that hold
on both versions, the source (6.3) and the target (8.0)."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from playwright.sync_api import expect

# The same paths as LAB_PAGES (public) and LAB_ADMIN_PAGES (need the admin login; the page ids
# are those of a freshly seeded lab, alike on both versions). The admin login is third, among
# the pages CI checks: its scripts and stylesheets hold the most (the lowest share).
PAGES: tuple[str, ...] = ("/", "/about-us/", "/admin/login/", "/news/", "/news/library-reopens/")
ADMIN_PAGES: tuple[str, ...] = (
    "/admin/",
    "/admin/pages/3/",
    "/admin/pages/5/",
    "/admin/pages/4/edit/",
)


def hidden_fields(form: str) -> dict[str, str]:
    """A form's hidden inputs, by name (a login token among them)."""
    fields = {}
    for tag in re.findall(r'<input[^>]*type="hidden"[^>]*>', form):
        name, value = re.search(r'name="([^"]+)"', tag), re.search(r'value="([^"]*)"', tag)
        if name is not None:
            fields[html.unescape(name[1])] = html.unescape(value[1]) if value else ""
    return fields


def admin_session(env: dict[str, str]) -> dict[str, str]:
    """The cookies of an admin session logged in through the login form (Django's CSRF field
    sent back, with the CSRF cookie, and an Origin Django accepts), straight to the lab."""
    with httpx.Client(base_url=env["LAB_URL"], timeout=60, trust_env=False) as client:
        fields = hidden_fields(client.get("/admin/login/").text)
        fields.update(username=env["LAB_USER"], password=env["LAB_PASSWORD"])
        client.post("/admin/login/", data=fields, headers={"Origin": env["LAB_URL"]})
        cookies = dict(client.cookies.items())
    if not any(name.endswith("sessionid") for name in cookies):  # (the lab names its cookies)
        raise RuntimeError("Wagtail's login did not log in")
    return cookies


def task(
    page: Any, base_url: str, env: dict[str, str], dismiss_popups: Callable[[Any], Any]
) -> None:
    """Log in to the admin, create or edit a page (fill the form, save/publish), use a JS widget
    (the sidebar toggle and the footer's "More actions" dropdown), and assert each outcome."""
    user, password = env.get("LAB_USER", "admin"), env.get("LAB_PASSWORD", "admin-pass")
    token = uuid.uuid4().hex[:8]
    title, intro = f"Lab note {token}", f"Notes from the lab, number {token}."
    body = f"Body text written by the scripted task ({token})."

    def goto(path: str) -> None:
        response = page.goto(base_url + path)
        assert response is not None and response.ok, (path, response and response.status)
        dismiss_popups(page)

    def click(locator: Any) -> None:
        dismiss_popups(page)
        locator.click()

    def fill(locator: Any, value: str) -> None:
        dismiss_popups(page)
        locator.fill(value)

    # Log in.
    goto("/admin/login/")
    fill(page.get_by_label("Username"), user)
    fill(page.get_by_label("Password"), password)
    click(page.get_by_role("button", name="Sign in"))
    page.wait_for_url(re.compile(r"/admin/$"))
    dismiss_popups(page)
    expect(page.get_by_role("heading", name="Lab Gazette", level=1)).to_be_visible()

    # A JS widget: the sidebar folds and unfolds (its state is kept, so leave it unfolded).
    toggle = page.get_by_role("button", name="Toggle sidebar")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    click(toggle)
    expect(toggle).to_have_attribute("aria-expanded", "false")
    click(toggle)
    expect(toggle).to_have_attribute("aria-expanded", "true")

    # The page explorer: from the dashboard to Home's children, News's, and "Add child page".
    click(page.get_by_role("link", name=re.compile(r"Pages created in")))
    page.wait_for_load_state()
    dismiss_popups(page)
    expect(page.get_by_role("heading", name=re.compile(r"Home"), level=1)).to_be_visible()
    click(page.get_by_role("link", name="Explore child pages of 'News'"))
    page.wait_for_load_state()
    dismiss_popups(page)
    expect(page.get_by_role("heading", name=re.compile(r"News"), level=1)).to_be_visible()
    click(page.get_by_role("link", name="Add child page", exact=True))
    page.wait_for_load_state()
    dismiss_popups(page)
    expect(page.get_by_role("heading", name="Create a page in News")).to_be_visible()
    click(page.get_by_role("link", name="Lab page", exact=True))
    page.wait_for_load_state()
    dismiss_popups(page)
    expect(page.get_by_role("heading", name="New: Lab page")).to_be_visible()

    # Fill the form. The body is a Draftail rich-text editor (a contenteditable): type into it
    # first, since it copies its content into the form (its hidden input, which is what is
    # posted) only after a pause (250 ms) in typing; then wait for that copy.
    editor = page.get_by_role("region", name="Body").get_by_role("textbox")
    click(editor)
    editor.press_sequentially(body)
    expect(editor).to_contain_text(body)
    fill(page.get_by_role("textbox", name="Title*"), title)
    fill(page.get_by_role("textbox", name="Intro"), intro)
    expect(page.locator("input[name=body]")).to_have_value(re.compile(re.escape(body)))

    # Another JS widget: Publish sits in the footer's "More actions" dropdown.
    click(page.get_by_role("button", name="More actions"))
    publish = page.get_by_role("button", name="Publish", exact=True)
    expect(publish).to_be_visible()
    click(publish)
    page.wait_for_load_state()
    dismiss_popups(page)
    expect(page.get_by_text(f"'{title}' created and published")).to_be_visible()

    # The explorer lists it after a reload, as live.
    goto("/admin/pages/5/")
    expect(page.get_by_role("link", name=title, exact=True)).to_be_visible()
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=title, exact=True))
    expect(row.get_by_text("live")).to_be_visible()

    # And the public site shows it under News, with its intro and body.
    goto("/news/")
    click(page.get_by_role("link", name=title, exact=True))
    page.wait_for_load_state()
    dismiss_popups(page)
    expect(page.get_by_role("heading", name=title, level=1)).to_be_visible()
    expect(page.get_by_text(intro)).to_be_visible()
    expect(page.get_by_text(body)).to_be_visible()
