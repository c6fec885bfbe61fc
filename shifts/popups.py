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

Layout = Literal["modal", "banner", "fullpage", "toast", "absorber", "push", "native"]


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

# The extended execution set's own kinds (`"execution": "extended"`), beyond the benchmark's.
# The native ones are the browser's own dialogs: their title is the text they show.
EXTENDED_TEMPLATES: dict[str, PopupTemplate] = {
    template.kind: template
    for template in (
        PopupTemplate(
            kind="toast",
            layout="toast",
            title="Preferences saved",
            body="Your settings were updated. Some pages may take a moment to reflect them.",
            buttons=(Button("View settings", "accept", primary=True),),
        ),
        PopupTemplate(
            kind="click_absorber",
            layout="absorber",
            title="Please wait",
            body="Loading your content.",
            buttons=(),
        ),
        PopupTemplate(
            kind="consent_push",
            layout="push",
            title="Cookies on this site",
            body="We use cookies to remember your choices and measure how the site is used.",
            buttons=(Button("Accept all", "accept", primary=True), Button("Reject all", "decline")),
        ),
        PopupTemplate(
            kind="native_alert",
            layout="native",
            title="Your session will expire soon. Save your work to keep it.",
            body="",
            buttons=(),
        ),
        PopupTemplate(
            kind="native_confirm",
            layout="native",
            title="Would you like to take a short survey about this page?",
            body="",
            buttons=(),
        ),
        PopupTemplate(
            kind="native_beforeunload",
            layout="native",
            title="Changes you made may not be saved.",
            body="",
            buttons=(),
        ),
    )
}
ALL_TEMPLATES = {**TEMPLATES, **EXTENDED_TEMPLATES}
EXTENDED_KINDS = tuple(sorted(ALL_TEMPLATES))


def class_prefix(seed: int, kind: str, prefix: str = "") -> str:
    """The class name root for a popup: the configured prefix, else a seeded neutral token."""
    return prefix or token_for(seed, "popup", kind)


def render_popup(
    kind: str, seed: int, theme: PopupTheme, prefix: str = "", continue_to: str | None = None
) -> dict[str, str]:
    """The popup's markup and stylesheet, for the client runtime to insert when it is due (a
    native dialog's text, which the browser shows in its own way)."""
    template = ALL_TEMPLATES[kind]
    if template.layout == "native":
        return {"text": template.title}
    cls = class_prefix(seed, kind, prefix)
    buttons = "".join(
        f'<button type="button" class="{cls}-b{" " + cls + "-p" if button.primary else ""}" '
        f'data-dismiss="{button.action}">{escape(button.label)}</button>'
        for button in template.buttons
    )
    if continue_to is not None:  # an interstitial: the way on to the page that was asked for
        buttons += (
            f'<a class="{cls}-b {cls}-p" href="{escape(continue_to, quote=True)}" '
            'data-dismiss="continue">Continue</a>'
        )
    extra = f'<div class="{cls}-e">{template.extra}</div>' if template.extra else ""
    markup = (
        f'<div class="{cls}-o {cls}-{template.layout}">'
        f'<div class="{cls}" role="{_ROLES.get(template.layout, "dialog")}" '
        f'aria-modal="{"false" if template.layout in _NOT_MODAL else "true"}" '
        f'aria-labelledby="{cls}-t" '
        f'aria-describedby="{cls}-d">'
        f'<button type="button" class="{cls}-x" aria-label="Close" data-dismiss="close">'
        "&times;</button>"
        f'<h2 id="{cls}-t">{escape(template.title)}</h2>'
        f'<p id="{cls}-d">{escape(template.body)}</p>{extra}'
        f'<div class="{cls}-a">{buttons}</div></div></div>'
    )
    css = _css(cls, theme)
    if template.layout in _EXTENDED_LAYOUTS:
        css += _EXTENDED_LAYOUTS[template.layout].replace("CLS", cls)
    return {"markup": markup, "css": css}


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


# The extended layouts, after the shared rules (which they override). A toast covers a corner
# and leaves the rest usable; a push banner takes room at the top of the page, in its flow; an
# absorber is a clear overlay: the page shows through, and its clicks go nowhere.
_EXTENDED_LAYOUTS = {
    "toast": ".CLS-toast{inset:auto 1rem 1rem auto;background:none;display:block}"
    ".CLS-toast .CLS{width:22rem;max-width:calc(100vw - 2rem)}",
    "push": ".CLS-push{position:relative;inset:auto;z-index:auto;background:none;display:block}"
    ".CLS-push .CLS{max-width:none;width:100%;border-radius:0;box-shadow:none}",
    "absorber": ".CLS-absorber{background:transparent;align-items:flex-start;"
    "justify-content:flex-end}"
    ".CLS-absorber .CLS{width:auto;max-width:18rem;margin:1rem;padding:.6rem 2.4rem .6rem .9rem;"
    "font-size:14px}.CLS-absorber h2{font-size:1em}",
}
_NOT_MODAL = frozenset({"toast", "push"})  # the page stays usable around them
_ROLES = {"toast": "alertdialog"}
