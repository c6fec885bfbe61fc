"""Screenshots of every popup kind over a real page (the lab WordPress's front page, served by
Debian's packages), in Debian's Chromium, for docs/popups/: the benchmark's five, and the
extended set's kinds and hosts (its native dialogs are the browser's own: no screenshot).

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

ON_LOAD = {"triggers": ["load"], "toast_ms": [60_000, 60_000], "absorb_ms": [60_000, 60_000]}
# (file name, execution set, the popup's parameters)
SHOTS = (
    [(kind, "benchmark", {"kinds": [kind]}) for kind in KINDS]
    + [
        (kind, "extended", {"kinds": [kind], "hosts": ["page"], **ON_LOAD})
        for kind in ("toast", "click_absorber", "consent_push")
    ]
    + [
        (f"newsletter-{host}", "extended", {"kinds": ["newsletter"], "hosts": [host], **ON_LOAD})
        for host in ("shadow_closed", "iframe")
    ]
)


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
            for name, execution, popup in SHOTS:
                episode = service.create_episode(
                    condition="Src-Exec",
                    regime="multiple",
                    seed=1,
                    site="wordpress",
                    execution=execution,
                    shift_params={"popup": popup},
                )
                context = browser.new_context(
                    proxy=episode["proxy"],  # type: ignore[arg-type]
                    viewport={"width": 1000, "height": 640},
                )
                page = context.new_page()
                page.goto(env["WPLAB_URL"] + "/")
                shown = service.wait_for_events(str(episode["id"]), {"popup_shown"}, timeout=15)
                if not any(event["type"] == "popup_shown" for event in shown):
                    raise RuntimeError(f"{name}: no popup shown")
                page.wait_for_timeout(300)  # its first frame painted
                page.screenshot(path=str(args.out / f"{name}.png"))
                context.close()
            browser.close()
    finally:
        service.stop()
        lab_running.close()


if __name__ == "__main__":
    main()
