"""What an agent can interact with: the one definition that the locator drift (the share it
aims at), the alignment checker (the counts it compares) and the browser oracle's page script
(the share it measures in Chromium) all count by."""

from __future__ import annotations

from lxml import etree

ROLES = ("button", "link", "tab", "menuitem", "checkbox")
# Each member as a CSS selector (for the browser) and as an XPath step (for lxml).
_MEMBERS = (
    ("a[href]", "a[@href]"),
    ("button", "button"),
    ("input:not([type=hidden])", "input[not(@type='hidden')]"),
    ("select", "select"),
    ("textarea", "textarea"),
    ("summary", "summary"),
    *((f"[role={role}]", f"*[@role='{role}']") for role in ROLES),
)

CSS = ", ".join(css for css, _ in _MEMBERS)
# Not what a browser running scripts never renders: the fallback inside <noscript>, the inert
# contents of a <template> (a live document's querySelectorAll(CSS) does not see them either).
XPATH = etree.XPath(
    "(" + " | ".join(f"//{step}" for _, step in _MEMBERS) + ")"
    "[not(ancestor::noscript) and not(ancestor::template)]"
)
