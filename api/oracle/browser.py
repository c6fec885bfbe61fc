"""How skillshift's own tools launch a browser (`proxy.chromium`: Debian's Chromium, headless)."""

from __future__ import annotations

from typing import Any

from proxy.chromium import CHROMIUM, CHROMIUM_ARGS

# Playwright is the distribution's `browser` extra: what needs it says so when it is missing.
MISSING_PLAYWRIGHT = (
    "{what} cannot run without Playwright, which is not installed: "
    "pip install 'skillshift-proxy[browser]'"
)


def launch_chromium(playwright: Any) -> Any:
    """A headless Chromium with a fresh profile (Playwright's `chromium.launch`)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "MISSING_PLAYWRIGHT", "launch_chromium"]
