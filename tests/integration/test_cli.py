"""The `skillshift` command as a user runs it: options, startup, signals, reverse listeners."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from api.service.settings import Settings
from skillshift_client import AsyncSkillShift, SkillShift
from tests.helpers.pages import RELABEL_ONLY
from tests.helpers.ports import free_port
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import PAGE, UpstreamServer

SKILLSHIFT = str(Path(sys.executable).with_name("skillshift-proxy"))


def test_help_documents_every_option_with_its_variable() -> None:
    """The installed command's help: every Settings field is an option, with its variable and
    its description (whitespace ignored: argparse wraps the text to the terminal)."""
    text = subprocess.run(
        [SKILLSHIFT, "serve", "--help"], capture_output=True, text=True, check=True
    ).stdout
    flat = re.sub(r"\s+", "", text)
    assert len(Settings.model_fields) >= 20
    for name, field in Settings.model_fields.items():
        assert field.description, name
        assert f"--{name.replace('_', '-')}" in flat, name
        assert f"SKILLSHIFT_{name.upper()}" in flat, name
        assert re.sub(r"\s+", "", field.description) in flat, name


@pytest.mark.parametrize(
    "args, message",
    [
        (["--api", "0.0.0.0:18081"], "--api-token"),
        (["--reverse", "not-a-spec"], "upstream"),
        (["--proxy", "nonsense"], "HOST:PORT"),
        (["--internal-prefix", "x"], "internal-prefix"),
        (["--targets", "http://a:1=ftp://b"], "http://source:port=http://target:port"),
        (["--upstream-timeout", "soon"], "--upstream-timeout"),
        (["--upstream-ca", "/nonexistent.pem"], "--upstream-ca='/nonexistent.pem': "),
    ],
)
def test_bad_options_are_refused_with_a_clear_message(args: list[str], message: str) -> None:
    result = subprocess.run(
        [SKILLSHIFT, "serve", *args], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2 and message in result.stderr


def test_a_directory_that_cannot_be_used_ends_in_one_line(tmp_path: Path) -> None:
    """Named by its option or variable, with no traceback (it ended in one, and "internal
    error"): a directory that cannot be made (also as root), a file, a confdir that is one; a
    record directory alike (it was named as "record directory", no option)."""
    a_file = tmp_path / "afile"
    a_file.write_text("not a directory")
    cases = [
        (["--knowledge-dir", "/proc/nope"], {}, "--knowledge-dir", "/proc/nope"),
        ([], {"SKILLSHIFT_KNOWLEDGE_DIR": str(a_file)}, "SKILLSHIFT_KNOWLEDGE_DIR", str(a_file)),
        (["--confdir", str(a_file)], {}, "--confdir", str(a_file)),
        (["--record-dir", "/proc/nope"], {}, "--record-dir", "/proc/nope"),
    ]
    base = {k: v for k, v in os.environ.items() if not k.startswith("SKILLSHIFT_")}
    ports = ["--proxy", f"127.0.0.1:{free_port()}", "--api", f"127.0.0.1:{free_port()}"]
    for args, variables, named, value in cases:
        result = subprocess.run(
            [SKILLSHIFT, "serve", *ports, "--learn", "static", *args],
            capture_output=True,
            text=True,
            env={**base, **variables},
            timeout=30,
        )
        last = result.stderr.splitlines()[-1]
        assert result.returncode == 2, (args, result.stderr)
        assert last.startswith(f"skillshift-proxy: {named}") and f"{value}'" in last, last
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_starts_and_stops_cleanly_within_two_seconds(workdir: Path, sig: int) -> None:
    service = ServiceProcess(workdir).start()
    elapsed = service.stop(sig)
    assert service.process is not None and service.process.returncode == 0, service.log()
    assert elapsed < 2.0, f"took {elapsed:.2f}s to stop"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{service.api}/health", timeout=1)


def test_environment_variables_mirror_options(workdir: Path, upstream: UpstreamServer) -> None:
    service = ServiceProcess(workdir, env={"SKILLSHIFT_ALLOW_UNBOUND": "1"}).start()
    try:
        with httpx.Client(proxy=service.proxy) as client:
            assert client.get(f"{upstream.origin}/page.html").content == PAGE
    finally:
        service.stop()


def test_reverse_listener_uses_its_default_episode(workdir: Path, upstream: UpstreamServer) -> None:
    listen = free_port()
    service = ServiceProcess(workdir, "--reverse", f"{upstream.origin}@{listen}").start()
    try:
        assert httpx.get(f"http://127.0.0.1:{listen}/page.html").status_code == 407
        episode = service.create_episode(**RELABEL_ONLY)
        listeners = httpx.get(f"{service.api}/listeners").json()["listeners"]
        assert [item["kind"] for item in listeners] == ["regular", "reverse"]
        set_default = httpx.put(
            f"{service.api}/listeners/{listen}", json={"default_episode": episode["id"]}
        )
        assert set_default.status_code == 200
        response = httpx.get(f"http://127.0.0.1:{listen}/page.html")
        assert response.status_code == 200 and b">Log in</a>" in response.content
        # The regular listener is not affected by the reverse listener's default.
        with httpx.Client(proxy=service.proxy) as client:
            assert client.get(f"{upstream.origin}/page.html").status_code == 407
    finally:
        service.stop()


def test_port_in_use_is_reported(workdir: Path, service: ServiceProcess) -> None:
    busy = ServiceProcess(workdir)
    busy.args[busy.args.index("--proxy") + 1] = f"127.0.0.1:{service.proxy_port}"
    started = time.monotonic()
    process = subprocess.run(busy.args, capture_output=True, text=True, timeout=30)
    assert process.returncode != 0
    # The last line, where a user reads first, names the port.
    (last,) = (process.stdout + process.stderr).strip().splitlines()[-1:]
    assert f"the proxy on port {service.proxy_port} failed to start" in last, last
    assert time.monotonic() - started < 20


def admin(service: ServiceProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """An admin command (`report`, `episodes`) against the service."""
    env = {**os.environ, "SKILLSHIFT_API_URL": service.api}
    return subprocess.run(
        [SKILLSHIFT, *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def attempt(
    service: ServiceProcess, site: str, condition: str, calls: int, success: bool | None
) -> str:
    tags = {"site": site, "run": "cli-benchmark", "uid": f"{site}-{condition}-{calls}"}
    episode = service.create_episode(condition=condition, tags=tags)
    events = f"{service.api}/episodes/{episode['id']}/events"
    for index in range(calls):
        httpx.post(events, json={"type": "skill_call", "skill": "s"}, timeout=5)
        if index % 3 == 0:
            httpx.post(events, json={"type": "skill_failure", "skill": "s"}, timeout=5)
    if success is not None:
        body = {"type": "task_result", "success": success, "steps": 3 + calls}
        httpx.post(events, json=body, timeout=5).raise_for_status()
    return str(episode["id"])


def test_reports_count_the_page_loads_the_drift_changed_nothing_on(
    service: ServiceProcess, upstream: UpstreamServer
) -> None:
    """An app that renders everything into `<body>` itself (JupyterLab) serves markup with no
    control and no mount point: under `-Perc` the drift changes nothing there, and the
    reports say so rather than let its results pass for drifted ones."""
    upstream.extra["/drift/shell"] = ("text/html", SHELL)
    upstream.extra["/drift/list"] = ("text/html", LINKS)
    tags = {"run": "drift-counts"}
    episode = service.create_episode(condition="Src-Perc", seed=2, tags=tags)
    navigation = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}
    with service.client(episode) as client:
        for path in ("/drift/shell", "/drift/list"):
            response = client.get(f"{upstream.origin}{path}", headers=navigation)
            assert response.status_code == 200, response.text
    episode_id = str(episode["id"])
    report = httpx.get(f"{service.api}/episodes/{episode_id}/report", timeout=10).json()
    assert report["perceptual"]["pages_drifted"] == 1
    assert report["perceptual"]["pages_not_drifted"] == 1
    (row,) = httpx.get(f"{service.api}/reports?tag=run=drift-counts", timeout=10).json()["rows"]
    assert (row["pages_drifted"], row["pages_not_drifted"]) == (1, 1)
    shown = admin(service, "report", "--tag", "run=drift-counts")
    assert shown.returncode == 0, shown.stderr
    assert "the locator drift changed nothing on 1 page load(s)" in shown.stdout


SHELL = (
    b"<!DOCTYPE html><html><head><title>Lab</title></head><body>"
    b"<script>document.body.append(document.createElement('main'))</script></body></html>"
)
LINKS = (
    b"<!DOCTYPE html><html><head><title>List</title></head><body><main>"
    + b"".join(
        b'<div class="row"><a id="item-%d" class="item" href="/drift/%d">Item %d</a></div>'
        % (i, i, i)
        for i in range(12)
    )
    + b"</main></body></html>"
)


def test_report_prints_the_benchmark_table_and_per_task_lines(service: ServiceProcess) -> None:
    conditions = ["Src", "Src-Perc", "Src-Exec", "Tgt", "Tgt-Perc", "Tgt-Exec"]
    for site in ("alpha", "beta"):
        for condition in conditions:
            if (site, condition) == ("beta", "Tgt-Exec"):
                continue  # a missing cell
            calls = 31 if condition == "Src" else 2
            attempt(service, site, condition, calls, success=condition != "Tgt")
    attempt(service, "alpha", "Tgt", 0, success=None)  # unfinished
    shown = admin(service, "report", "--format", "benchmark", "--tag", "run=cli-benchmark")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    header = lines[0].split()
    assert header == ["metric", "alpha", "beta", "|", *conditions, "|", "overall"]
    rows = {line.split()[0]: line.split() for line in lines[1:5]}
    assert list(rows) == ["SR", "AS", "ASC", "SFR"]
    by_column = {name: dict(zip(header, row, strict=True)) for name, row in rows.items()}
    assert by_column["SR"]["Src"] == "1.000" and by_column["SR"]["Tgt"] == "0.000"
    # Src rests on 62 calls; every other condition on at most 4: flagged, with a footnote.
    assert by_column["SFR"]["Src"] == "0.355" and by_column["SFR"]["Src-Perc"] == "0.500*"
    # Tgt-Exec has one cell of two, and so has beta's row a cell missing.
    assert by_column["SR"]["Tgt-Exec"] == "1.000+" and by_column["SR"]["beta"].endswith("+")
    assert "* SFR resting on fewer than 30 skill calls." in lines
    assert "Cells without episodes: beta/Tgt-Exec." in lines
    as_json = admin(service, "report", "--format", "json", "--tag", "run=cli-benchmark")
    assert sum(row["episodes"] for row in json.loads(as_json.stdout)["rows"]) == 12

    def episodes_tagged(*tags: str) -> int:
        filters = [arg for tag in tags for arg in ("--tag", tag)]
        shown = admin(service, "report", "--format", "json", *filters)
        return sum(row["episodes"] for row in json.loads(shown.stdout)["rows"])

    # Every filter applies, a key given twice too (the last one alone did).
    assert episodes_tagged("run=cli-benchmark", "site=alpha") == 7
    assert episodes_tagged("run=other", "run=cli-benchmark") == 0

    per_task = admin(service, "report", "--format", "per_task", "--tag", "run=cli-benchmark")
    assert per_task.returncode == 0, per_task.stderr
    records = [json.loads(line) for line in per_task.stdout.splitlines()]
    assert len(records) == 12
    keys = ["uid", "site", "condition", "success", "steps", "skill_calls", "skill_failures"]
    assert all(list(record) == keys for record in records)
    assert records[0] == {
        "uid": "alpha-Src-31",
        "site": "alpha",
        "condition": "src",
        "success": True,
        "steps": 34,
        "skill_calls": 31,
        "skill_failures": 11,
    }
    unfinished = next(r for r in records if r["uid"] == "alpha-Tgt-0")
    assert unfinished["success"] is None and unfinished["steps"] is None


def test_episodes_export_writes_the_har(workdir: Path, upstream: UpstreamServer) -> None:
    service = ServiceProcess(workdir, "--record-dir", str(workdir / "recordings")).start()
    try:
        episode = service.create_episode(condition="Src")
        with service.client(episode) as client:
            assert client.get(f"{upstream.origin}/page.html").content == PAGE
        deadline = time.monotonic() + 10
        pages = f"{service.api}/episodes/{episode['id']}/pages"
        while not httpx.get(pages, timeout=5).json()["pages"] and time.monotonic() < deadline:
            time.sleep(0.05)
        target = workdir / "episode.har"
        written = admin(
            service, "episodes", "export", str(episode["id"]), "--har", "-o", str(target)
        )
        assert written.returncode == 0, written.stderr
        assert written.stdout == ""
        har = json.loads(target.read_text(encoding="utf-8"))
        assert har["log"]["version"] == "1.2"
        urls = [entry["request"]["url"] for entry in har["log"]["entries"]]
        assert f"{upstream.origin}/page.html" in urls
        printed = admin(service, "episodes", "export", str(episode["id"]), "--har")
        assert json.loads(printed.stdout) == har
        # The clients read the same recording: the HAR, the pages, one page's change map.
        with SkillShift(service.api) as sync:
            assert sync.har(str(episode["id"])) == har
            listed = sync.pages(str(episode["id"]))
            assert [page["url"] for page in listed] == [f"{upstream.origin}/page.html"]
            one = sync.page(str(episode["id"]), listed[0]["load"])
            assert one["load"] == listed[0]["load"] and one["url"] == listed[0]["url"]

        async def read_async() -> tuple[object, ...]:
            async with AsyncSkillShift(service.api) as client:
                episode_id = str(episode["id"])
                load = listed[0]["load"]
                return (
                    await client.har(episode_id),
                    await client.pages(episode_id),
                    await client.page(episode_id, load),
                )

        assert asyncio.run(read_async()) == (har, listed, one)
        missing = workdir / "missing.har"
        unknown = admin(service, "episodes", "export", "nope", "--har", "-o", str(missing))
        assert unknown.returncode == 2 and "404" in unknown.stderr
        assert not missing.exists()  # nothing written when the API refuses
    finally:
        service.stop()


def test_episodes_export_har_needs_a_recording_service(service: ServiceProcess) -> None:
    episode = service.create_episode(condition="Src")
    refused = admin(service, "episodes", "export", str(episode["id"]), "--har")
    assert refused.returncode == 2
    assert "404" in refused.stderr and "--record-dir" in refused.stderr


def test_errors_are_one_line_with_one_prefix_and_status_2(service: ServiceProcess) -> None:
    """Every error the command writes starts with `skillshift-proxy:`; a user's error shows no
    traceback (unless --debug asks for it) and exits 2, the status of "could not"; 1 is only
    ever "violations found"."""
    dead = f"http://127.0.0.1:{free_port()}"
    cases = {
        ("check",): "skillshift-proxy: check: give PAGE (a file or URL) or --browser URL",
        ("check", "--seeds", "x"): "skillshift-proxy: check: argument --seeds: 'x' is not a "
        "whole number",
        ("serve", "--proxy", "nonsense"): "skillshift-proxy: --proxy='nonsense': ",
        ("report", "--api-url", dead): f"skillshift-proxy: cannot reach the API at {dead}: ",
        ("episodes", "export", "nope"): "skillshift-proxy: the API answered 404: episode "
        "'nope' not found",
    }
    for args, message in cases.items():
        shown = admin(service, *args)
        assert shown.returncode == 2, (args, shown)
        last = shown.stderr.splitlines()[-1]
        assert last.startswith(message), (args, shown.stderr)
        assert "Traceback" not in shown.stderr, args
    debugged = admin(service, "report", "--api-url", dead, "--debug")
    assert debugged.returncode == 2 and "Traceback (most recent call last)" in debugged.stderr
    assert debugged.stderr.splitlines()[-1].startswith(cases[("report", "--api-url", dead)])


def test_a_refused_request_is_told_in_words(service: ServiceProcess) -> None:
    """A 422 of the API is its message, not its JSON (it is refused before any browser)."""
    shown = admin(service, "check", "--browser", "http://127.0.0.1:9/", "--condition", "Src-Exec")
    assert shown.returncode == 2, shown
    assert shown.stderr == (
        "skillshift-proxy: the API answered 422: condition: Src-Exec covers the page with a "
        "popup by design; check Src-Perc or Tgt-Perc\n"
    )


def test_ca_help_describes_the_command_and_its_options() -> None:
    text = re.sub(
        r"\s+",
        " ",
        subprocess.run([SKILLSHIFT, "ca", "--help"], capture_output=True, text=True).stdout,
    )
    assert "Print where the CA that signs intercepted HTTPS is" in text
    assert "--confdir CONFDIR the service's CA directory" in text
    assert "--proxy-server PROXY_SERVER the proxy listener the printed flags point" in text


def test_the_start_up_line_names_every_listener_and_the_record_directory(
    workdir: Path, upstream: UpstreamServer
) -> None:
    desktop, reverse = free_port(), free_port()
    service = ServiceProcess(
        workdir,
        "--desktop-proxy",
        f"127.0.0.1:{desktop}",
        "--reverse",
        f"{upstream.origin}@{reverse}",
        "--record-dir",
        str(workdir / "recordings"),
        "--log-level",
        "info",
    ).start()
    try:
        [line] = [
            line for line in service.log().splitlines() if "api.service.server: starting:" in line
        ]
        assert (
            f"starting: agents' proxy http://127.0.0.1:{service.proxy_port}, desktop browsers' "
            f"proxy http://127.0.0.1:{desktop}, reverse proxy http://127.0.0.1:{reverse} -> "
            f"{upstream.origin}, admin API {service.api} "
        ) in line
        assert line.endswith(f", record directory {workdir / 'recordings'}")
    finally:
        service.stop()


def refuse_the_certificate(service: ServiceProcess, host: str) -> None:
    """A TLS handshake through the proxy (bound to an episode) that, like Chromium's background
    requests, does not trust the interception CA."""
    episode = service.create_episode(condition="Src")
    credentials = base64.b64encode(f"{episode['id']}:{episode['token']}".encode()).decode()
    with socket.create_connection(("127.0.0.1", service.proxy_port), timeout=10) as raw:
        raw.sendall(
            f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n"
            f"Proxy-Authorization: Basic {credentials}\r\n\r\n".encode()
        )
        assert raw.recv(4096).startswith(b"HTTP/1.1 200")
        with pytest.raises(ssl.SSLCertVerificationError):
            ssl.create_default_context().wrap_socket(raw, server_hostname=host)


def test_refused_handshakes_are_summarised_not_logged_one_by_one(workdir: Path) -> None:
    # The hosts Chromium's background requests go to; nothing is sent there: the handshake
    # with the client fails before the proxy connects anywhere.
    allowed = "127.0.0.1,localhost,*.googleapis.com"
    service = ServiceProcess(workdir, "--upstream-allow", allowed).start()
    try:
        started = time.monotonic()
        for _ in range(30):
            refuse_the_certificate(service, "content-autofill.googleapis.com")
        refuse_the_certificate(service, "update.googleapis.com")
        deadline = time.monotonic() + 30
        while service.counter("tls_handshake_failures_total") < 31:  # all reached the log
            assert time.monotonic() < deadline, service.log()
            time.sleep(0.05)
        minutes = (time.monotonic() - started) / 60
        log = service.log().splitlines()
        autofill = [line for line in log if "content-autofill.googleapis.com" in line]
        # One line per host per minute (at most one more for each minute the run took).
        assert 1 <= len(autofill) <= 1 + int(minutes), autofill
        assert "more failures for content-autofill.googleapis.com are counted" in autofill[0]
        assert len([line for line in log if "update.googleapis.com" in line]) == 1
    finally:
        service.stop()
