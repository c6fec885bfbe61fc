"""A real WordPress under the proxy: every condition end to end in a real Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from api.calibration import COLUMNS
from tests.helpers.processes import RedisProcess, ServiceProcess

pytestmark = pytest.mark.browser

# The calibration's columns but `Tgt-Exec` once and random (the same popups as `Src-Exec`'s).
CASES = [case for case in COLUMNS if case not in (("Tgt-Exec", "once"), ("Tgt-Exec", "random"))]
PAGES = {
    "front": "/",
    "post": "/?p=4",
    "dashboard": "/wp-admin/",
    "posts": "/wp-admin/edit.php",
    "editor": "/wp-admin/post.php?post=4&action=edit",
}


@pytest.fixture(scope="module")
def wp_service(
    tmp_path_factory: pytest.TempPathFactory, redis_server: RedisProcess
) -> Iterator[ServiceProcess]:
    process = ServiceProcess(
        tmp_path_factory.mktemp("wp-service"),
        "--redis-url",
        redis_server.url,
        "--key-prefix",
        "wp:",
    ).start()
    yield process
    process.stop()


# True once the popup this load's runtime plans (its `data-cfg`'s `p`) is up, or at once when the
# load plans none (no runtime, or no popup in its plan): what a fixed sleep after a load stood for.
PLANNED_POPUP_UP = """() => {
  const runtime = document.querySelector("script[src*='/__ss/r.js'][data-cfg]");
  let plan = null;
  try { plan = runtime && JSON.parse(runtime.getAttribute("data-cfg")).p; } catch (e) {}
  return !plan || document.querySelector("[role=dialog] [data-dismiss]") !== null;
}"""


def dismiss_popups(page: Page) -> int:
    """The test harness (not a skill) clears popups so it can go on: returns how many."""
    dismissed = 0
    dialog = page.get_by_role("dialog", name=None).filter(has=page.locator("[data-dismiss]"))
    while dialog.count() and dialog.first.is_visible():
        page.keyboard.press("Escape")
        dialog.first.wait_for(state="hidden")  # the runtime takes it down on Escape
        dismissed += 1
    return dismissed


def browse(
    browser: Browser,
    service: ServiceProcess,
    wordpress: dict[str, str],
    condition: str,
    regime: str | None,
) -> dict[str, Any]:
    config: dict[str, Any] = {"condition": condition, "seed": 1, "site": "wordpress"}
    if condition.startswith("Tgt"):
        config["targets"] = {wordpress["WPLAB_URL"]: wordpress["WPLAB_TARGET_URL"]}
    if regime:
        config["regime"] = regime
        config["regime_params"] = {"p": 0.5, "min_ms": 0, "max_ms": 300}
    episode = service.create_episode(**config)
    context = browser.new_context(proxy=episode["proxy"], viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"pageerror {error}"))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    base = wordpress["WPLAB_URL"]
    page.goto(f"{base}/wp-login.php")
    page.wait_for_function(PLANNED_POPUP_UP)
    dismiss_popups(page)
    page.locator("input[name=log]").fill("admin")
    page.locator("input[name=pwd]").fill("admin-pass")
    page.locator("[name=wp-submit]").click()
    # (WordPress's first admin loads check for updates, which on a machine with no route out
    # wait on their own timeouts: a CI run saw every login here pass 20 s)
    page.wait_for_url("**/wp-admin/**", timeout=90_000)
    seen: dict[str, dict[str, Any]] = {}
    for name, path in PAGES.items():
        # (A bound against a hang, not a speed: the block editor's page waits on dozens of
        # scripts, each shifted on its first load under -Perc, and a CI run beside the lab's
        # apps once took past playwright's default 30 s to reach its DOMContentLoaded.)
        response = page.goto(f"{base}{path}", wait_until="domcontentloaded", timeout=120_000)
        assert response is not None and response.status == 200, (condition, name)
        # Loaded (every script and stylesheet the page names, each shifted on its first load
        # under -Perc: a bound of its own), and the popup its runtime plans up.
        page.wait_for_load_state("load", timeout=60_000)
        page.wait_for_function(PLANNED_POPUP_UP)
        seen[name] = {
            "runtime": page.locator("script[src*='/__ss/r.js']").count(),
            "title": page.title(),
            "dialogs": page.locator("[role=dialog][aria-modal=true]").count(),
        }
        dismiss_popups(page)
    context.close()
    # The popups' beacons too, when popups were shown (the page only sends them).
    wanted = {"page_served", "popup_shown"} if condition.endswith("Exec") else {"page_served"}
    events = service.wait_for_events(str(episode["id"]), wanted)
    return {"episode": episode, "pages": seen, "errors": errors, "events": events}


@pytest.fixture(scope="module")
def runs(
    browser: Browser, wp_service: ServiceProcess, wordpress: dict[str, str]
) -> dict[tuple[str, str | None], dict[str, Any]]:
    return {case: browse(browser, wp_service, wordpress, *case) for case in CASES}


def test_wordpress_is_real_and_seeded(wordpress: dict[str, str]) -> None:
    front = httpx.get(wordpress["WPLAB_URL"] + "/").text
    assert 'name="generator" content="WordPress' in front and "twentytwentyone" in front
    assert "City council approves new bike lanes" in front
    target = httpx.get(
        wordpress["WPLAB_TARGET_URL"] + "/",
        headers={"Host": httpx.URL(wordpress["WPLAB_URL"]).netloc.decode()},
    ).text
    assert "twentytwentythree" in target and "twentytwentyone" not in target


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1] or 'none'}")
def test_condition_end_to_end(
    runs: dict[tuple[str, str | None], dict[str, Any]], case: tuple[str, str | None]
) -> None:
    run, baseline = runs[case], runs[("Src", None)]
    condition, regime = case
    types = Counter(str(event["type"]) for event in run["events"])
    assert types["page_served"] >= len(PAGES) + 2  # login form, its redirect target, the pages
    # No new console errors compared with the unshifted site.
    assert not set(run["errors"]) - set(baseline["errors"]), set(run["errors"]) - set(
        baseline["errors"]
    )
    # Every page has the same title as without shifts: the same content was served.
    assert [p["title"] for p in run["pages"].values()] == [
        p["title"] for p in baseline["pages"].values()
    ]
    served = [event for event in run["events"] if event["type"] == "page_served"]
    shifts_seen = {name for event in served for name in (event.get("shifts") or {})}
    if condition == "Src":
        assert shifts_seen == set() and types["popup_injected"] == 0
    if condition.endswith("Perc"):
        # The benchmark's perceptual shift: locator drift only, against the pages' own assets.
        assert shifts_seen - {"contextual"} == {"locator_drift"}
        drift = [e["shifts"]["locator_drift"] for e in served if e.get("kind") == "document"]
        assert drift and {note["assets"] for note in drift} == {"complete"}
        # The admin's scripts and stylesheets reference most of its markup: some admin pages
        # keep every locator; most navigations drift.
        drifted = [note["locators_changed"] > 0 for note in drift if note["interactive"]]
        assert sum(drifted) * 2 >= len(drifted), drift
    if condition.startswith("Tgt"):
        contextual = [e["shifts"]["contextual"] for e in served if "contextual" in e["shifts"]]
        assert contextual and {note["variant"] for note in contextual} == {"deployment"}
    if condition.endswith("Exec"):
        injected = types["popup_injected"]
        with_popup = sum(1 for event in served if "popup" in event["shifts"])
        assert injected == with_popup and types["popup_shown"] >= 1
        if regime == "once":
            assert injected == 1
        elif regime == "multiple":
            assert all(page["dialogs"] >= 1 for page in run["pages"].values()), run["pages"]
        else:
            draws = [event for event in run["events"] if event["type"] == "random_draw"]
            assert draws and injected == sum(bool(draw["fired"]) for draw in draws)


def test_alignment_of_real_pages_under_every_condition(
    wp_service: ServiceProcess, wordpress: dict[str, str]
) -> None:
    base = wordpress["WPLAB_URL"]
    for condition in ("Src-Perc", "Src-Exec", "Tgt", "Tgt-Perc"):
        config: dict[str, Any] = {"condition": condition, "seed": 3, "site": "wordpress"}
        if condition.startswith("Tgt"):
            config["targets"] = {base: wordpress["WPLAB_TARGET_URL"]}
        episode = wp_service.create_episode(**config)
        for path in ("/", "/?p=4", "/wp-login.php"):
            report = httpx.get(
                f"{wp_service.api}/episodes/{episode['id']}/check",
                params={"url": base + path},
                timeout=30,
            ).json()
            assert report["violations"] == [], (condition, path, report["violations"])
            if condition == "Tgt":  # the target deployment already links to the source URL
                assert report["shifts"]["contextual"]["variant"] == "deployment"
            else:
                assert report["changed"], (condition, path)


def test_short_calibration(
    wp_service: ServiceProcess, wordpress: dict[str, str], tmp_path: Any
) -> None:
    """Two reference skills (one that needs a session, one that does not) once under every
    condition column; `skillshift-proxy calibrate --runs 10` is the full table (every skill)."""
    out = tmp_path / "calibration.json"
    result = subprocess.run(
        [
            str(Path(sys.executable).with_name("skillshift-proxy")),
            "calibrate",
            "--runs",
            "1",
            "--api",
            wp_service.api,
            "--wordpress-env",
            wordpress["ENV_FILE"],
            "--json",
            str(out),
            "--skill",
            "log_in",
            "--skill",
            "add_category",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    table = json.loads(out.read_text())
    assert len(table["columns"]) == 10 and list(table["skills"]) == ["log_in", "add_category"]
    # The skills were recorded on Src: there they must work, or the library itself is broken.
    for skill, cells in table["skills"].items():
        assert cells["Src"]["success_rate"] == 1.0, (skill, cells["Src"])
    assert "success rate" in result.stdout and "all skills" in result.stdout
