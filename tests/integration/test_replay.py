"""A replay in a real Chromium: a page that reads the clock and draws random numbers shows the
recorded time and the same draws on every replay, and the exported HAR replays a code-split app
in Playwright's own HAR router (the service with a record directory)."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.helpers.chunked_app import add_chunked_app
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import UpstreamServer

pytestmark = pytest.mark.browser

# What the page's own script saw, written into the page once it ran.
READS = (
    "document.getElementById('out').textContent = JSON.stringify({"
    "iso: new Date().toISOString(), now: Date.now(), random: [Math.random(), Math.random()],"
    " bytes: Array.from(crypto.getRandomValues(new Uint8Array(8))), uuid: crypto.randomUUID(),"
    " scripts: document.scripts.length});"
)
# Allowed by its hash alone: the replay must add a nonce for the script it puts first.
POLICY = f"script-src 'sha256-{base64.b64encode(hashlib.sha256(READS.encode()).digest()).decode()}'"
PAGE = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Clock</title></head>'
    f'<body><p id="out"></p><script>{READS}</script></body></html>'
)
# The recording's time for the page, moved far from now: a replay that showed the current time
# could not pass for it, however slow the machine.
RECORDED = "2001-02-03T04:05:06.789000+00:00"


@pytest.fixture(scope="module")
def recording_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    workdir = tmp_path_factory.mktemp("replay-service")
    process = ServiceProcess(workdir, "--record-dir", str(workdir / "recordings")).start()
    process.record_dir = workdir / "recordings"  # type: ignore[attr-defined]
    yield process
    process.stop()


@pytest.fixture(scope="module")
def clock_page() -> Iterator[str]:
    server = UpstreamServer("clock").start()
    server.extra["/clock"] = ("text/html; charset=utf-8", PAGE.encode())
    server.extra_headers["/clock"] = {"Content-Security-Policy": POLICY}
    yield f"{server.origin}/clock"
    server.stop()


def what_the_page_saw(browser: Browser, episode: dict[str, Any], url: str) -> dict[str, Any]:
    context = browser.new_context(proxy=episode["proxy"])
    try:
        tab = context.new_page()
        refused: list[str] = []
        tab.on("console", lambda m: refused.append(m.text) if "Refused" in m.text else None)
        tab.on("pageerror", lambda error: refused.append(str(error)))
        tab.goto(url)
        tab.wait_for_function("document.getElementById('out').textContent !== ''")
        assert refused == []  # no script refused by the page's policy, none failed
        seen: dict[str, Any] = json.loads(tab.inner_text("#out"))
        # The document apart from what the script wrote into it.
        seen["document"] = tab.evaluate(
            "() => { const copy = document.documentElement.cloneNode(true);"
            " copy.querySelector('#out').textContent = ''; return copy.outerHTML; }"
        )
        return seen
    finally:
        context.close()


def recorded_entries(service: ServiceProcess, episode_id: str) -> Any:
    """The episode's recorded entries, once the page is among them (writes are queued)."""
    deadline = time.monotonic() + 10
    while True:
        har = httpx.get(f"{service.api}/episodes/{episode_id}/har", timeout=5).json()
        if har["log"]["entries"] or time.monotonic() > deadline:
            return har["log"]["entries"]
        time.sleep(0.05)


def move_recording_to(service: ServiceProcess, episode_id: str, started: str) -> None:
    entries_file = service.record_dir / "episodes" / episode_id / "entries.jsonl"  # type: ignore[attr-defined]
    entries = [json.loads(line) for line in entries_file.read_text().splitlines()]
    for entry in entries:
        entry["startedDateTime"] = started
    entries_file.write_text("".join(json.dumps(entry) + "\n" for entry in entries))


