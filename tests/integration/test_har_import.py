"""HARs replayed by the service, in a real Chromium with the app stopped: one Playwright wrote
(imported with the command line), the service's own export brought back under its labels, and
`skillshift-proxy replay ID --open` showing a recording in a browser through the desktop
listener. HARs it cannot replay are refused, naming the entry."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext

from tests.helpers.ports import free_port
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import UpstreamServer

pytestmark = pytest.mark.browser
SKILLSHIFT = str(Path(sys.executable).with_name("skillshift-proxy"))

# Two POSTs to one URL with bodies of different lengths: the upstream answers each with its
# length, so a replay that matched on the URL alone would show one answer twice.
APP = b"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Imported</title>
<link rel="stylesheet" href="/app.css"></head><body><h1 id="title">Orders</h1>
<nav><a class="nav-link" id="orders-link" href="/app">Orders</a>
<button type="button" class="btn btn-primary" id="refresh">Refresh</button></nav>
<p id="first"></p><p id="second"></p>
<script>
const post = (body) => fetch("/submit", {method: "POST", headers: {"Content-Type":
  "application/json"}, body: JSON.stringify(body)}).then((r) => r.text())
  .then((t) => new DOMParser().parseFromString(t, "text/html").querySelector("pre").textContent);
(async () => {
  document.getElementById("first").textContent = await post({order: 1});
  document.getElementById("second").textContent = await post({order: 2, note: "a longer one"});
  document.body.dataset.done = "yes";
})();
</script></body></html>"""
STYLE = b"h1 { color: rgb(0, 128, 0); }"
# The "desktop browser" of `replay --open`: a headless Chromium that prints the page's DOM once
# loaded and exits, as a user closing the window would.
DUMPING_BROWSER = (
    "/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
    "--disable-component-update --disable-sync --dump-dom"
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    workdir = tmp_path_factory.mktemp("har-import")
    desktop = free_port()
    process = ServiceProcess(
        workdir,
        "--record-dir",
        str(workdir / "recordings"),
        "--desktop-proxy",
        f"127.0.0.1:{desktop}",
    ).start()
    process.desktop_port = desktop
    process.record_dir = workdir / "recordings"  # type: ignore[attr-defined]
    yield process
    process.stop()


def app_server() -> UpstreamServer:
    server = UpstreamServer("har-app").start()
    server.extra["/app"] = ("text/html; charset=utf-8", APP)
    server.extra["/app.css"] = ("text/css", STYLE)
    return server


def what_it_shows(context: BrowserContext, url: str) -> dict[str, Any]:
    tab = context.new_page()
    tab.goto(url)
    tab.wait_for_selector("body[data-done=yes]")
    return dict(
        tab.evaluate(
            "() => ({first: document.getElementById('first').textContent,"
            " second: document.getElementById('second').textContent,"
            " color: getComputedStyle(document.getElementById('title')).color,"
            " document: document.documentElement.outerHTML})"
        )
    )


def misses(service: ServiceProcess, episode_id: str) -> list[tuple[str, str]]:
    return [
        (str(e["type"]), str(e["url"]))
        for e in service.events(episode_id)
        if e["type"] in ("replay_miss", "replay_error")
    ]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SKILLSHIFT, *args], capture_output=True, text=True, timeout=120)


def test_a_har_playwright_wrote_replays_with_the_app_gone(
    browser: Browser, service: ServiceProcess, tmp_path: Path
) -> None:
    server = app_server()
    har_path = tmp_path / "playwright.har"
    try:
        recording = browser.new_context(record_har_path=str(har_path))
        seen = what_it_shows(recording, f"{server.origin}/app")
        recording.close()  # Playwright writes the HAR on close
    finally:
        server.stop()
    assert seen["first"] == "11 bytes" and seen["second"] == "33 bytes"
    assert seen["color"] == "rgb(0, 128, 0)"

    imported = cli("episodes", "import", str(har_path), "--api-url", service.api)
    assert imported.returncode == 0, imported.stderr
    assert "1 page loads" in imported.stdout and "written by Playwright" in imported.stdout
    episode_id = imported.stdout.split()[1].rstrip(":")
    archived = httpx.get(f"{service.api}/episodes/{episode_id}", timeout=5).json()
    assert archived["tags"] == {"imported": "playwright.har"} and archived["internal"] is True
    # The replay the import suggests, shown in a "desktop browser" that prints the DOM.
    shown = cli(
        "replay", episode_id, "--open", "--browser", DUMPING_BROWSER, "--api-url", service.api
    )
    assert shown.returncode == 0, shown.stderr
    assert '<h1 id="title">Orders</h1>' in shown.stdout

    # The document, its stylesheet and each POST's own answer, all from the HAR.
    replays_as_seen(browser, service, episode_id, f"{server.origin}/app", seen)


