"""Recording, replay and attribution on the lab WordPress in a real Chromium, the service on a
real redis-server with a record directory."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.helpers.processes import RedisProcess, ServiceProcess

pytestmark = pytest.mark.browser
PAGES = ("/", "/?p=4", "/wp-login.php")
# The document as the browser holds it: what a replay must reproduce, load by load.
DOM = "() => document.documentElement.outerHTML"


@pytest.fixture(scope="module")
def recording_service(
    tmp_path_factory: pytest.TempPathFactory, redis_server: RedisProcess
) -> Iterator[ServiceProcess]:
    workdir = tmp_path_factory.mktemp("recording-service")
    process = ServiceProcess(
        workdir,
        "--redis-url",
        redis_server.url,
        "--key-prefix",
        f"rec{uuid.uuid4().hex[:6]}:",
        "--record-dir",
        str(workdir / "recordings"),
    ).start()
    process.record_dir = workdir / "recordings"  # type: ignore[attr-defined]
    yield process
    process.stop()


def api(service: ServiceProcess, method: str, path: str, **kwargs: Any) -> Any:
    response = httpx.request(method, f"{service.api}{path}", timeout=10, **kwargs)
    assert response.status_code < 300, response.text
    return response.json() if response.content else None


def page_map(service: ServiceProcess, episode_id: str) -> dict[int, dict[str, Any]]:
    return {p["load"]: p for p in api(service, "GET", f"/episodes/{episode_id}/pages")["pages"]}


def wait_for_pages(service: ServiceProcess, episode_id: str, count: int) -> dict[int, Any]:
    deadline = time.monotonic() + 10
    while True:
        pages = page_map(service, episode_id)
        if len(pages) >= count or time.monotonic() > deadline:
            return pages
        time.sleep(0.05)


def visit(page: Page, url: str, has_popup: Callable[[], bool]) -> str:
    """Open a page and return its document once its runtime has settled: with its popup up
    when the recording says the load has one."""
    page.goto(url)
    page.wait_for_load_state("load")
    if has_popup():
        page.get_by_role("dialog").wait_for(state="visible", timeout=10000)
    return str(page.evaluate(DOM))


def documents(
    browser: Browser, episode: dict[str, Any], urls: list[str], has_popup: Callable[[int], bool]
) -> list[str]:
    """Each URL in a new tab of one context bound to the episode: the documents it got."""
    context = browser.new_context(proxy=episode["proxy"], viewport={"width": 1280, "height": 900})
    try:
        found = []
        for load, url in enumerate(urls, start=1):
            tab = context.new_page()
            found.append(visit(tab, url, lambda load=load: has_popup(load)))  # type: ignore[misc]
            tab.close()
        return found
    finally:
        context.close()


def browse(
    browser: Browser, service: ServiceProcess, episode: dict[str, Any], urls: list[str]
) -> tuple[list[str], dict[int, Any]]:
    """The documents of an agent's run, and the recording's pages."""
    episode_id = str(episode["id"])

    def has_popup(load: int) -> bool:
        return wait_for_pages(service, episode_id, load)[load]["popup"] is not None

    return documents(browser, episode, urls, has_popup), page_map(service, episode_id)


def first_difference(one: str, other: str) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b),
        min(len(one), len(other)),
    )
    return f"at {at}: {one[max(0, at - 80) : at + 80]!r} vs {other[max(0, at - 80) : at + 80]!r}"


def sql(wordpress: dict[str, str], statement: str) -> str:
    return subprocess.run(
        ["mariadb", f"--socket={wordpress['WPLAB_DB_SOCKET']}", "wplab", "-N", "-e", statement],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.mark.parametrize(
    "config",
    [
        {"condition": "Src-Exec", "regime": "multiple", "regime_params": {"p": 1.0, "max_ms": 200}},
        {"condition": "Src-Perc"},
    ],
    ids=["Src-Exec-multiple", "Src-Perc"],
)
def test_a_replay_shows_what_the_agent_saw_after_the_site_changed(
    browser: Browser,
    recording_service: ServiceProcess,
    wordpress: dict[str, str],
    config: dict[str, Any],
) -> None:
    base = wordpress["WPLAB_URL"]
    urls = [base + path for path in PAGES]
    episode = recording_service.create_episode(**config, site="wordpress", seed=3, record="all")
    originals, pages = browse(browser, recording_service, episode, urls)
    assert sorted(pages) == [1, 2, 3]
    if config["condition"] == "Src-Exec":
        assert all(p["popup"] is not None for p in pages.values())
    else:
        assert sum(p["elements_changed"] for p in pages.values()) > 0

    title = sql(wordpress, "SELECT post_title FROM wp_posts WHERE ID=4")
    sql(wordpress, "UPDATE wp_posts SET post_title='Changed since the run' WHERE ID=4")
    try:
        assert "Changed since the run" in httpx.get(urls[1], timeout=10, follow_redirects=True).text
        replay = recording_service.create_episode(replay_of=episode["id"])
        replayed = documents(browser, replay, urls, lambda load: pages[load]["popup"] is not None)
    finally:
        sql(wordpress, f"UPDATE wp_posts SET post_title={json.dumps(title)} WHERE ID=4")
    for load, (original, again) in enumerate(zip(originals, replayed, strict=True), start=1):
        assert again == original, (
            f"load {load} differs in the replay: {first_difference(original, again)}"
        )
    assert "Changed since the run" not in replayed[1]
    # The popups came at the same loads, reported by the replayed pages' own runtime.
    if config["condition"] == "Src-Exec":
        shown = recording_service.wait_for_events(str(replay["id"]), {"popup_shown"})
        assert sorted({e["load"] for e in shown if e["type"] == "popup_shown"}) == [1, 2, 3]
    served = [e for e in recording_service.events(str(replay["id"])) if e["type"] == "page_served"]
    assert [e["replayed_load"] for e in served] == [1, 2, 3]


def test_a_replay_answers_only_from_the_recording(
    browser: Browser, recording_service: ServiceProcess, wordpress: dict[str, str]
) -> None:
    base = wordpress["WPLAB_URL"]
    episode = recording_service.create_episode(condition="Src", site="wordpress", record="pages")
    browse(browser, recording_service, episode, [base + "/"])
    replay = recording_service.create_episode(replay_of=episode["id"])
    with recording_service.client(replay) as client:
        missing = client.get(base + "/?p=4", headers={"Sec-Fetch-Dest": "document"})
    assert missing.status_code == 404 and "not in the recording" in missing.text
    misses = recording_service.wait_for_events(str(replay["id"]), {"replay_miss"})
    assert any(e["type"] == "replay_miss" and e["url"] == base + "/?p=4" for e in misses)
    # A page recorded without its subresources (`record: "pages"`) replays its document.
    with recording_service.client(replay) as client:
        again = client.get(base + "/", headers={"Sec-Fetch-Dest": "document"})
    assert again.status_code == 200 and "wp-" in again.text


def test_failures_are_attributed_to_the_shift_that_caused_them(
    browser: Browser, recording_service: ServiceProcess, wordpress: dict[str, str]
) -> None:
    base = wordpress["WPLAB_URL"]
    drifted = recording_service.create_episode(condition="Src-Perc", site="wordpress", seed=2)
    _, pages = browse(browser, recording_service, drifted, [base + "/wp-login.php"])
    changes = api(recording_service, "GET", f"/episodes/{drifted['id']}/pages/1")["elements"]
    renamed = next(
        c for c in changes if c["before"]["id"] and c["before"]["id"] != c["after"]["id"]
    )
    moved = next(c for c in changes if c["before"]["path"] != c["after"]["path"])

    def failure(episode: dict[str, Any], target: str) -> dict[str, Any]:
        body = {"type": "skill_failure", "skill": "log_in", "target": target}
        return dict(api(recording_service, "POST", f"/episodes/{episode['id']}/events", json=body))

    by_id = failure(drifted, f"#{renamed['before']['id']}")["attribution"]
    assert by_id["shift"] == "perceptual" and by_id["load"] == 1, by_id
    by_path = failure(drifted, f"xpath={moved['before']['path']}")["attribution"]
    assert by_path["shift"] == "perceptual", by_path
    # Labels stay under the benchmark's shift: a target by role and name is not drifted.
    by_role = failure(drifted, 'role=button[name="Log In"]')["attribution"]
    assert by_role["shift"] == "unattributed", by_role

    blocked = recording_service.create_episode(
        condition="Src-Exec", site="wordpress", regime="once", regime_params={"max_ms": 0}
    )
    context = browser.new_context(proxy=blocked["proxy"])
    try:
        tab = context.new_page()
        tab.goto(base + "/wp-login.php")
        tab.get_by_role("dialog").wait_for(state="visible", timeout=10000)
        recording_service.wait_for_events(str(blocked["id"]), {"popup_shown"})
        under_popup = failure(blocked, 'role=button[name="Log In"]')["attribution"]
        assert under_popup["shift"] == "execution", under_popup
        tab.keyboard.press("Escape")
        tab.get_by_role("dialog").wait_for(state="detached", timeout=10000)
        recording_service.wait_for_events(str(blocked["id"]), {"popup_dismissed"})
        after = failure(blocked, 'role=button[name="Log In"]')["attribution"]
        assert after["shift"] == "unattributed", after
    finally:
        context.close()
    report = api(
        recording_service,
        "GET",
        "/reports",
        params={"group_by": "condition"},
    )
    rows = {row["condition"]: row for row in report["rows"]}
    assert rows["Src-Perc"]["skill_failures"] >= 3 and rows["Src-Exec"]["skill_failures"] >= 2


def test_an_expired_episode_keeps_its_events_report_and_recording(
    browser: Browser, recording_service: ServiceProcess, wordpress: dict[str, str]
) -> None:
    run = uuid.uuid4().hex[:8]
    episode = recording_service.create_episode(
        condition="Src-Perc", site="wordpress", ttl_s=10, tags={"run": run}
    )
    browse(browser, recording_service, episode, [wordpress["WPLAB_URL"] + "/"])
    api(
        recording_service,
        "POST",
        f"/episodes/{episode['id']}/events",
        json={"type": "task_result", "success": True, "steps": 3},
    )
    deadline = time.monotonic() + 60
    while not api(recording_service, "GET", f"/episodes/{episode['id']}")["archived"]:
        assert time.monotonic() < deadline, "Redis did not expire the episode"
        time.sleep(0.2)
    # The proxy no longer knows it: a browser with its credentials is refused.
    with recording_service.client(episode) as client:
        assert client.get(wordpress["WPLAB_URL"] + "/").status_code == 407
    rows = api(recording_service, "GET", "/reports", params={"tag": f"run={run}"})["rows"]
    assert rows == [pytest.approx(rows[0])] and rows[0]["SR"] == 1.0 and rows[0]["AS"] == 3.0
    types = [
        e["type"]
        for e in api(recording_service, "GET", f"/episodes/{episode['id']}/events")["events"]
    ]
    assert types[0] == "episode_created" and "page_served" in types and types[-1] == "task_result"
    har = api(recording_service, "GET", f"/episodes/{episode['id']}/har")
    assert har["log"]["version"] == "1.2"
    # The page first, then what it loaded (every response is recorded by default).
    urls = [e["request"]["url"] for e in har["log"]["entries"]]
    assert urls[0] == wordpress["WPLAB_URL"] + "/" and len(urls) > 1
    assert [p["title"] for p in har["log"]["pages"]] == [wordpress["WPLAB_URL"] + "/"]


def test_playwright_replays_the_har(
    browser: Browser, recording_service: ServiceProcess, wordpress: dict[str, str], tmp_path: Path
) -> None:
    """The HAR is one Playwright itself reads (`route_from_har`): the page it serves from it is
    the page the agent was served."""
    url = wordpress["WPLAB_URL"] + "/?p=4"
    episode = recording_service.create_episode(condition="Src-Perc", site="wordpress", record="all")
    browse(browser, recording_service, episode, [url])
    har_path = tmp_path / "episode.har"
    har_path.write_text(httpx.get(f"{recording_service.api}/episodes/{episode['id']}/har").text)
    served = httpx.get(f"{recording_service.api}/episodes/{episode['id']}/pages/1/served").text
    context = browser.new_context()
    try:
        context.route_from_har(str(har_path), not_found="abort")
        tab = context.new_page()
        response = tab.goto(url)
        assert response is not None and response.text() == served
    finally:
        context.close()


def test_the_admin_page_steps_through_recorded_pages_side_by_side(
    browser: Browser, recording_service: ServiceProcess, wordpress: dict[str, str]
) -> None:
    base = wordpress["WPLAB_URL"]
    episode = recording_service.create_episode(condition="Src-Perc", site="wordpress", seed=4)
    _, pages = browse(browser, recording_service, episode, [base + "/", base + "/wp-login.php"])
    changed = {load: page["elements_changed"] for load, page in pages.items()}
    assert changed[2] > 0
    context = browser.new_context()
    try:
        admin = context.new_page()
        admin.goto(f"{recording_service.api}/ui")
        admin.get_by_role("button", name=f"Pages of {episode['id']}").click()
        summary = admin.locator("#pages-summary")
        expect(summary).to_contain_text(f"load 1: {base}/")
        admin.get_by_role("button", name="Next load").click()
        expect(summary).to_contain_text(f"{changed[2]} elements changed")
        expect(admin.locator("#pages-changes tbody tr")).to_have_count(changed[2])
        served = admin.frame_locator("#pages-served")
        source = admin.frame_locator("#pages-source")
        # The same elements are outlined on both sides: where they were, and where they are.
        expect(served.locator("[data-changed]")).to_have_count(changed[2])
        expect(source.locator("[data-changed]")).to_have_count(changed[2])
        expect(served.get_by_role("button", name="Log In")).to_be_visible()
        # The recorded page renders, but none of its scripts runs in the admin page.
        assert served.locator("body").evaluate("() => typeof window.wp") == "undefined"
    finally:
        context.close()
