"""`skillshift calibrate`: every reference skill, N times, under every condition and regime.

It drives a real Chromium through a running skillshift service (its admin API creates one
episode per run, seed = run index) in front of the lab WordPress (deploy/wordpress), and prints
the success rate per skill x condition, with mean steps and popup events; `--json` keeps it all.
Skills that need a session get the editor's cookies from a direct login (no page load through
the proxy), so the harness never spends the episode's loads, e.g. a `once` popup.
"""

from __future__ import annotations

import json
import secrets
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from api.calibration import COLUMNS, column_name
from api.calibration.wordpress import SETUP, SKILLS, TEARDOWN, Lab, Skill, Steps
from api.oracle.browser import launch_chromium
from skillshift_client import SkillShift


@dataclass
class Cell:
    runs: int = 0
    successes: int = 0
    steps: list[int] = field(default_factory=list)
    popups_shown: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "success_rate": round(self.successes / self.runs, 3) if self.runs else None,
            "mean_steps": round(statistics.fmean(self.steps), 2) if self.steps else None,
            "popups_shown": self.popups_shown,
            "errors": self.errors[:5],
        }


def editor_cookies(lab: Lab) -> list[dict[str, Any]]:
    """The editor's logged-in session, obtained directly from WordPress, not through the
    proxy (as a browser context takes cookies)."""
    host = httpx.URL(lab.url).host
    return [
        {"name": name, "value": value, "domain": host, "path": "/"}
        for name, value in session_cookies(lab.url, "editor", "editor-pass").items()
    ]


def session_cookies(url: str, user: str, password: str) -> dict[str, str]:
    """A WordPress user's logged-in session, obtained directly from the WordPress at `url`."""
    with httpx.Client(base_url=url, follow_redirects=False, trust_env=False) as client:
        client.cookies.set("wordpress_test_cookie", "WP Cookie check")
        client.post(
            "/wp-login.php",
            data={"log": user, "pwd": password, "testcookie": "1", "wp-submit": "Log In"},
        )
        return {cookie.name: cookie.value or "" for cookie in client.cookies.jar}


def run_once(
    browser: Any,
    api: SkillShift,
    lab: Lab,
    skill: Skill,
    condition: str,
    regime: str | None,
    seed: int,
    target_url: str,
) -> tuple[bool, int, int, str]:
    config: dict[str, Any] = {
        "condition": condition,
        "seed": seed,
        "site": "wordpress",
        "ttl_s": 3600,
        "tags": {"skill": skill.name},
        # Reference runs of the service's own skills, not an agent's task attempts: kept out
        # of /reports unless asked for.
        "internal": True,
    }
    if condition.startswith("Tgt"):
        config["targets"] = {lab.url: target_url}
    if regime:
        config["regime"] = regime
        config["regime_params"] = {"p": 0.5, "min_ms": 0, "max_ms": 1500}
    episode = api.create_episode(**config)
    token = secrets.token_hex(4)
    if skill.name in SETUP:
        SETUP[skill.name](lab, token)
    context = browser.new_context(
        proxy=episode.playwright_proxy(), viewport={"width": 1280, "height": 900}
    )
    if skill.needs_login:
        context.add_cookies(editor_cookies(lab))
    page = context.new_page()
    steps = Steps(page)
    error = ""
    try:
        skill.run(page, steps, lab, token)
    except Exception as failure:  # a skill that breaks is a failed run, which is the point
        error = f"{type(failure).__name__}: {str(failure).splitlines()[0][:160]}"
    finally:
        context.close()
    events = list(api.iter_events(episode.id))
    succeeded = skill.succeeded(lab, token, events)
    if skill.name in TEARDOWN:
        TEARDOWN[skill.name](lab, token)
    shown = sum(1 for event in events if event["type"] == "popup_shown")
    api.task_result(episode.id, success=succeeded, steps=steps.count, skill=skill.name)
    return succeeded, steps.count, shown, error


def calibrate(
    api: SkillShift,
    wordpress_env: Path,
    runs: int,
    skills: list[str] | None,
    columns: list[str] | None,
) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    env = dict(line.split("=", 1) for line in wordpress_env.read_text().splitlines() if "=" in line)
    lab = Lab(env["WPLAB_URL"], env["WPLAB_DB_SOCKET"])
    chosen_skills = [s for s in SKILLS if not skills or s.name in skills]
    chosen_columns = [c for c in COLUMNS if not columns or column_name(*c) in columns]
    table: dict[str, dict[str, Cell]] = {s.name: {} for s in chosen_skills}
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for skill in chosen_skills:
            for condition, regime in chosen_columns:
                cell = table[skill.name].setdefault(column_name(condition, regime), Cell())
                for seed in range(runs):
                    sys.stderr.write(
                        f"  {skill.name} {column_name(condition, regime)} run {seed + 1}/{runs}\n"
                    )
                    ok, steps, shown, error = run_once(
                        browser, api, lab, skill, condition, regime, seed, env["WPLAB_TARGET_URL"]
                    )
                    cell.runs += 1
                    cell.successes += ok
                    cell.steps.append(steps)
                    cell.popups_shown += shown
                    if error and not ok:
                        cell.errors.append(error)
                sys.stderr.write(
                    f"{skill.name:<16} {column_name(condition, regime):<18} "
                    f"{cell.successes}/{cell.runs}\n"
                )
        browser.close()
    return {
        "runs_per_cell": runs,
        "columns": [column_name(*c) for c in chosen_columns],
        "skills": {
            name: {col: cell.as_dict() for col, cell in cells.items()}
            for name, cells in table.items()
        },
    }


def render(result: dict[str, Any]) -> str:
    columns = result["columns"]
    width = max(9, *(len(c) for c in columns))
    lines = [
        f"success rate (mean steps, popups shown) over {result['runs_per_cell']} runs",
        f"{'skill':<16}" + "".join(f"{c:>{width + 2}}" for c in columns),
    ]
    for skill, cells in result["skills"].items():
        row = f"{skill:<16}"
        for column in columns:
            cell = cells[column]
            rate, steps = cell["success_rate"] * 100, cell["mean_steps"]
            shown = cell["popups_shown"]
            row += f"{rate:>{width - 8}.0f}% ({steps:>4.1f},{shown:>2})"
        lines.append(row)
    overall = f"{'all skills':<16}"
    for column in columns:
        rates = [cells[column]["success_rate"] for cells in result["skills"].values()]
        overall += f"{statistics.fmean(rates) * 100:>{width + 1}.0f}%"
    lines.append(overall)
    return "\n".join(lines)


def main(args: Any) -> int:
    with SkillShift(args.api_url, args.api_token) as api:
        result = calibrate(api, Path(args.wordpress_env), args.runs, args.skill, args.column)
    sys.stdout.write(render(result) + "\n")
    if args.output:
        Path(args.output).write_text(json.dumps(result, indent=2))
    return 0