def test_a_redirect_playwright_recorded_replays(
    browser: Browser, service: ServiceProcess, tmp_path: Path
) -> None:
    """Playwright writes a redirect's body as size -1 with no text (Chromium never hands it
    over): the replay answers the redirect, and the browser lands on the recorded page."""
    server = app_server()
    server.redirects["/orders"] = f"{server.origin}/app"
    har_path = tmp_path / "redirect.har"
    try:
        recording = browser.new_context(record_har_path=str(har_path))
        seen = what_it_shows(recording, f"{server.origin}/orders")
        recording.close()
    finally:
        server.stop()
    (redirect,) = [
        e
        for e in json.loads(har_path.read_text())["log"]["entries"]
        if e["response"]["status"] == 302
    ]
    assert redirect["response"]["content"]["size"] == -1
    assert "text" not in redirect["response"]["content"]

    imported = cli("episodes", "import", str(har_path), "--api-url", service.api)
    assert imported.returncode == 0, imported.stderr
    episode_id = imported.stdout.split()[1].rstrip(":")
    replays_as_seen(browser, service, episode_id, f"{server.origin}/orders", seen)


def replays_as_seen(
    browser: Browser, service: ServiceProcess, episode_id: str, url: str, seen: object
) -> None:
    """A replay of the imported episode shows at `url` what the recording browser saw."""
    replay = service.create_episode(replay_of=episode_id)
    context = browser.new_context(proxy=replay["proxy"])
    try:
        assert what_it_shows(context, url) == seen
    finally:
        context.close()
    # Playwright's HAR leaves out the browser's own favicon request (it belongs to no page),
    # so the replay answers it with a miss, as it should: the HAR holds no answer to it.
    origin = url[: url.index("/", len("http://"))]
    favicon = [("replay_miss", f"{origin}/favicon.ico")]
    assert misses(service, str(replay["id"])) in ([], favicon)


def test_the_services_own_export_comes_back_under_its_labels(
    browser: Browser, service: ServiceProcess
) -> None:
    server = app_server()
    try:
        agent = service.create_episode(condition="Src-Perc", seed=4)
        context = browser.new_context(proxy=agent["proxy"])
        seen = what_it_shows(context, f"{server.origin}/app")
        context.close()
        har = httpx.get(f"{service.api}/episodes/{agent['id']}/har", timeout=10).json()
    finally:
        server.stop()
    assert har["log"]["_skillshift"]["episode"]["condition"] == "Src-Perc"
    assert "token" not in har["log"]["_skillshift"]["episode"]

    answer = httpx.post(
        f"{service.api}/episodes/import", params={"name": "run.har"}, json=har, timeout=10
    )
    assert answer.status_code == 201, answer.text
    imported = answer.json()
    assert imported["pages"] == 1 and imported["skipped"] == []
    archived = httpx.get(f"{service.api}/episodes/{imported['id']}", timeout=5).json()
    assert (archived["condition"], archived["seed"]) == ("Src-Perc", 4)
    shifted = httpx.get(f"{service.api}/episodes/{imported['id']}/pages", timeout=5).json()
    assert shifted["pages"][0]["shifts"]["locator_drift"]["locators_changed"] > 0

    replay = service.create_episode(replay_of=imported["id"])
    context = browser.new_context(proxy=replay["proxy"])
    try:
        assert what_it_shows(context, f"{server.origin}/app") == seen  # the shifted page
    finally:
        context.close()
    assert misses(service, str(replay["id"])) == []
    again = httpx.post(
        f"{service.api}/episodes/import", params={"id": imported["id"]}, json=har, timeout=10
    )
    assert again.status_code == 409 and imported["id"] in again.json()["error"]


def test_the_services_own_export_of_a_big_page_comes_back(
    service: ServiceProcess, tmp_path: Path
) -> None:
    """A HAR over the 256 KB the API takes in other request bodies: exported, imported with
    the command line and replayed with the page's bytes, the app gone."""
    rows = b"<p>An order of the year, and its lines.</p>" * 12_000
    big_page = b"<!DOCTYPE html><html><body><h1>Orders</h1>" + rows + b"</body></html>"
    server = app_server()
    server.extra["/big"] = ("text/html; charset=utf-8", big_page)
    try:
        agent = service.create_episode(condition="Src")
        with service.client(agent) as client:
            assert client.get(f"{server.origin}/big").content == big_page
    finally:
        server.stop()
    har_path = tmp_path / "big.har"
    exported = cli(
        "episodes",
        "export",
        str(agent["id"]),
        "--har",
        "-o",
        str(har_path),
        "--api-url",
        service.api,
    )
    assert exported.returncode == 0, exported.stderr
    assert har_path.stat().st_size > 256 * 1024

    imported = cli("episodes", "import", str(har_path), "--api-url", service.api)
    assert imported.returncode == 0, imported.stderr
    assert "1 page loads" in imported.stdout
    replay = service.create_episode(
        replay_of=imported.stdout.split()[1].rstrip(":"), replay_deterministic=False
    )
    with service.client(replay) as client:
        assert client.get(f"{server.origin}/big").content == big_page  # the recorded bytes