def test_a_replayed_page_reads_the_recorded_time_and_the_same_random_numbers(
    browser: Browser, recording_service: ServiceProcess, clock_page: str
) -> None:
    # The page alone (not its favicon): the test moves its entries' time.
    agent = recording_service.create_episode(condition="Src", seed=11, record="pages")
    live = what_the_page_saw(browser, agent, clock_page)
    assert len(recorded_entries(recording_service, str(agent["id"]))) == 1
    move_recording_to(recording_service, str(agent["id"]), RECORDED)
    recorded_ms = int(datetime.fromisoformat(RECORDED).timestamp() * 1000)

    replays = [
        what_the_page_saw(
            browser, recording_service.create_episode(replay_of=agent["id"]), clock_page
        )
        for _ in range(2)
    ]
    first, second = replays
    for seen in replays:
        assert seen["iso"].startswith("2001-02-03T"), seen["iso"]
        assert seen["now"] >= recorded_ms  # starts at the recorded time, and goes on from it
        # The script went first and took itself out: the document is the one recorded.
        assert seen["scripts"] == 1 and seen["document"] == live["document"]
    for draw in ("random", "bytes", "uuid"):
        assert first[draw] == second[draw], draw
        assert first[draw] != live[draw], draw
    assert len(set(first["random"])) == 2 and first["uuid"][14] == "4"  # draws, not a constant
    assert live["iso"] > "2020"


def test_a_replay_that_opts_out_serves_the_page_as_recorded(
    browser: Browser, recording_service: ServiceProcess, clock_page: str
) -> None:
    agent = recording_service.create_episode(condition="Src", record="pages")
    what_the_page_saw(browser, agent, clock_page)
    recorded_entries(recording_service, str(agent["id"]))
    move_recording_to(recording_service, str(agent["id"]), RECORDED)
    replay = recording_service.create_episode(replay_of=agent["id"], replay_deterministic=False)
    seen = what_the_page_saw(browser, replay, clock_page)
    assert seen["iso"] > "2020"


def har_with(service: ServiceProcess, episode_id: str, path: str) -> dict[str, Any]:
    """The episode's HAR once an entry for `path` is in it (writes are queued)."""
    deadline = time.monotonic() + 10
    while True:
        har: dict[str, Any] = httpx.get(
            f"{service.api}/episodes/{episode_id}/har", timeout=5
        ).json()
        urls = [entry["request"]["url"] for entry in har["log"]["entries"]]
        if any(url.endswith(path) for url in urls) or time.monotonic() > deadline:
            return har
        time.sleep(0.05)


def run_the_chunked_app(tab: Page, url: str) -> dict[str, Any]:
    """Load the app, click for its on-demand chunk, and say what ran and how it looks."""
    tab.goto(url)
    tab.wait_for_function("window.lateFound === true")
    tab.click("#load-more")
    tab.wait_for_function("window.chunkFound === true")
    return dict(
        tab.evaluate(
            "() => ({status: document.getElementById('status').textContent,"
            " badge: getComputedStyle(document.querySelector('.badge')).color,"
            " button: getComputedStyle(document.getElementById('load-more')).color})"
        )
    )


def test_the_exported_har_replays_a_code_split_page_in_playwright_with_the_upstream_gone(
    browser: Browser, recording_service: ServiceProcess, tmp_path: Path
) -> None:
    server = UpstreamServer("chunked").start()
    try:
        url = add_chunked_app(server)
        agent = recording_service.create_episode(condition="Src")  # records every response
        context = browser.new_context(proxy=agent["proxy"])
        seen = run_the_chunked_app(context.new_page(), url)
        context.close()
        har = har_with(recording_service, str(agent["id"]), "/chunk-a1.js")
    finally:
        server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, timeout=2)  # the app is gone: whatever loads now comes from the HAR
    assert seen == {"status": "chunk ran", "badge": "rgb(0, 128, 0)", "button": "rgb(255, 0, 0)"}
    path = tmp_path / "run.har"
    path.write_text(json.dumps(har))
    context = browser.new_context()
    try:
        context.route_from_har(path, not_found="abort")
        tab = context.new_page()
        failed: list[str] = []
        tab.on("requestfailed", lambda request: failed.append(request.url))
        # The document, its stylesheet and the one it imports, its module script, the module
        # it builds at run time, and the chunk the click asks for.
        assert run_the_chunked_app(tab, url) == seen
        assert [f for f in failed if f.startswith(server.origin)] == []
    finally:
        context.close()
