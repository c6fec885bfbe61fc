"""Every checker tells "aligned", "violations found" and "could not check" apart, through the
real service, its CLI and a real Chromium: a page that did not load (an unreachable upstream, a
404, a missing file, a crashed browser) is never reported aligned. And the episodes the checks
make for themselves stay out of the benchmark's numbers."""

from __future__ import annotations

import gzip
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from proxy.knowledge.learner import NOWHERE_PROXY
from tests.helpers.gated import GatedServer
from tests.helpers.ports import free_port
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import UpstreamServer

SKILLSHIFT = str(Path(sys.executable).with_name("skillshift-proxy"))
# A page the extended perceptual set (relabel, restyle, relayout) visibly changes.
EXTENDED_BREAKS = (
    b"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Ext</title></head><body>"
    b"<h1>Shop</h1><nav><ul><li><a href='/a'>Home</a></li><li><a href='/b'>Products</a></li>"
    b"<li><a href='/c'>Cart</a></li></ul></nav><form action='/search'><label>Search "
    b"<input name='q'></label><button>Search</button></form>"
    b"<p><button>Add to cart</button> <button>Sign in</button></p></body></html>"
)
QUICK = {"settle_ms": 100, "baseline_runs": 1}


@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """A service for browser checks only (each makes only the service's own episodes)."""
    process = ServiceProcess(tmp_path_factory.mktemp("checker")).start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def pages(upstream: UpstreamServer) -> str:
    upstream.extra["/verdicts/extended.html"] = ("text/html; charset=utf-8", EXTENDED_BREAKS)
    return upstream.origin


def unreachable() -> str:
    return f"http://127.0.0.1:{free_port()}/"


def cli(
    service: ServiceProcess, *args: str, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SKILLSHIFT_API_URL": service.api}
    return subprocess.run(
        [SKILLSHIFT, *args], capture_output=True, text=True, env=env, timeout=timeout, check=False
    )


def browser_check(service: ServiceProcess, **body: Any) -> dict[str, Any]:
    response = httpx.post(f"{service.api}/checks/browser", json=body, timeout=300)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    assert set(result) == {"url", "condition", "status", "reason", "runs", "violations"}
    return result


# --- the static checker: CLI and GET /episodes/{id}/check ------------------------------------


def test_check_of_a_missing_file_could_not_check(service: ServiceProcess, tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.html")
    shown = cli(service, "check", missing)
    assert shown.returncode == 2, shown
    assert shown.stdout.splitlines()[-1] == (
        f"could not check: could not read {missing}: No such file or directory"
    )
    assert "Traceback" not in shown.stderr
    as_json = cli(service, "check", missing, "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout) == {
        "url": missing,
        "status": "unchecked",
        "reason": f"could not read {missing}: No such file or directory",
        "violations": [],
    }


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "it is empty"),
        (b"just some notes\n", "it holds no HTML markup"),
        (b'{"a": 1}', "it holds no HTML markup"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "it is binary, not an HTML page"),
    ],
)
def test_check_of_a_file_that_is_no_page_could_not_check(
    service: ServiceProcess, tmp_path: Path, content: bytes, why: str
) -> None:
    """A file given by mistake says nothing about the shift: it was "aligned", exit 0."""
    given = tmp_path / "given.html"
    given.write_bytes(content)
    shown = cli(service, "check", str(given))
    assert shown.returncode == 2, shown
    assert shown.stdout.splitlines()[-1] == f"could not check: {given}: {why}"


def test_check_of_a_page_saved_as_utf16_is_checked(service: ServiceProcess, tmp_path: Path) -> None:
    saved = tmp_path / "utf16.html"
    saved.write_bytes("<html><body><a href='/x'>Go</a></body></html>".encode("utf-16"))
    shown = cli(service, "check", str(saved), "--condition", "Src-Perc")
    assert shown.returncode == 0 and shown.stdout.splitlines()[-1].startswith("aligned"), shown


