"""Screenshots of every lab app under every condition, side by side: docs/gallery.md.

    .venv/bin/python -m tools.gallery [--out docs] [--apps wordpress,mediawiki,...]

Brings up each lab app (tests/helpers/lab.py, one at a time) and a service on free ports,
opens the app's first page in Debian's Chromium under each condition (seed 1; -Exec with the
`multiple` regime and no delay, so the popup is in the picture; Tgt* routed to the app's target
variant), and writes the PNGs and the page that shows them. Under the benchmark's perceptual
shift the page looks the same as under its baseline: that is the point (the locators differ).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from api.oracle.browser import launch_chromium
from shifts.conditions import CONDITIONS
from tests.helpers.lab import APPS, lab_app
from tests.helpers.processes import REPO, ServiceProcess

SETTLE_MS = 800  # a picture, not a measurement: let fonts and the popup's first frame land


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs")
    parser.add_argument("--apps", default=",".join(APPS))
    args = parser.parse_args()
    shots = args.out / "gallery"
    shots.mkdir(parents=True, exist_ok=True)
    names = args.apps.split(",")
    with tempfile.TemporaryDirectory() as workdir, sync_playwright() as playwright:
        service = ServiceProcess(Path(workdir)).start()
        browser = launch_chromium(playwright)
        try:
            for name in names:
                app = APPS[name]
                with lab_app(app.script, Path(workdir) / name, *app.args) as env:
                    for condition in CONDITIONS:
                        episode = service.create_episode(
                            condition=condition,
                            seed=1,
                            regime="multiple",
                            regime_params={"min_ms": 0, "max_ms": 0},
                            targets={env["LAB_URL"]: env["LAB_TARGET_URL"]},
                        )
                        context = browser.new_context(
                            proxy=episode["proxy"],  # type: ignore[arg-type]
                            viewport={"width": 1100, "height": 760},
                        )
                        page = context.new_page()
                        page.goto(env["LAB_URL"] + app.pages[0], wait_until="load")
                        page.wait_for_timeout(SETTLE_MS)
                        page.screenshot(path=str(shots / f"{name}-{condition}.png"))
                        context.close()
        finally:
            browser.close()
            service.stop()
    write_page(args.out / "gallery.md", names)


def write_page(path: Path, names: list[str]) -> None:
    lines = [
        "# Gallery: the lab's apps under the six conditions",
        "",
        "Each lab app (`tests/helpers/lab.py`: installed by package name, source and target "
        "variants) through skillshift in Debian's Chromium, seed 1, `-Exec` with the `multiple` "
        "regime. `-Perc` is the benchmark's perceptual shift: the page looks as it does without "
        "it, while its ids, classes, test hooks and element paths differ. Regenerate with "
        "`.venv/bin/python -m tools.gallery`.",
        "",
    ]
    for name in names:
        lines += [f"## {name} (`{APPS[name].pages[0]}`)", "", "| condition | screenshot |"]
        lines += ["|---|---|"]
        lines += [f"| `{c}` | ![{name} {c}](gallery/{name}-{c}.png) |" for c in CONDITIONS]
        lines.append("")
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
