"""The `skillshift` command as a user runs it: options, startup, signals, reverse listeners."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from api.settings import Settings
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
    ],
)
def test_bad_options_are_refused_with_a_clear_message(args: list[str], message: str) -> None:
    result = subprocess.run(
        [SKILLSHIFT, "serve", *args], capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 2 and message in result.stderr


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
    assert str(service.proxy_port) in process.stdout + process.stderr
    assert time.monotonic() - started < 20