@pytest.mark.parametrize(
    ("path", "why"),
    [
        (None, "could not fetch"),
        ("/missing", "answered 404 Not Found"),
        ("/data.json", "application/json, not an HTML page"),
        ("http://127.0.0.1:99999/", "names port 99999, outside 1-65535"),
        ("http://[::1", "is not a URL that can be fetched"),
        # What the proxy answers 502 for: a page would be checked that no browser gets.
        ("/truncated.html", "its body could not be decoded"),
        ("/deep.html", "nests elements deeper than the parser reads"),
    ],
)
def test_check_of_a_page_that_does_not_load_could_not_check(
    service: ServiceProcess, upstream: UpstreamServer, path: str | None, why: str
) -> None:
    page = b"<html><body><a href='/x'>Go</a>" + b"<p>text</p>" * 2000 + b"</body></html>"
    upstream.extra["/truncated.html"] = ("text/html", gzip.compress(page)[:-600])
    upstream.extra_headers["/truncated.html"] = {"Content-Encoding": "gzip"}
    deep = b"<div>" * 3000 + b"<a href='/x'>Go</a>" + b"</div>" * 3000
    upstream.extra["/deep.html"] = ("text/html", b"<html><body>" + deep + b"</body></html>")
    url = path if path and "://" in path else f"{upstream.origin}{path}" if path else unreachable()
    shown = cli(service, "check", url)
    assert shown.returncode == 2, shown
    last = shown.stdout.splitlines()[-1]
    assert last.startswith("could not check: ") and why in last, last
    assert "Traceback" not in shown.stderr
    # The API's check of the same URL says so, and why.
    episode = service.create_episode(condition="Src-Perc")
    answer = httpx.get(
        f"{service.api}/episodes/{episode['id']}/check", params={"url": url}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()
    assert result["status"] == "unchecked" and why in result["reason"]
    assert result["violations"] == []


def test_a_check_reads_a_pages_type_as_the_proxy_does(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    """As a browser reads it: the case of a type, a type of several values (the last), none
    and a body that sniffs as HTML. The check said "not an HTML page" of pages the proxy
    shifts, and checked one it passes on as text."""
    page = b"<!DOCTYPE html><html><body><a href='/x'>Go</a></body></html>"
    cases = {
        "/typed-upper.html": ("Text/HTML; charset=UTF-8", "aligned"),
        "/typed-none.html": ("", "aligned"),
        "/typed-last-text.html": ("text/html, text/plain", "not an HTML page"),
    }
    for path, (content_type, _) in cases.items():
        upstream.extra[path] = (content_type, page)
    for path, (_, verdict) in cases.items():
        shown = cli(service, "check", f"{upstream.origin}{path}", "--condition", "Src-Perc")
        assert verdict in shown.stdout.splitlines()[-1], (path, shown.stdout)


def test_check_of_a_page_that_loads_is_aligned(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    url = f"{upstream.origin}/page.html"
    shown = cli(service, "check", url, "--seeds", "2")
    assert shown.returncode == 0, shown
    assert shown.stdout.splitlines()[-1] == "aligned: 12 checks, no violation"
    lines = [json.loads(line) for line in cli(service, "check", url, "--json").stdout.splitlines()]
    assert [line["status"] for line in lines] == ["aligned"] * 6
    episode = service.create_episode(condition="Src-Perc")
    answer = httpx.get(f"{service.api}/episodes/{episode['id']}/check", params={"url": url})
    assert answer.status_code == 200 and answer.json()["status"] == "aligned"


# --- the browser oracle: POST /checks/browser and `check --browser` --------------------------


@pytest.mark.browser
@pytest.mark.parametrize(
    ("path", "why"),
    [(None, "answered 502"), ("/missing", "answered 404")],
)
def test_the_oracle_could_not_check_a_page_that_does_not_load(
    checker: ServiceProcess, upstream: UpstreamServer, path: str | None, why: str
) -> None:
    """An unreachable upstream (the proxy answers 502) or a 404: both loads used to "pass"."""
    url = f"{upstream.origin}{path}" if path else unreachable()
    result = browser_check(checker, url=url, **QUICK)
    assert result["status"] == "unchecked" and result["runs"] == []
    assert f"the unshifted load of {url} {why}" in result["reason"]
    if path is None:  # the proxy's page names the upstream it could not reach
        assert url.removeprefix("http://").rstrip("/") in result["reason"]
    shown = cli(checker, "check", "--browser", url)
    assert shown.returncode == 2, shown
    last = shown.stdout.splitlines()[-1]
    assert last.startswith("Src-Perc  could not check: ") and why in last
    if path is None:
        as_json = cli(checker, "check", "--browser", url, "--json")
        assert as_json.returncode == 2
        assert json.loads(as_json.stdout) == result


@pytest.mark.browser
def test_the_oracle_finds_violations_and_the_cli_exits_1(
    checker: ServiceProcess, pages: str
) -> None:
    url = f"{pages}/verdicts/extended.html"
    result = browser_check(checker, url=url, perceptual="extended", **QUICK)
    assert result["status"] == "violations" and result["reason"] is None
    assert result["violations"] == len(result["runs"][0]["violations"]) > 0
    shown = cli(checker, "check", "--browser", url, "--perceptual", "extended")
    assert shown.returncode == 1, shown
    assert shown.stdout.splitlines()[-1] == "Src-Perc  violations found: 1 of 1 seed"


@pytest.mark.browser
def test_the_cli_prints_each_load_and_seed_as_it_finishes(checker: ServiceProcess) -> None:
    """The second seed's page is held until the first seed's line has been read from the
    running command: the line was written (and flushed) before the check ended."""
    with GatedServer(hold=4) as gated:  # loads: 2 unshifted, seed 0, seed 1 (held)
        env = {**os.environ, "SKILLSHIFT_API_URL": checker.api}
        command = subprocess.Popen(
            [SKILLSHIFT, "check", "--browser", gated.url, "--seeds", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        output, errors = command.stdout, command.stderr
        assert output is not None and errors is not None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: list(map(lines.put, output)), daemon=True).start()
        try:
            seen = []
            while not seen or not seen[-1].startswith("Src-Perc  seed 0 "):
                seen.append(lines.get(timeout=120).rstrip("\n"))
            # Read while seed 1 waits for the gate: the check was still running.
            assert gated.waiting.wait(120) and command.poll() is None
            gated.open()
            assert command.wait(timeout=120) == 0, errors.read()
        finally:
            if command.poll() is None:
                command.kill()
        while not lines.empty():
            seen.append(lines.get().rstrip("\n"))
    assert not gated.held_too_long
    assert seen[0] == f"Src-Perc  checking {gated.url} in Chromium"
    assert [line.split()[1:4] for line in seen[1:3]] == [
        ["unshifted", "load", "1/2"],
        ["unshifted", "load", "2/2"],
    ]
    assert seen[3].startswith("Src-Perc  seed 0   browser  ok")
    assert seen[4].startswith("Src-Perc  seed 1   browser  ok")
    assert seen[-1] == "Src-Perc  aligned: 2 seeds, no violation"


def chromium_processes_under(pid: int, without: bytes = b"\0") -> list[int]:
    """The Chromium browser processes (not their renderers) descending from `pid` (but those
    whose command line holds `without`)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                command = (Path("/proc") / str(child) / "cmdline").read_bytes()
            except OSError:
                continue
            # Chromium's helpers (renderers, zygotes, ...) carry a --type (in one string: they
            # rewrite their command line); the browser itself has none.
            if (
                command.startswith(b"/usr/lib/chromium/")
                and b"--type=" not in command
                and without not in command
            ):
                found.append(child)
    return found


@pytest.mark.browser
def test_a_browser_that_crashes_is_could_not_check(checker: ServiceProcess) -> None:
    """Chromium killed in the middle of the unshifted load: unchecked, saying so."""
    assert checker.process is not None
    # The oracle's browser: the one this check starts, or the one an earlier check left up for
    # the next; not the service's learning browser (which is told to reach nowhere).
    learning = NOWHERE_PROXY[1].encode()
    with GatedServer(hold=1) as gated:
        answers: queue.Queue[httpx.Response] = queue.Queue()
        body = {"url": gated.url, **QUICK}
        threading.Thread(
            target=lambda: answers.put(
                httpx.post(f"{checker.api}/checks/browser", json=body, timeout=300)
            ),
            daemon=True,
        ).start()
        assert gated.waiting.wait(120)  # Chromium is loading the page
        browsers = chromium_processes_under(checker.process.pid, without=learning)
        assert len(browsers) == 1, browsers
        os.kill(browsers[0], signal.SIGKILL)
        gated.open()
        answer = answers.get(timeout=120)
        assert answer.status_code == 200, answer.text
        result = answer.json()
        assert result["status"] == "unchecked" and result["runs"] == []
        crashed = f"the browser crashed during the unshifted load of {gated.url}"
        assert result["reason"].startswith(crashed), result["reason"]
        # The next check gets a browser of its own.
        again = browser_check(checker, url=gated.url, **QUICK)
        assert again["status"] == "aligned", again


# --- the service's own episodes are no task attempts -------------------------------------------


@pytest.mark.browser
def test_the_checks_own_episodes_stay_out_of_reports_and_exports(
    tmp_path: Path, upstream: UpstreamServer
) -> None:
    service = ServiceProcess(tmp_path, "--record-dir", str(tmp_path / "recordings")).start()
    try:
        result = browser_check(service, url=f"{upstream.origin}/page.html", **QUICK)
        assert result["status"] == "aligned" and result["reason"] is None
        # A calibration run's (or anyone's) episode marked as the service's own.
        calibration = service.create_episode(condition="Src-Exec", internal=True)
        reports = f"{service.api}/reports"
        assert httpx.get(reports).json()["rows"] == []
        assert httpx.get(reports, params={"format": "csv"}).text.count("\n") == 1  # the header
        assert httpx.get(reports, params={"format": "per_task"}).text == ""
        table = httpx.get(reports, params={"format": "benchmark"}).json()
        assert table["websites"] == [] and table["missing_cells"] == []
        assert httpx.get(f"{service.api}/episodes").json()["episodes"] == []
        shown = cli(service, "report", "--format", "benchmark")
        assert shown.returncode == 0 and shown.stdout == "no episodes\n"
        # Asked for, they are there: two oracle loads (archived) and the calibration run.
        everything = {"include_internal": "true"}
        rows = httpx.get(reports, params=everything).json()["rows"]
        assert {row["condition"]: row["episodes"] for row in rows} == {
            "Src": 1,
            "Src-Exec": 1,
            "Src-Perc": 1,
        }
        listed = httpx.get(f"{service.api}/episodes", params=everything).json()["episodes"]
        assert [episode["id"] for episode in listed] == [calibration["id"]]
        assert listed[0]["internal"] is True
        shown = cli(service, "report", "--include-internal")
        assert shown.returncode == 0 and "Src-Exec" in shown.stdout
        listing = cli(service, "episodes", "list", "--include-internal")
        assert str(calibration["id"]) in listing.stdout
        assert str(calibration["id"]) not in cli(service, "episodes", "list").stdout
    finally:
        service.stop()
