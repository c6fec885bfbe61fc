"""How skillshift's own tools launch a browser (`proxy.chromium`: Debian's Chromium, headless)."""

from __future__ import annotations

from typing import Any

from proxy.chromium import CHROMIUM, CHROMIUM_ARGS, missing_playwright


def launch_chromium(playwright: Any) -> Any:
    """A headless Chromium with a fresh profile (Playwright's `chromium.launch`)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "launch_chromium", "missing_playwright"]
