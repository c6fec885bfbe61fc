"""Reference skills for WordPress, written the way a recorded or learned skill is.

Each skill was recorded against the unshifted site (Src) and locates what it needs the way it
was recorded: by visible text, role and accessible name, or id. None of them knows about
shifts, so a relabeled button, a renamed id or a popup over the page breaks them as it would
break a learned skill. Success is judged from the database, never from the page.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

TIMEOUT_MS = 4000


class Steps:
    """Counts a skill's UI actions (the paper's 'steps')."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.count = 0

    def __call__(self, action: Callable[[], object]) -> None:
        self.count += 1
        action()


@dataclass(frozen=True)
class Lab:
    url: str
    db_socket: str

    def sql(self, query: str) -> str:
        result = subprocess.run(
            ["mariadb", f"--socket={self.db_socket}", "wplab", "-N", "-B", "-e", query],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        return result.stdout.strip()


Events = list[dict[str, object]]


@dataclass(frozen=True)
class Skill:
    name: str
    run: Callable[[Page, Steps, Lab, str], None]  # page, steps, lab, a unique token
    # Judged from the database or the proxy's event log (what was served), never the page.
    succeeded: Callable[[Lab, str, Events], bool]
    needs_login: bool = True


def log_in(page: Page, step: Steps, lab: Lab, token: str) -> None:
    step(lambda: page.goto(f"{lab.url}/wp-login.php"))
    step(lambda: page.get_by_label("Username or Email Address").fill("editor", timeout=TIMEOUT_MS))
    step(lambda: page.get_by_label("Password", exact=True).fill("editor-pass", timeout=TIMEOUT_MS))
    step(lambda: page.get_by_role("button", name="Log In").click(timeout=TIMEOUT_MS))
    step(lambda: page.wait_for_url("**/wp-admin/**", timeout=TIMEOUT_MS * 2))


def logged_in(lab: Lab, token: str, events: Events) -> bool:
    tokens = lab.sql(
        "SELECT meta_value FROM wp_usermeta m JOIN wp_users u ON u.ID = m.user_id "
        "WHERE u.user_login = 'editor' AND m.meta_key = 'session_tokens'"
    )
    return "expiration" in tokens


def add_category(page: Page, step: Steps, lab: Lab, token: str) -> None:
    step(lambda: page.goto(f"{lab.url}/wp-admin/edit-tags.php?taxonomy=category"))
    step(lambda: page.locator("#tag-name").fill(f"Topic {token}", timeout=TIMEOUT_MS))
    step(lambda: page.get_by_role("button", name="Add New Category").click(timeout=TIMEOUT_MS))
    step(
        lambda: (
            page.locator("#the-list")
            .get_by_text(f"Topic {token}")
            .first.wait_for(timeout=TIMEOUT_MS)
        )
    )


def category_exists(lab: Lab, token: str, events: Events) -> bool:
    return lab.sql(f"SELECT COUNT(*) FROM wp_terms WHERE name = 'Topic {token}'") == "1"


def approve_comment(page: Page, step: Steps, lab: Lab, token: str) -> None:
    step(lambda: page.goto(f"{lab.url}/wp-admin/edit-comments.php?comment_status=moderated"))
    row = page.locator("#the-comment-list tr").filter(has_text=f"Pending {token}")
    step(lambda: row.hover(timeout=TIMEOUT_MS))
    step(lambda: row.get_by_role("button", name="Approve this comment").click(timeout=TIMEOUT_MS))
    step(lambda: page.wait_for_timeout(800))


def pending_comment(lab: Lab, token: str) -> None:
    lab.sql(
        "INSERT INTO wp_comments (comment_post_ID, comment_author, comment_author_email, "
        "comment_date, comment_date_gmt, comment_content, comment_approved) VALUES "
        f"(4, 'Pat Pending', 'pat@lab.test', NOW(), UTC_TIMESTAMP(), 'Pending {token}', '0')"
    )


def comment_approved(lab: Lab, token: str, events: Events) -> bool:
    return (
        lab.sql(
            f"SELECT comment_approved FROM wp_comments WHERE comment_content = 'Pending {token}'"
        )
        == "1"
    )


def edit_post_title(page: Page, step: Steps, lab: Lab, token: str) -> None:
    step(lambda: page.goto(f"{lab.url}/wp-admin/edit.php"))
    row = page.locator("#the-list tr").filter(has_text="Library extends opening hours").first
    step(lambda: row.hover(timeout=TIMEOUT_MS))
    step(lambda: row.get_by_role("button", name="Quick edit").click(timeout=TIMEOUT_MS))
    editor = page.locator("tr.inline-edit-row:visible")
    step(
        lambda: editor.locator("input[name=post_title]").fill(
            f"Library extends opening hours {token}", timeout=TIMEOUT_MS
        )
    )
    step(lambda: editor.get_by_role("button", name="Update").click(timeout=TIMEOUT_MS))
    step(
        lambda: page.locator("#the-list").get_by_text(token).first.wait_for(timeout=TIMEOUT_MS * 2)
    )


def title_edited(lab: Lab, token: str, events: Events) -> bool:
    return (
        lab.sql(
            f"SELECT COUNT(*) FROM wp_posts WHERE post_title LIKE '%{token}' AND post_type = 'post'"
        )
        == "1"
    )


def create_post(page: Page, step: Steps, lab: Lab, token: str) -> None:
    step(lambda: page.goto(f"{lab.url}/wp-admin/post-new.php"))
    guide = page.get_by_role("dialog", name="Welcome to the block editor")
    try:  # recorded on a first visit: the editor greets a user once, then remembers
        guide.wait_for(timeout=2500)
        step(lambda: guide.get_by_role("button", name="Close").click(timeout=TIMEOUT_MS))
    except PlaywrightTimeout:
        pass
    step(lambda: page.get_by_label("Add title").fill(f"Field notes {token}", timeout=TIMEOUT_MS))
    step(lambda: page.keyboard.press("Enter"))
    step(lambda: page.keyboard.type("Notes from the field."))
    step(lambda: page.get_by_role("button", name="Publish", exact=True).click(timeout=TIMEOUT_MS))
    panel = page.get_by_role("region", name="Editor publish")
    step(lambda: panel.get_by_role("button", name="Publish", exact=True).click(timeout=TIMEOUT_MS))
    step(lambda: page.get_by_text("is now live").first.wait_for(timeout=TIMEOUT_MS * 2))


def post_published(lab: Lab, token: str, events: Events) -> bool:
    return (
        lab.sql(
            f"SELECT post_status FROM wp_posts WHERE post_title = 'Field notes {token}' "
            "AND post_type = 'post'"
        )
        == "publish"
    )


def search_posts(page: Page, step: Steps, lab: Lab, token: str) -> None:
    step(lambda: page.goto(f"{lab.url}/"))
    step(lambda: page.get_by_role("searchbox", name="Search").fill("risotto", timeout=TIMEOUT_MS))
    step(lambda: page.get_by_role("button", name="Search").click(timeout=TIMEOUT_MS))
    step(
        lambda: page.get_by_role("link", name="Lemon risotto in thirty minutes").first.click(
            timeout=TIMEOUT_MS
        )
    )
    step(lambda: page.wait_for_url("**/lemon-risotto-in-thirty-minutes/**", timeout=TIMEOUT_MS))


def search_reached(lab: Lab, token: str, events: Events) -> bool:
    """A search leaves no state behind: the proxy's log of served pages says where it got."""
    return any(
        event.get("type") == "page_served"
        and "lemon-risotto-in-thirty-minutes" in str(event.get("url", ""))
        for event in events
    )


SKILLS = [
    Skill("log_in", log_in, logged_in, needs_login=False),
    Skill("create_post", create_post, post_published),
    Skill("add_category", add_category, category_exists),
    Skill("approve_comment", approve_comment, comment_approved),
    Skill("search_post", search_posts, search_reached, needs_login=False),
    Skill("edit_post_title", edit_post_title, title_edited),
]


def no_sessions(lab: Lab, token: str) -> None:
    lab.sql(
        "DELETE m FROM wp_usermeta m JOIN wp_users u ON u.ID = m.user_id "
        "WHERE u.user_login = 'editor' AND m.meta_key = 'session_tokens'"
    )


SETUP: dict[str, Callable[[Lab, str], None]] = {
    "approve_comment": pending_comment,
    "log_in": no_sessions,
}


# Each run leaves the site as it found it, so no run depends on the ones before it (a posts
# list that filled up with earlier runs' posts would push the post a skill edits off page one).
TEARDOWN: dict[str, Callable[[Lab, str], object]] = {
    "create_post": lambda lab, token: lab.sql(
        f"DELETE FROM wp_posts WHERE post_title = 'Field notes {token}'"
    ),
    "add_category": lambda lab, token: lab.sql(
        f"DELETE FROM wp_terms WHERE name = 'Topic {token}'"
    ),
    "approve_comment": lambda lab, token: lab.sql(
        f"DELETE FROM wp_comments WHERE comment_content = 'Pending {token}'"
    ),
    "edit_post_title": lambda lab, token: lab.sql(
        "UPDATE wp_posts SET post_title = 'Library extends opening hours' "
        "WHERE post_title LIKE 'Library extends opening hours%' AND post_type = 'post'"
    ),
}
