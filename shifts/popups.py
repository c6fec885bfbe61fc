"""Popup templates: the markup and style of each popup kind, with neutral, seeded class names.

Nothing here names the product: class names are derived from the episode seed, so they look
like any site's hashed CSS-module names and differ between episodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from shifts.rng import token_for


@dataclass(frozen=True)
class PopupTemplate:
    kind: str
    title: str
    body: str
    accept_label: str
    decline_label: str


TEMPLATES: dict[str, PopupTemplate] = {
    template.kind: template
    for template in (
        PopupTemplate(
            kind="newsletter",
            title="Stay in the loop",
            body="Subscribe to our newsletter and never miss an update.",
            accept_label="Subscribe",
            decline_label="No thanks",
        ),
    )
}


def render_popup(kind: str, seed: int) -> dict[str, str]:
    """The popup's markup and stylesheet for the client runtime to insert when it is due."""
    template = TEMPLATES[kind]
    cls = token_for(seed, "popup", kind)
    title_id = f"{cls}-t"
    markup = (
        f'<div class="{cls}-o" data-role="overlay">'
        f'<div class="{cls}" role="dialog" aria-modal="true" aria-labelledby="{title_id}">'
        f'<button type="button" class="{cls}-x" aria-label="Close" data-dismiss="close">'
        "&times;</button>"
        f'<h2 id="{title_id}">{escape(template.title)}</h2>'
        f"<p>{escape(template.body)}</p>"
        f'<div class="{cls}-a">'
        f'<button type="button" data-dismiss="accept">{escape(template.accept_label)}</button>'
        f'<button type="button" data-dismiss="decline">{escape(template.decline_label)}</button>'
        "</div></div></div>"
    )
    css = (
        f".{cls}-o{{position:fixed;inset:0;z-index:2147483000;background:rgba(0,0,0,.45);"
        "display:flex;align-items:center;justify-content:center}"
        f".{cls}{{position:relative;background:#fff;color:#222;max-width:28rem;padding:1.5rem;"
        "border-radius:6px;box-shadow:0 8px 30px rgba(0,0,0,.3);font:16px/1.4 sans-serif}"
        f".{cls}-x{{position:absolute;top:.4rem;right:.6rem;border:0;background:none;"
        "font-size:1.4rem;cursor:pointer}"
        f".{cls}-a{{display:flex;gap:.5rem;margin-top:1rem}}"
        f".{cls}-a button{{padding:.5rem 1rem;cursor:pointer}}"
    )
    return {"markup": markup, "css": css}
