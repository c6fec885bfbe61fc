"""How skillshift's own tools launch a browser: Debian's Chromium, headless, through Playwright.

The flags keep Chromium from phoning home (background networking, component updates, sync),
which a closed lab network would refuse anyway, many connections at a time.
"""

from __future__ import annotations

from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def launch_chromium(playwright: Any) -> Any:
    """A headless Chromium with a fresh profile (Playwright's `chromium.launch`)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
