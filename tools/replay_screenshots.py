"""A replayed page beside the page the agent saw, and beside the live site now: docs/replay.md.

    .venv/bin/python -m tools.replay_screenshots [--out docs]

Brings up the lab WordPress and a service with a record directory, opens the post under
`Src-Exec` (the `multiple` regime, no delay, so the popup is in the picture) and records it,
then edits the post's title in the database and takes the same page twice more: live through a
new episode (the site has moved on) and through a replay episode of the first one (what the
agent saw). The documents of the original and the replay are compared byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, sync_playwright

from api.oracle.browser import launch_chromium
from tests.helpers.lab import APPS, lab_app
from tests.helpers.processes import REPO, ServiceProcess

PATH = "/?p=4"
EDITED = "Edited after the run"


def shoot(browser: Browser, episode: dict[str, Any], url: str, png: Path) -> str:
    """The page's screenshot once its popup (if any) is up; returns its document's digest."""
    context = browser.new_context(proxy=episode["proxy"], viewport={"width": 1100, "height": 760})
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        if episode["condition"].endswith("-Exec"):
            page.get_by_role("dialog").wait_for(state="visible")
        page.evaluate("() => document.fonts.ready")
        page.screenshot(path=str(png))
        document = str(page.evaluate("() => document.documentElement.outerHTML"))
        return hashlib.sha256(document.encode()).hexdigest()[:16]
    finally:
        context.close()


def sql(env: dict[str, str], statement: str) -> str:
    command = ["mariadb", f"--socket={env['WPLAB_DB_SOCKET']}", "wplab", "-N", "-e", statement]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args()
    shots = args.out / "replay"
    shots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as workdir, sync_playwright() as playwright:
        work = Path(workdir)
        app = APPS["wordpress"]
        with lab_app(app.script, work / "wordpress", *app.args) as env:
            service = ServiceProcess(work, "--record-dir", str(work / "recordings")).start()
            browser = launch_chromium(playwright)
            url = env["LAB_URL"] + PATH
            popups = {"regime": "multiple", "regime_params": {"min_ms": 0, "max_ms": 0}}
            title = sql(env, "SELECT post_title FROM wp_posts WHERE ID=4")
            try:
                agent = service.create_episode(condition="Src-Exec", seed=1, record="all", **popups)
                original = shoot(browser, agent, url, shots / "original.png")
                sql(env, f"UPDATE wp_posts SET post_title='{EDITED}' WHERE ID=4")
                live = service.create_episode(condition="Src-Exec", seed=1, **popups)
                now = shoot(browser, live, url, shots / "live-now.png")
                replay = service.create_episode(replay_of=agent["id"])
                replayed = shoot(browser, replay, url, shots / "replay.png")
            finally:
                sql(env, f"UPDATE wp_posts SET post_title='{title}' WHERE ID=4")
                browser.close()
                service.stop()
    write_page(args.out / "replay.md", original, now, replayed)


def write_page(path: Path, original: str, now: str, replayed: str) -> None:
    verdict = "the same document" if original == replayed else "DIFFERENT documents"
    path.write_text(
        "\n".join(
            [
                "# A replay beside what the agent saw",
                "",
                f"The lab WordPress post `{PATH}` under `Src-Exec` (`multiple`, no delay), "
                "recorded; then its title was edited in the database. Live, the site has moved "
                "on; the replay episode answers from the recording and shows what the agent "
                f"saw, popup included. Original and replay: {verdict} (document digests "
                f"`{original}` and `{replayed}`; live now: `{now}`). Regenerate with "
                "`.venv/bin/python -m tools.replay_screenshots`.",
                "",
                "| the agent saw | replayed later | live now |",
                "|---|---|---|",
                "| ![original](replay/original.png) | ![replay](replay/replay.png) "
                "| ![live](replay/live-now.png) |",
                "",
            ]
        )
    )


if __name__ == "__main__":
    main()
