"""What a recording costs on disk: a lab app's scripted task in Chromium through a service with a
record directory, once per `record` setting, and the bytes each episode left.

    .venv/bin/python -m tools.recording_cost [--app vue] [--runs 3]

For each setting: the entries (HAR lines) and the distinct bodies the episode's entries name,
for the first run and for the later ones (bodies are stored once by SHA-256 for the whole
directory, so a later run of the same task adds its entries and only the bodies that changed:
the shifted pages, whose runtime configuration is per episode).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright

from api.oracle.browser import launch_chromium
from tests.helpers.lab import APPS, lab_app
from tests.helpers.processes import ServiceProcess

SETTINGS = ("pages", "all")


def episode_bytes(record_dir: Path, episode_id: str, seen: set[str]) -> tuple[int, int, int]:
    """The episode's entry bytes, its entry count, and the bytes of the bodies it named that no
    earlier episode had (added to `seen`)."""
    entries_file = record_dir / "episodes" / episode_id / "entries.jsonl"
    lines = entries_file.read_text().splitlines()
    new_bodies = 0
    for line in lines:
        extra = json.loads(line)["_skillshift"]
        for digest in (extra.get("body"), extra.get("source")):
            if digest and digest not in seen:
                seen.add(digest)
                new_bodies += (record_dir / "bodies" / digest[:2] / digest).stat().st_size
    return entries_file.stat().st_size, len(lines), new_bodies


def settled(service: ServiceProcess, episode_id: str) -> None:
    """Wait until the recording has every write queued (the HAR read is queued behind them)."""
    httpx.get(f"{service.api}/episodes/{episode_id}/har", timeout=30).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--app", default="vue", choices=("react", "vue"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--condition", default="Src-Perc")
    args = parser.parse_args()
    app = APPS[args.app]
    workdir = Path(tempfile.mkdtemp(prefix="recording-cost-"))
    results: dict[str, list[tuple[int, int, int]]] = {}
    with lab_app(app.script, workdir / "lab", *app.args) as env, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for setting in SETTINGS:
            record_dir = workdir / f"recordings-{setting}"
            service = ServiceProcess(workdir, "--record-dir", str(record_dir)).start()
            seen: set[str] = set()
            try:
                for run in range(args.runs):
                    episode: dict[str, Any] = service.create_episode(
                        condition=args.condition, seed=run, record=setting
                    )
                    context = browser.new_context(proxy=episode["proxy"])
                    app.task(context.new_page(), env["LAB_URL"], env, lambda page: None)
                    context.close()
                    settled(service, str(episode["id"]))
                    results.setdefault(setting, []).append(
                        episode_bytes(record_dir, str(episode["id"]), seen)
                    )
            finally:
                service.stop()
        browser.close()
    lines = [
        f"{args.app} lab, {args.condition}, the scripted task, {args.runs} runs",
        f"{'record':8} {'entries':>8} {'first run KB':>13} {'later runs KB':>14}",
    ]
    for setting, runs in results.items():
        first = (runs[0][0] + runs[0][2]) / 1024
        later = sum(entry + bodies for entry, _, bodies in runs[1:]) / max(1, len(runs) - 1)
        lines.append(f"{setting:8} {runs[0][1]:>8} {first:>13.1f} {later / 1024:>14.1f}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
