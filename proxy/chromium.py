"""How the service launches a browser: Debian's Chromium, headless, through Playwright.

The flags keep Chromium from phoning home (background networking, component updates, sync),
which a closed lab network would refuse anyway, many connections at a time.
"""

from __future__ import annotations

import importlib.util
import sys

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# Playwright is the distribution's `browser` extra: what needs it says how to get it.
BROWSER_EXTRA = "pip install 'skillshift-proxy[browser]'"


def missing_playwright(what: str) -> str:
    """Why `what` cannot run: Playwright is not installed."""
    return f"{what} cannot run without Playwright, which is not installed: {BROWSER_EXTRA}"


def playwright_installed() -> bool:
    if "playwright" in sys.modules:  # (imported, or blocked with None)
        return sys.modules["playwright"] is not None
    return importlib.util.find_spec("playwright") is not None
