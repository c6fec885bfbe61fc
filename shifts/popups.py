"""Popup templates: five kinds of blocking popup, each restyled by the site profile's theme.

A template is data (texts, buttons, layout); `render_popup` turns it into markup and CSS with
neutral class names derived from the episode seed (or a configured prefix), so popups look like
a site's own hashed CSS-module names, differ between episodes, and never name the product.
Every kind blocks the page under it with a full-viewport overlay and is a real dialog:
role=dialog, aria-modal, a labelled close button, text buttons, Escape closes (in the runtime).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Literal

from shifts.rng import token_for
from sites import PopupTheme

Layout = Literal["modal", "banner", "fullpage"]


@dataclass(frozen=True)
class Button:
    label: str
    action: str  # what the runtime reports as `how`: accept, decline
    primary: bool = False


@dataclass(frozen=True)
class PopupTemplate:
    kind: str
    layout: Layout
    title: str
    body: str
    buttons: tuple[Button, ...]
    # Extra content between body and buttons (e.g. a rating scale), as trusted template markup.
    extra: str = ""


TEMPLATES: dict[str, PopupTemplate] = {
    template.kind: template
    for template in (
        PopupTemplate(
            kind="cookie_consent",
            layout="banner",
            title="We value your privacy",
            body="We use cookies to improve your experience, analyse traffic and personalise "
            "content. Choose whether to accept cookies before you continue.",
            buttons=(Button("Accept all", "accept", primary=True), Button("Reject all", "decline")),
        ),
        PopupTemplate(
            kind="newsletter",
            layout="modal",
            title="Stay in the loop",
            body="Subscribe to our newsletter and never miss an update.",
            extra='<input type="email" placeholder="Email address" aria-label="Email address">',
            buttons=(Button("Subscribe", "accept", primary=True), Button("No thanks", "decline")),
        ),
        PopupTemplate(
            kind="survey",
            layout="modal",
            title="How are we doing?",
            body="Take a moment to rate your experience so far.",
            extra="".join(
                f'<label><input type="radio" name="rating" value="{n}"> {n}</label>'
                for n in range(1, 6)
            ),
            buttons=(Button("Send feedback", "accept", primary=True), Button("Not now", "decline")),
        ),
        PopupTemplate(
            kind="promotion",
            layout="fullpage",
            title="Limited-time offer",
            body="Members save 20% today. Join now and get free delivery on your next order.",
            buttons=(
                Button("Claim offer", "accept", primary=True),
                Button("Continue to site", "decline"),
            ),
        ),
        PopupTemplate(
            kind="session",
            layout="modal",
            title="Are you still there?",
            body="Your session is about to expire due to inactivity.",
            buttons=(
                Button("Stay signed in", "accept", primary=True),
                Button("Sign out later", "decline"),
            ),
        ),
    )
}
KINDS = tuple(sorted(TEMPLATES))


def class_prefix(seed: int, kind: str, prefix: str = "") -> str:
    """The class name root for a popup: the configured prefix, else a seeded neutral token."""
    return prefix or token_for(seed, "popup", kind)


def render_popup(kind: str, seed: int, theme: PopupTheme, prefix: str = "") -> dict[str, str]:
    """The popup's markup and stylesheet, for the client runtime to insert when it is due."""
    template = TEMPLATES[kind]
    cls = class_prefix(seed, kind, prefix)
    buttons = "".join(
        f'<button type="button" class="{cls}-b{" " + cls + "-p" if button.primary else ""}" '
        f'data-dismiss="{button.action}">{escape(button.label)}</button>'
        for button in template.buttons
    )
    extra = f'<div class="{cls}-e">{template.extra}</div>' if template.extra else ""
    markup = (
        f'<div class="{cls}-o {cls}-{template.layout}">'
        f'<div class="{cls}" role="dialog" aria-modal="true" aria-labelledby="{cls}-t" '
        f'aria-describedby="{cls}-d">'
        f'<button type="button" class="{cls}-x" aria-label="Close" data-dismiss="close">'
        "&times;</button>"
        f'<h2 id="{cls}-t">{escape(template.title)}</h2>'
        f'<p id="{cls}-d">{escape(template.body)}</p>{extra}'
        f'<div class="{cls}-a">{buttons}</div></div></div>'
    )
    return {"markup": markup, "css": _css(cls, theme)}


def _css(cls: str, theme: PopupTheme) -> str:
    return (
        f".{cls}-o{{position:fixed;inset:0;z-index:2147483000;background:{theme.backdrop};"
        "display:flex;align-items:center;justify-content:center}"
        f".{cls}-banner{{align-items:flex-end}}"
        f".{cls}{{position:relative;box-sizing:border-box;background:{theme.background};"
        f"color:{theme.text};font-family:{theme.font_family};font-size:16px;line-height:1.4;"
        f"max-width:30rem;width:calc(100% - 2rem);padding:1.5rem;border-radius:{theme.radius};"
        "box-shadow:0 8px 30px rgba(0,0,0,.3);text-align:left}"
        f".{cls}-banner .{cls}{{max-width:none;width:100%;border-radius:0}}"
        f".{cls}-fullpage .{cls}{{max-width:none;width:100%;height:100%;border-radius:0;"
        "display:flex;flex-direction:column;justify-content:center;align-items:center;"
        "text-align:center;font-size:20px}"
        f".{cls} h2{{margin:0 0 .5rem;font-size:1.3em}}"
        f".{cls}-x{{position:absolute;top:.4rem;right:.6rem;border:0;background:none;"
        "color:inherit;font-size:1.5rem;line-height:1;cursor:pointer}"
        f".{cls}-e{{display:flex;gap:.6rem;flex-wrap:wrap;margin:.8rem 0}}"
        f".{cls}-e input[type=email]{{flex:1;padding:.5rem}}"
        f".{cls}-a{{display:flex;gap:.5rem;margin-top:1rem;flex-wrap:wrap}}"
        f".{cls}-b{{padding:.55rem 1.1rem;border:1px solid {theme.accent};background:transparent;"
        f"color:{theme.accent};border-radius:{theme.radius};font:inherit;cursor:pointer}}"
        f".{cls}-p{{background:{theme.accent};color:{theme.accent_text}}}"
    )
