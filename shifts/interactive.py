"""What an agent can interact with: the one definition that the locator drift (the share it
aims at), the alignment checker (the counts it compares) and the browser oracle's page script
(the share it measures in Chromium) all count by."""

from __future__ import annotations

from lxml import etree

from shifts import native

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
_NOT_RENDERED = ("noscript", "template")
XPATH = etree.XPath(
    "(" + " | ".join(f"//{step}" for _, step in _MEMBERS) + ")"
    "[" + " and ".join(f"not(ancestor::{tag})" for tag in _NOT_RENDERED) + "]"
)
# The members again, as what `interactive_elements` tests per element (a test holds them to
# the XPath on every saved page).
_TAGS = frozenset({"a", "button", "input", "select", "textarea", "summary"})
_ROLES = frozenset(ROLES)


def interactive_elements(root: etree._Element) -> list[etree._Element]:
    """`XPATH`'s elements, in document order, in one walk of the tree: the XPath's union walks
    it once per member (eleven times), which cost a page as much as parsing it. The walk is in
    C where it can be (`shifts.native`): in Python, every element of the page costs a proxy."""
    return native.either(native.interactive_elements, _interactive_elements_read, root)


def _interactive_elements_read(root: etree._Element) -> list[etree._Element]:
    """`interactive_elements` in Python: its definition, which the C one follows."""
    hidden: set[etree._Element] = set()
    for container in root.iter(*_NOT_RENDERED):
        hidden.update(container.iterdescendants())
    return [e for e in root.iter() if _is_member(e) and e not in hidden]


def _is_member(element: etree._Element) -> bool:
    tag = element.tag
    if tag == "a":
        by_tag = element.get("href") is not None
    elif tag == "input":
        by_tag = element.get("type") != "hidden"
    else:
        by_tag = tag in _TAGS
    return by_tag or (isinstance(tag, str) and element.get("role") in _ROLES)
