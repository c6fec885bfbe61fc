"""Screenshots of every popup kind over a real page (the lab WordPress's front page, served by
Debian's packages), in Debian's Chromium, for docs/popups/.

    .venv/bin/python -m tools.popup_screenshots [--out docs/popups]
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from api.oracle.browser import launch_chromium
from shifts.popups import KINDS
from tests.helpers.processes import REPO, ServiceProcess
from tests.helpers.wordpress import wordpress_lab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "popups")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="shots-"))
    lab_running = contextlib.ExitStack()
    env = lab_running.enter_context(wordpress_lab(workdir / "wp"))
    service = ServiceProcess(workdir).start()
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            for kind in KINDS:
                episode = service.create_episode(
                    condition="Src-Exec",
                    regime="multiple",
                    seed=1,
                    site="wordpress",
                    shift_params={"popup": {"kinds": [kind]}},
                )
                context = browser.new_context(
                    proxy=episode["proxy"],  # type: ignore[arg-type]
                    viewport={"width": 1000, "height": 640},
                )
                page = context.new_page()
                page.goto(env["WPLAB_URL"] + "/")
                page.get_by_role("dialog").wait_for(state="visible", timeout=5000)
                page.screenshot(path=str(args.out / f"{kind}.png"))
                context.close()
            browser.close()
    finally:
        service.stop()
        lab_running.close()


if __name__ == "__main__":
    main()
