"""Screenshots of the admin page (/ui) over the demo shop, for docs/ui/.

.venv/bin/python -m tools.ui_screenshots [--out docs/ui]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import expect, sync_playwright

from api.oracle.browser import launch_chromium
from tests.helpers.ports import free_port_pair
from tests.helpers.processes import REPO, ServiceProcess


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "ui")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    demo_port = free_port_pair()
    service = ServiceProcess(
        Path(tempfile.mkdtemp(prefix="ui-shots-")), "--demo", "--demo-port", str(demo_port)
    ).start()
    demo = f"http://127.0.0.1:{demo_port}"
    try:
        for condition, regime in (("Src-Exec", "multiple"), ("Tgt-Perc", "once")):
            episode = service.create_episode(
                condition=condition, regime=regime, seed=3, tags={"method": "react"}
            )
            with httpx.Client(proxy=service.proxy, headers=dict(episode["header"])) as client:  # type: ignore[call-overload]
                client.get(f"{demo}/products", headers={"Sec-Fetch-Dest": "document"})
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{service.api}/ui")
            rows = page.locator("#episode-table tbody tr")
            expect(rows).to_have_count(2)
            rows.first.get_by_role("button", name="Events").click()
            expect(page.locator("#log-events li")).to_have_count(3)
            page.screenshot(path=str(args.out / "episodes.png"), full_page=True)
            page.get_by_role("button", name="Preview").click()
            page.get_by_label("URL").fill(f"{demo}/products")
            page.get_by_label("Site").last.select_option("demo")
            page.get_by_role("button", name="Render all six conditions").click()
            expect(page.locator("#preview-grid img")).to_have_count(6, timeout=60_000)
            page.screenshot(path=str(args.out / "preview.png"), full_page=True)
            browser.close()
    finally:
        service.stop()


if __name__ == "__main__":
    main()
