"""Screenshots of every popup kind over the demo shop, in a real Chromium, for docs/popups/.

.venv/bin/python -m tools.popup_screenshots [--out docs/popups]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from api.browser import launch_chromium
from shifts.popups import KINDS
from tests.helpers.ports import free_port
from tests.helpers.processes import ServiceProcess


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("docs/popups"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    demo_port = free_port()
    service = ServiceProcess(
        Path(tempfile.mkdtemp(prefix="shots-")), "--demo", "--demo-port", str(demo_port)
    ).start()
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            for kind in KINDS:
                episode = service.create_episode(
                    condition="Src-Exec",
                    regime="multiple",
                    seed=1,
                    shift_params={"popup": {"kinds": [kind]}},
                )
                context = browser.new_context(
                    proxy=episode["proxy"],  # type: ignore[arg-type]
                    viewport={"width": 1000, "height": 640},
                )
                page = context.new_page()
                page.goto(f"http://127.0.0.1:{demo_port}/products")
                page.get_by_role("dialog").wait_for(state="visible", timeout=5000)
                page.screenshot(path=str(args.out / f"{kind}.png"))
                context.close()
            browser.close()
    finally:
        service.stop()


if __name__ == "__main__":
    main()