def recorded_load(service: ServiceProcess) -> str:
    """An episode that loaded the app's page once, the app gone since: its id."""
    server = app_server()
    try:
        agent = service.create_episode(condition="Src")
        with service.client(agent) as client:
            assert client.get(f"{server.origin}/app").status_code == 200
    finally:
        server.stop()
    return str(agent["id"])


def desktop_defaults(service: ServiceProcess) -> list[object]:
    """The default episode of each desktop listener (None: unbound)."""
    listeners = httpx.get(f"{service.api}/listeners", timeout=5).json()["listeners"]
    return [listener["default_episode"] for listener in listeners if listener["kind"] == "desktop"]


def test_replay_opens_a_recording_in_a_browser_through_the_desktop_listener(
    service: ServiceProcess,
) -> None:
    agent_id = recorded_load(service)
    shown = cli(
        "replay", agent_id, "--open", "--browser", DUMPING_BROWSER, "--api-url", service.api
    )
    assert shown.returncode == 0, shown.stderr
    assert '<h1 id="title">Orders</h1>' in shown.stdout  # the recorded page, the app being gone
    assert f"listener {service.desktop_port} unbound" in shown.stdout
    replay_id = shown.stdout.split()[2]
    served = [e for e in service.events(replay_id) if e["type"] == "page_served"]
    assert [e["replayed_load"] for e in served] == [1]
    assert desktop_defaults(service) == [None]


def test_replay_without_a_browser_prints_a_command_that_unbinds_the_listener(
    service: ServiceProcess,
) -> None:
    shown = cli("replay", recorded_load(service), "--api-url", service.api)
    assert shown.returncode == 0, shown.stderr
    (unbind,) = [line for line in shown.stdout.splitlines() if line.startswith("unbind when")]
    command = unbind.removeprefix("unbind when done: ")
    assert subprocess.run(command, shell=True, capture_output=True, timeout=30).returncode == 0
    assert desktop_defaults(service) == [None]


def test_what_cannot_be_imported_or_opened_is_said(service: ServiceProcess, tmp_path: Path) -> None:
    def imported(body: bytes, name: str = "bad.har") -> httpx.Response:
        return httpx.post(
            f"{service.api}/episodes/import", params={"name": name}, content=body, timeout=10
        )

    cases = {
        b"{not json": "bad.har: not JSON",
        b'{"log": {"entries": {}}}': "bad.har: not a HAR",
        json.dumps({"log": {"entries": [{"request": {"url": "http://a/"}}]}}).encode(): (
            "bad.har: entry 1: it needs a request and a response object"
        ),
        json.dumps(
            {"log": {"entries": []}}
        ).encode(): "bad.har: none of its 0 entries is a page load",
    }
    for body, message in cases.items():
        answer = imported(body)
        assert answer.status_code == 422 and answer.json()["error"].startswith(message), answer.text
    before = sorted(p.name for p in (service.record_dir / "episodes").iterdir())  # type: ignore[attr-defined]
    assert imported(b"[]").status_code == 422
    assert sorted(p.name for p in (service.record_dir / "episodes").iterdir()) == before  # type: ignore[attr-defined]

    not_json = tmp_path / "notes.har"
    not_json.write_text("these are notes")
    told = cli("episodes", "import", str(not_json), "--api-url", service.api)
    assert told.returncode == 2
    assert told.stderr.startswith(f"skillshift-proxy: {not_json}: cannot read it as JSON")
    absent = tmp_path / "absent.har"
    told = cli("episodes", "import", str(absent), "--api-url", service.api)
    assert told.returncode == 2
    assert told.stderr == f"skillshift-proxy: {absent}: cannot read it: No such file or directory\n"
    missing = cli("replay", "nope", "--api-url", service.api)
    assert missing.returncode == 2 and "episode 'nope' not found" in missing.stderr
    (tmp_path / "bare").mkdir()
    bare = ServiceProcess(tmp_path / "bare").start()  # no desktop listener
    try:
        unbound = cli("replay", "any", "--api-url", bare.api)
    finally:
        bare.stop()
    assert unbound.returncode == 2
    assert "no desktop listener: start it with --desktop-proxy" in unbound.stderr
