"""The Python client, the admin commands and the examples, against a running service."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillshift_client import AsyncSkillShift, SkillShift, SkillShiftError, SkillShiftUnreachable
from tests.helpers.browsergym import browsergym_python
from tests.helpers.processes import ServiceProcess, run_agent
from tests.helpers.upstream import UpstreamServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def service(memory_demo_service: ServiceProcess) -> ServiceProcess:
    return memory_demo_service


def run_cli(service: ServiceProcess, *args: str) -> subprocess.CompletedProcess[str]:
    skillshift = str(Path(sys.executable).with_name("skillshift-proxy"))
    env = {**os.environ, "SKILLSHIFT_API_URL": service.api}
    return subprocess.run(
        [skillshift, *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_sync_client_round_trip(service: ServiceProcess) -> None:
    with SkillShift(service.api) as client:
        with client.episode(condition="Src-Exec", regime="multiple", seed=3) as episode:
            assert client.get_episode(episode.id)["seed"] == 3
            with httpx.Client(proxy=service.proxy, headers=episode.header, timeout=10) as http:
                assert "/__ss/" in http.get(f"{service.demo}/").text
            with httpx.Client(
                proxy=f"http://{episode.id}:{episode.token}@127.0.0.1:{service.proxy_port}"
            ) as http:
                assert http.get(f"{service.demo}/").status_code == 200
            kwargs = episode.playwright_context_kwargs()
            assert kwargs["proxy"]["username"] == episode.id
            gym = episode.browsergym_kwargs()
            assert gym["pw_chromium_kwargs"]["executable_path"].endswith("chromium")
            assert gym["pw_context_kwargs"] == kwargs
            assert client.patch_episode(episode.id, seed=4).data["seed"] == 4
            assert client.suspend(episode.id).data["suspended"] is True
            assert client.resume(episode.id).data["suspended"] is False
            client.skill_call(episode.id, "search", args={"q": "socks"})
            client.skill_failure(episode.id, "search", error="not found")
            client.task_result(episode.id, success=False, steps=4)
            report = client.report(episode.id)
            assert report["pages"]["served"] == 2 and report["popups"]["injected"] == 2
            assert report["agent_events"] == {"skill_call": 1, "skill_failure": 1, "task_result": 1}
            types = [event["type"] for event in client.events(episode.id, limit=1000)["events"]]
            assert types[0] == "episode_created" and types[-1] == "task_result"
            client.reset(episode.id)
            assert len(client.events(episode.id)["events"]) == 1
        with pytest.raises(SkillShiftError) as missing:
            client.get_episode(episode.id)  # deleted on leaving the block
        assert missing.value.status == 404 and "not found" in missing.value.message
        with pytest.raises(SkillShiftError) as invalid:
            client.create_episode(condition="Nope")
        assert invalid.value.status == 422 and "condition" in invalid.value.message


def test_episode_is_deleted_when_the_block_fails(service: ServiceProcess) -> None:
    with SkillShift(service.api) as client:
        with pytest.raises(RuntimeError), client.episode() as episode:
            raise RuntimeError("agent crashed")
        assert episode.id not in {e["id"] for e in client.list_episodes()}


def test_an_episode_kept_outlives_its_block_with_its_result(service: ServiceProcess) -> None:
    with SkillShift(service.api) as client:
        with client.episode(keep=True, tags={"run": "kept"}) as episode:
            client.task_result(episode.id, success=True, steps=2)
        assert client.get_episode(episode.id)["tags"] == {"run": "kept"}
        assert client.reports(["run"], {"run": "kept"})["rows"][0]["SR"] == 1.0
        client.delete_episode(episode.id)

    async def kept_async() -> dict[str, Any]:
        async with AsyncSkillShift(service.api) as client:
            async with client.episode(keep=True) as kept:
                pass
            found = await client.get_episode(kept.id)
            await client.delete_episode(kept.id)
            return found

    assert asyncio.run(kept_async())["id"]


async def test_async_client_round_trip(service: ServiceProcess) -> None:
    async with AsyncSkillShift(service.api) as client:
        async with client.episode(condition="Tgt", tags={"method": "async"}) as episode:
            await client.step(episode.id, action="click")
            await client.task_result(episode.id, success=True)
            rows = (await client.reports(["method"], {"method": "async"}))["rows"]
            assert rows == [{**rows[0], "method": "async", "SR": 1.0, "AS": 1.0}]
            csv = await client.reports(["condition"], {"method": "async"}, format="csv")
            assert csv.splitlines()[1].startswith("Tgt,1,1,0,1.0")
        assert episode.id not in {e["id"] for e in await client.list_episodes()}


SYSTEM_CHROMIUM_SCRIPT = """
import os
from playwright.sync_api import sync_playwright
from skillshift_client.chromium import use_system_chromium

use_system_chromium()
with sync_playwright() as p:
    # Playwright's own headless Chromium (a separate headless shell since 1.49) and its full
    # one, neither given a path.
    for options in ({}, {"channel": "chromium"}):
        browser = p.chromium.launch(headless=True, **options)
        page = browser.new_page()
        page.goto("data:text/html,<title>launched</title>")
        print(page.title(), os.path.realpath(browser.browser_type.executable_path))
        browser.close()
