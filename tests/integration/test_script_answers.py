"""Screens an app sends back as JavaScript that inserts their markup (Redmine's), in Chromium
through a service process started for the test: drifted as its pages are, and still working."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.helpers.processes import ServiceProcess
from tests.helpers.script_screens_app import NOTE, add_script_screens_app
from tests.helpers.upstream import UpstreamServer

pytestmark = pytest.mark.browser


@pytest.fixture
def site() -> Iterator[UpstreamServer]:
    with UpstreamServer.serving("script-screens", add_script_screens_app) as server:
        yield server


def open_dialog(browser: Browser, episode: dict[str, Any], url: str) -> dict[str, Any]:
    """Open the page, its New member dialog (a script answer), watch and unwatch twice; what
    the dialog and the watch link were."""
    context = browser.new_context(proxy=episode["proxy"])
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.get_by_role("link", name="New member").click()
    search = page.get_by_role("textbox", name="Search for user:")
    expect(search).to_be_visible()
    seen = {
        "value": search.input_value(),  # filled by the answer, by the id it names
        "locators": [
            search.evaluate("e => [e.id, e.className, e.form.id]"),
            page.get_by_role("button", name="Add").evaluate("e => [e.id, e.className]"),
        ],
        "title_color": page.get_by_role("heading", name="New member").evaluate(
            "e => getComputedStyle(e).color"
        ),
        "note": page.locator("pre").evaluate("e => e.textContent"),
    }
    watch_classes = []
    for label, then in [("Watch", "Unwatch"), ("Unwatch", "Watch")] * 2:
        page.get_by_role("link", name=label, exact=True).click()
        link = page.get_by_role("link", name=then, exact=True)
        expect(link).to_be_visible()
        watch_classes.append(link.evaluate("e => e.className"))
    seen["watch_classes"] = watch_classes
    seen["errors"] = errors
    context.close()
    return seen


def test_a_screen_that_comes_back_as_a_script_is_drifted_and_keeps_working(
    site: UpstreamServer, tmp_path: Path, browser: Browser
) -> None:
    service = ServiceProcess(tmp_path).start()  # a process that never saw the app
    url = f"{site.origin}/issues/2"
    try:
        baseline = open_dialog(browser, service.create_episode(condition="Src", seed=0), url)
        assert baseline["value"] == "found" and baseline["note"] == NOTE
        assert baseline["locators"][0] == ["principal_search", "autocomplete", "new_membership"]
        assert baseline["title_color"] == "rgb(0, 128, 0)" and not baseline["errors"]
        drifted = []
        for seed in range(4):
            episode = service.create_episode(condition="Src-Perc", seed=seed)
            seen = open_dialog(browser, episode, url)
            # The answer found what it names, whatever the drift named it; the text as it was
            # written, escapes and all; the title coloured as the stylesheet was rewritten.
            assert seen["value"] == "found" and seen["note"] == NOTE, seed
            assert seen["title_color"] == baseline["title_color"] and not seen["errors"], seed
            drifted.append(seen["locators"] != baseline["locators"])
            # The watch link the answers put in is drifted as the page's: the next answer,
            # whose selector finds either, replaces it again.
            classes = seen["watch_classes"]
            assert len(set(classes[0::2])) == 1 and len(set(classes[1::2])) == 1, seed
            events = service.events(episode["id"])
            answers = [e for e in events if e["type"] == "script_answer"]
            assert len(answers) == 5, seed
            (dialog,) = [e for e in answers if e["url"].endswith("/members/new")]
            assert dialog["markup_strings"]["found"] == 1, seed
            assert dialog["selectors_widened"] == 3, seed
            (served,) = [
                e
                for e in events
                if e["type"] == "page_served" and e["url"].endswith("/members/new")
            ]
            assert served["kind"] == "fragment", seed
        assert sum(drifted) >= 3, drifted
    finally:
        service.stop()
