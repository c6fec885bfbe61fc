"""Screens an app sends back as JSON with their markup inside (phpMyAdmin's), in Chromium
through a service process started for the test: drifted as its pages are, and still working."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.helpers.json_screens_app import DRAFT_RAW, add_json_screens_app
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import UpstreamServer

pytestmark = pytest.mark.browser


@pytest.fixture
def site() -> Iterator[UpstreamServer]:
    with UpstreamServer.serving("screens", add_json_screens_app) as server:
        yield server


def open_screen(browser: Browser, episode: dict[str, Any], url: str) -> dict[str, Any]:
    """Open the page, its Browse screen (a JSON answer), save a row, open the SQL screen; what
    the screens were."""
    context = browser.new_context(proxy=episode["proxy"])
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.get_by_role("link", name="Browse").click()
    page.wait_for_function("window.screenShown === 'browse'")
    page.get_by_role("button", name="Save").click()  # bound by the id the script names
    expect(page.get_by_text("saved row 1")).to_be_visible()
    edit = page.get_by_role("link", name="Edit")
    seen = {
        "locators": edit.evaluate("e => [e.id, e.className, e.dataset.testid || null]"),
        "color": edit.evaluate("e => getComputedStyle(e).color"),
        "raw": page.evaluate("window.draftRaw"),
    }
    # The SQL screen brings a script of its own, which looks up names only it knows.
    page.get_by_role("link", name="SQL").click()
    expect(page.get_by_text("sql ready")).to_be_visible()
    query = page.get_by_role("textbox", name="Query")
    seen["sql_form"] = query.evaluate("e => e.form.id")
    seen["sql_locators"] = [
        query.evaluate("e => [e.id, e.className]"),
        page.get_by_role("button", name="Go").evaluate("e => [e.id, e.className]"),
    ]
    # The Report screen is HTML that carries its own script.
    page.get_by_role("link", name="Report").click()
    expect(page.get_by_text("report ready")).to_be_visible()
    seen["report"] = [
        page.get_by_role("button", name="Refresh").evaluate("e => [e.id, e.className]"),
        page.get_by_role("link", name="CSV").evaluate("e => [e.id, e.className]"),
    ]
    seen["errors"] = errors
    context.close()
    return seen


def test_a_screen_that_comes_back_as_json_is_drifted_and_keeps_working(
    site: UpstreamServer, tmp_path: Path, browser: Browser
) -> None:
    service = ServiceProcess(tmp_path).start()  # a process that never saw the app
    url = f"{site.origin}/db"
    try:
        baseline = open_screen(browser, service.create_episode(condition="Src", seed=0), url)
        assert baseline["locators"] == ["edit-1", "edit-link", "edit-row-1"]
        assert baseline["color"] == "rgb(0, 128, 0)" and not baseline["errors"]
        assert baseline["sql_form"] == "sqlqueryform"
        drifted, sql_drifted, report_drifted = [], [], []
        for seed in range(4):
            episode = service.create_episode(condition="Src-Perc", seed=seed)
            seen = open_screen(browser, episode, url)
            # The link's id and class as served (its test hook is the client runtime's, as
            # on any element a script inserts).
            drifted.append(seen["locators"][:2] != baseline["locators"][:2])
            # The screen drifted as the stylesheet was rewritten, and what an editor saves
            # back is the upstream's, to the byte.
            assert seen["color"] == baseline["color"], seed
            assert seen["raw"] == DRAFT_RAW and not seen["errors"], seed
            answers = {
                event["url"].rsplit("/", 1)[1]: event
                for event in service.events(episode["id"])
                if event["type"] == "page_served" and "/ajax/" in event["url"]
            }
            browse, sql = answers["browse"], answers["sql"]
            assert browse["kind"] == "fragment" and browse["changed"] is True
            # (its title and the editor's source beside the screen went out as they came,
            # and the log says where they were)
            left = {"title": 1, "raw": 1}
            assert browse["markup_strings"] == {"found": 1, "changed": 1, "left": left}
            assert browse["shifts"]["locator_drift"]["locators_changed"] >= 1
            # The SQL screen names a script no page of the episode loaded: learnt (placed
            # beside the page's own, which it names too), so the drift keeps what it looks
            # up, and changes the rest.
            assert seen["sql_form"] == "sqlqueryform", seed
            assert "unknown_scripts" not in sql["markup_strings"], seed
            assert len(sql["knowledge"]["records"]) == 2, seed  # the page's, the screen's
            sql_drifted.append(seen["sql_locators"] != baseline["sql_locators"])
            # So is an HTML fragment that carries its own script.
            (report,) = [
                event
                for event in service.events(episode["id"])
                if event["type"] == "page_served" and event["url"].endswith("/part/report")
            ]
            assert "unknown_scripts" not in report
            # the page's, the SQL screen's (later fragments are shifted with it: 2 without
            # the change) and the one holding report-screen.js
            assert len(report["knowledge"]["records"]) == 3, seed
            report_drifted.append(seen["report"] != baseline["report"])
            # A screen whose script its upstream does not serve goes out as it came.
            headers = {"Sec-Fetch-Dest": "empty", "Referer": url}
            with service.client(episode) as client:
                export = client.get(f"{site.origin}/ajax/export", headers=headers)
            assert json.loads(export.text)["message"].startswith('<form id="export-form"')
            (told,) = [
                event
                for event in service.events(episode["id"])
                if event["type"] == "page_served" and event["url"].endswith("/ajax/export")
            ]
            assert told["markup_strings"]["unknown_scripts"] == ["export-screen.js"], seed
            with service.client(episode) as client:
                broken = client.get(f"{site.origin}/part/broken", headers=headers)
            assert broken.text == site.extra["/part/broken"][1].decode()
            (told,) = [
                event
                for event in service.events(episode["id"])
                if event["type"] == "page_served" and event["url"].endswith("/part/broken")
            ]
            assert told["unknown_scripts"] == [f"{site.origin}/js/missing.js?v=3"], seed
            # The report names the keys markup was left under, over every screen opened.
            report_url = f"{service.api}/episodes/{episode['id']}/report"
            perceptual = httpx.get(report_url, timeout=10).json()["perceptual"]
            assert set(perceptual["markup_left"]) == {"title", "raw"}, perceptual
            assert perceptual["markup_left"]["raw"] >= 3, perceptual  # (a string per screen)
        # (which seeds rename what is theirs: seeded coins)
        assert any(drifted) and any(sql_drifted) and any(report_drifted), (
            drifted,
            sql_drifted,
            report_drifted,
        )
    finally:
        service.stop()
