"""How the service launches a browser: Debian's Chromium, headless, through Playwright.

The flags keep Chromium from phoning home (background networking, component updates, sync),
which a closed lab network would refuse anyway, many connections at a time.
"""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
