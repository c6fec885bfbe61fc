"""The lab table: every lab app x perceptual condition x seeds, each in a fresh service.

    .venv/bin/python -m tools.lab_table [--apps wordpress,mediawiki] [--seeds 5] [--json FILE]

For each app (brought up with its deploy script on free ports, one at a time): the browser
oracle over every lab page under `Src-Perc` and `Tgt-Perc` for seeds 0..N-1 with the benchmark's
set (violations, and the share of interactive elements whose locator changed, as rendered in
Chromium), the extended set on the first page (restyle alone: any violation; the whole set:
new errors, since relabel and relayout change geometry and what sits where by design), and the
scripted task under all six conditions. Every oracle run (one page, one condition, every
seed) and every task runs in a service process started for it, with knowledge of its own: no
process has seen the app before, so every shifted page is learnt on its first load. Prints one
row per app x condition, then the lowest share per page; exit status 1 on any violation or
failed task.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from api.oracle.browser import launch_chromium
from shifts.conditions import CONDITIONS
from tests.helpers.lab import APPS, lab_app, oracle, task_under
from tests.helpers.processes import ServiceProcess

PERCEPTUAL = ("Src-Perc", "Tgt-Perc")
# Restyle alone must change nothing the oracle sees; relabel (text widths) and relayout
# (placement, and what sits at a place) change it by design, so with them only errors count.
RESTYLE_ONLY = {"relabel": {"rate": 0.0}, "relayout": {"rate": 0.0, "sidebar_rate": 0.0}}
JUDGED_WITH_EVERYTHING = ("error",)


@contextmanager
def fresh_service() -> Iterator[ServiceProcess]:
    """A service process that has seen nothing, with knowledge of its own."""
    with tempfile.TemporaryDirectory() as workdir:
        service = ServiceProcess(Path(workdir)).start()
        try:
            yield service
        finally:
            service.stop()


def fresh_oracle(
    env: dict[str, str], page: str, condition: str, seeds: list[int], **options: Any
) -> dict:  # type: ignore[type-arg]
    with fresh_service() as service:
        return oracle(service.api, env, page, condition, seeds, **options)


def measure_app(name: str, seeds: list[int], browser: Any) -> dict:  # type: ignore[type-arg]
    app = APPS[name]
    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as state, lab_app(app.script, Path(state), *app.args) as env:
        for condition in PERCEPTUAL:
            violations, shares, by_page = 0, [], {}
            for page in app.pages:
                result = fresh_oracle(env, page, condition, seeds)
                violations += result["violations"]
                page_shares = [
                    r["locator_share"] for r in result["runs"] if r["locator_share"] is not None
                ]
                shares += page_shares
                by_page[page] = min(page_shares) if page_shares else None
            restyle = fresh_oracle(
                env, app.pages[0], condition, seeds[:1],
                perceptual="extended", shift_params=RESTYLE_ONLY,
            )  # fmt: skip
            extended = fresh_oracle(env, app.pages[0], condition, seeds[:1], perceptual="extended")
            extended_violations = sum(len(run["violations"]) for run in restyle["runs"]) + sum(
                v["kind"] in JUDGED_WITH_EVERYTHING
                for run in extended["runs"]
                for v in run["violations"]
            )
            rows[condition] = {
                "loads": len(app.pages) * len(seeds),
                "violations": violations,
                "extended_violations": extended_violations,
                "share_min": min(shares) if shares else None,
                "share_median": statistics.median(shares) if shares else None,
                "share_min_by_page": by_page,
            }
        rows["tasks"] = {}
        for condition in CONDITIONS:
            with fresh_service() as service:
                rows["tasks"][condition] = task_under(browser, service.api, app, env, condition)
    return rows


def render(table: dict[str, dict]) -> str:  # type: ignore[type-arg]
    lines = [
        f"{'app':<10} {'condition':<9} {'loads':>5} {'viol.':>5} {'ext.':>5} "
        f"{'share min':>9} {'median':>7}  tasks (Src Src-Perc Src-Exec Tgt Tgt-Perc Tgt-Exec)"
    ]
    for app, rows in table.items():
        tasks = " ".join("ok" if t["success"] else "FAIL" for t in rows["tasks"].values())
        for condition in PERCEPTUAL:
            row = rows[condition]
            low = "-" if row["share_min"] is None else f"{row['share_min']:.2f}"
            mid = "-" if row["share_median"] is None else f"{row['share_median']:.2f}"
            lines.append(
                f"{app:<10} {condition:<9} {row['loads']:>5} {row['violations']:>5} "
                f"{row['extended_violations']:>5} {low:>9} {mid:>7}  {tasks}"
            )
    lines.append("")
    lines.append("lowest share per page (seeds 0..N-1):")
    for app, rows in table.items():
        for condition in PERCEPTUAL:
            for page, low in rows[condition]["share_min_by_page"].items():
                shown = "-" if low is None else f"{low:.2f}"
                lines.append(f"  {app:<10} {condition:<9} {shown:>5}  {page}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", default=",".join(APPS), help="comma-separated lab apps")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    parser.add_argument("--json", help="also write everything to this file")
    args = parser.parse_args()
    table: dict[str, Any] = {}
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            for name in args.apps.split(","):
                table[name] = measure_app(name, list(range(args.seeds)), browser)
                sys.stderr.write(f"{name}: done\n")
        finally:
            browser.close()
    sys.stdout.write(render(table) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=2))
    failed = any(
        row[c]["violations"] or row[c]["extended_violations"]
        for row in table.values()
        for c in PERCEPTUAL
    ) or any(not t["success"] for row in table.values() for t in row["tasks"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
