"""The system's Chromium (Debian's `chromium`) where Playwright looks for its own downloads:
for code that launches Playwright's Chromium with no way to pass a path (BrowserGym's chat
window, a headless launch of its own)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["use_system_chromium"]

# Where Playwright releases expect each Chromium build of theirs, under PLAYWRIGHT_BROWSERS_PATH,
# in `<name, "-" as "_">-<revision>/`: the layouts of older releases and of Chrome for Testing
# (1.49 on, which also launches headless Chromium as a separate headless shell), x64 and arm64.
# Each is linked: a release finds its own and ignores the others.
LAYOUTS = {
    "chromium": ("chrome-linux/chrome", "chrome-linux64/chrome", "chrome-linux-arm64/chrome"),
    "chromium-headless-shell": (
        "chrome-linux/headless_shell",
        "chrome-headless-shell-linux64/chrome-headless-shell",
        "chrome-headless-shell-linux-arm64/chrome-headless-shell",
    ),
}


def system_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def use_system_chromium() -> None:
    """Make Playwright find the system's Chromium where it expects its own download, headed
    and headless, for this process and the ones it starts (PLAYWRIGHT_BROWSERS_PATH). Nothing
    changes when there is no system Chromium or PLAYWRIGHT_BROWSERS_PATH is set."""
    import playwright

    chromium = system_chromium()
    browsers = Path(playwright.__file__).parent / "driver/package/browsers.json"
    if not chromium or not browsers.exists() or os.environ.get("PLAYWRIGHT_BROWSERS_PATH"):
        return
    root = Path(tempfile.mkdtemp(prefix="pw-browsers-"))
    for browser in json.loads(browsers.read_text())["browsers"]:
        folder = root / f"{browser['name'].replace('-', '_')}-{browser['revision']}"
        for layout in LAYOUTS.get(browser["name"], ()):
            executable = folder / layout
            executable.parent.mkdir(parents=True, exist_ok=True)
            executable.symlink_to(chromium)
    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(root)