"""


@pytest.mark.browser
def test_playwright_launches_the_system_chromium_where_it_expects_its_own(
    tmp_path: Path,
) -> None:
    """For code that launches Playwright's Chromium with no path (BrowserGym's chat window):
    this project's Playwright, a release with Chrome for Testing's layout; BrowserGym's older
    one is launched so in tests/integration/test_browsergym_sweep.py."""
    environment = {k: v for k, v in os.environ.items() if k != "PLAYWRIGHT_BROWSERS_PATH"}
    done = subprocess.run(
        [sys.executable, "-c", SYSTEM_CHROMIUM_SCRIPT],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["launched", "launched"], done.stdout


def test_a_step_is_posted_as_the_readme_shows(service: ServiceProcess) -> None:
    """`step(episode.id, "click")`: the action is the step's first argument, in both clients."""
    with SkillShift(service.api) as client, client.episode() as episode:
        client.step(episode.id, "click", target="#buy")
        client.step(episode.id)
        steps = [e for e in client.iter_events(episode.id) if e["type"] == "step"]
        assert [(e.get("action"), e.get("target")) for e in steps] == [
            ("click", "#buy"),
            (None, None),
        ]

    async def posted_async() -> list[object]:
        async with AsyncSkillShift(service.api) as client, client.episode() as episode:
            await client.step(episode.id, "type", duration_ms=12)
            return [e async for e in client.iter_events(episode.id) if e["type"] == "step"]

    [step] = asyncio.run(posted_async())
    assert step["action"] == "type" and step["duration_ms"] == 12  # type: ignore[index]


def test_unreachable_api_is_a_clear_error() -> None:
    with (
        SkillShift("http://127.0.0.1:9", timeout=2) as client,
        pytest.raises(SkillShiftUnreachable, match="127.0.0.1:9 is unreachable") as raised,
    ):
        client.list_episodes()
    assert raised.value.status == 0 and isinstance(raised.value.__cause__, httpx.ConnectError)


def test_another_server_at_the_api_address_is_said_on_one_line(upstream: UpstreamServer) -> None:
    """`--api-url` naming an app, not the API: its 404 page is not the error, one line is."""
    with SkillShift(upstream.origin) as client, pytest.raises(SkillShiftError) as raised:
        client.list_episodes()
    message = str(raised.value)
    assert "\n" not in message and len(message) < 250, message
    assert message.startswith("404: ") and "not the skillshift API's error shape" in message


def test_report_and_export_commands(service: ServiceProcess) -> None:
    with SkillShift(service.api) as client:
        episode = client.create_episode(condition="Src-Perc", tags={"method": "cli"})
        client.skill_call(episode.id, "x")
        client.task_result(episode.id, success=True, steps=2)
        table = run_cli(service, "report", "--group-by", "condition,method", "--tag", "method=cli")
        assert table.returncode == 0, table.stderr
        header, row = table.stdout.splitlines()
        assert header.split()[:5] == ["condition", "method", "episodes", "finished", "unfinished"]
        assert row.split()[:6] == ["Src-Perc", "cli", "1", "1", "0", "1.000"]
        csv = run_cli(service, "report", "--format", "csv", "--tag", "method=cli")
        assert csv.stdout.splitlines()[1].startswith("Src-Perc,1,1,0,1.0,2.0,1.0,0.0")
        export = run_cli(service, "episodes", "export", episode.id)
        lines = [json.loads(line) for line in export.stdout.splitlines()]
        assert lines == client.events(episode.id, limit=1000)["events"]
        listing = run_cli(service, "episodes", "list")
        assert episode.id in listing.stdout
        missing = run_cli(service, "episodes", "export", "nope")
        assert missing.returncode == 2
        assert (
            missing.stderr == "skillshift-proxy: the API answered 404: episode 'nope' not found\n"
        )
        client.delete_episode(episode.id)
    dead = run_cli(service, "report", "--api-url", "http://127.0.0.1:9")
    assert dead.returncode == 2 and "cannot reach the API at http://127.0.0.1:9" in dead.stderr


def test_ca_command_matches_the_service(service: ServiceProcess, tmp_path: Path) -> None:
    served = httpx.get(f"{service.api}/ca").json()
    shown = run_cli(service, "ca", "--confdir", str(service.confdir))
    assert shown.returncode == 0 and served["spki_sha256"] in shown.stdout
    assert f"--ignore-certificate-errors-spki-list={served['spki_sha256']}" in shown.stdout
    assert served["browsers"]["playwright"]["new_context"]["ignore_https_errors"] is True
    fresh = run_cli(service, "ca", "--confdir", str(tmp_path / "new"))
    assert fresh.returncode == 0 and (tmp_path / "new" / "mitmproxy-ca-cert.pem").exists()


@pytest.mark.browser
def test_playwright_example(service: ServiceProcess) -> None:
    result = run_agent(
        sys.executable, service.api, "examples/playwright_agent.py", f"{service.demo}/"
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["success"] is True
    assert outcome["report"]["popups"]["dismissed_by"] == {"close": 1}
    assert outcome["report"]["agent_events"]["task_result"] == 1


@pytest.mark.browser
def test_browsergym_example(service: ServiceProcess) -> None:
    result = run_agent(
        browsergym_python(), service.api, "examples/browsergym_agent.py", f"{service.demo}/"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    assert outcome["success"] is True and outcome["popups_closed"] >= 1
    report = outcome["report"]
    assert report["condition"] == "Src-Exec" and report["popups"]["shown"] >= 1
    assert report["agent_events"]["task_result"] == 1
