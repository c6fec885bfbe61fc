"""Screenshots of the same WordPress pages under every condition, side by side: docs/gallery.md.

    .venv/bin/python -m tools.gallery [--out docs]

Brings up the lab WordPress (deploy/wordpress) and a skillshift service on free ports, opens
each page in Debian's Chromium under each condition (seed 1; -Exec with the `multiple` regime,
so the popup is in the picture), and writes the PNGs and the page that shows them.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from api.browser import launch_chromium
from api.calibration.run import editor_cookies
from api.calibration.wordpress import Lab
from shifts.conditions import CONDITIONS
from tests.helpers.processes import REPO, ServiceProcess
from tests.helpers.wordpress import wordpress_lab

PAGES = {
    "front": ("Front page", "/", False),
    "post": ("A post", "/?p=4", False),
    "login": ("Log-in form", "/wp-login.php", False),
    "posts": ("Posts list (wp-admin)", "/wp-admin/edit.php", True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    args = parser.parse_args()
    shots = args.out / "gallery"
    shots.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="gallery-"))
    lab_running = contextlib.ExitStack()
    env = lab_running.enter_context(wordpress_lab(workdir / "wp"))
    lab = Lab(env["WPLAB_URL"], env["WPLAB_DB_SOCKET"])
    service = ServiceProcess(workdir).start()
    try:
        with sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            for condition in CONDITIONS:
                config: dict[str, object] = {
                    "condition": condition,
                    "seed": 1,
                    "site": "wordpress",
                    "regime": "multiple",
                }
                if condition.startswith("Tgt"):
                    config["targets"] = {env["WPLAB_URL"]: env["WPLAB_TARGET_URL"]}
                for name, (_, path, login) in PAGES.items():
                    episode = service.create_episode(**config)
                    context = browser.new_context(
                        proxy=episode["proxy"],  # type: ignore[arg-type]
                        viewport={"width": 1100, "height": 760},
                    )
                    if login:
                        context.add_cookies(editor_cookies(lab))  # type: ignore[arg-type]
                    page = context.new_page()
                    page.goto(env["WPLAB_URL"] + path, wait_until="load")
                    page.wait_for_timeout(800)
                    page.screenshot(path=str(shots / f"{name}-{condition}.png"))
                    context.close()
            browser.close()
    finally:
        service.stop()
        lab_running.close()
    write_page(args.out / "gallery.md")


def write_page(path: Path) -> None:
    lines = [
        "# Gallery: one WordPress, six conditions",
        "",
        "The lab WordPress (`deploy/wordpress`, Debian's packages; source theme twentytwentyone, "
        "target theme twentytwentythree) through skillshift in Debian's Chromium, seed 1, `-Exec` "
        "with the `multiple` regime. Regenerate with `.venv/bin/python -m tools.gallery`.",
        "",
    ]
    for name, (title, url_path, _) in PAGES.items():
        lines += [f"## {title} (`{url_path}`)", "", "| condition | screenshot |", "|---|---|"]
        lines += [f"| `{c}` | ![{name} {c}](gallery/{name}-{c}.png) |" for c in CONDITIONS]
        lines.append("")
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
