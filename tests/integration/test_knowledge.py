"""What decides a shifted page, proved with real processes: a shifted document depends on the
upstream, the episode's settings, its loads and the knowledge it pinned, never on what the
serving process saw before. Each test starts the service processes it needs, so none of them
has seen the app: two fresh processes, a restart, two replicas on one redis-server behind
HAProxy; code a page loads later keeps working in Chromium; learn runs, deletions and
learning switched off are told, never silently shifted around."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from proxy.episode import beacon_key_of
from tests.helpers.chunked_app import add_chunked_app
from tests.helpers.processes import HAProxyProcess, RedisProcess, ServiceProcess
from tests.helpers.upstream import UpstreamServer

NAV = {"Sec-Fetch-Dest": "document"}
SETTINGS = {"condition": "Src-Perc", "seed": 3}


@pytest.fixture
def site() -> Iterator[UpstreamServer]:
    with UpstreamServer.serving("chunks", add_chunked_app) as server:
        yield server


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).with_name("skillshift-proxy")
    return subprocess.run([str(command), *args], capture_output=True, text=True, timeout=300)


def service_in(directory: Path, *args: str) -> ServiceProcess:
    directory.mkdir(parents=True, exist_ok=True)
    return ServiceProcess(directory, *args).start()


def loads(proxy: str, episode: dict, url: str, count: int) -> list[str]:  # type: ignore[type-arg]
    """The page `count` times, each on a new connection, with the values that are per episode
    by design (its beacon key) blanked: what is left must not depend on the process."""
    key = beacon_key_of(str(episode["id"]), str(episode["token"]))
    header = dict(episode["header"])
    pages = []
    for _ in range(count):
        with httpx.Client(proxy=proxy, headers=header, timeout=60) as client:
            response = client.get(url, headers=NAV)
        assert response.status_code == 200, response.text
        pages.append(response.text.replace(key, "KEY"))
    return pages


def asset_reads(site: UpstreamServer) -> int:
    return sum(request["path"] != "/app" for request in site.requests)


def without_load(page: str) -> str:
    """A page without its load index (the runtime's configuration carries it)."""
    return re.sub(r"&quot;l&quot;:\d+", "", page)


def served(service: ServiceProcess, episode_id: str) -> list[dict]:  # type: ignore[type-arg]
    return [e for e in service.events(episode_id) if e["type"] == "page_served"]


def test_two_fresh_processes_and_a_restart_shift_alike(
    site: UpstreamServer, tmp_path: Path
) -> None:
    url = f"{site.origin}/app"
    first = service_in(tmp_path / "first")
    try:
        episode = first.create_episode(**SETTINGS)
        reference = loads(first.proxy, episode, url, 3)
        (event, *_) = served(first, str(episode["id"]))
        assert event["knowledge"]["learnt"]["by"] == "browser", event
        assert event["shifts"]["locator_drift"]["classes"] > 0  # the page really drifted
    finally:
        first.stop()
    second = service_in(tmp_path / "second")  # its own knowledge: learns the page again
    try:
        episode = second.create_episode(**SETTINGS)
        assert loads(second.proxy, episode, url, 3) == reference
    finally:
        second.stop()
    reads = asset_reads(site)
    restarted = service_in(tmp_path / "first")  # the first process's directory, restarted
    try:
        episode = restarted.create_episode(**SETTINGS)
        assert loads(restarted.proxy, episode, url, 3) == reference
        assert served(restarted, str(episode["id"]))[0]["knowledge"].get("learnt") is None
        assert asset_reads(site) == reads  # what it knew was kept: nothing read again
    finally:
        restarted.stop()


def test_replicas_on_one_redis_shift_alike_whichever_serves(
    site: UpstreamServer, tmp_path: Path
) -> None:
    url = f"{site.origin}/app"
    alone = service_in(tmp_path / "alone")
    try:
        reference = loads(alone.proxy, alone.create_episode(**SETTINGS), url, 4)
    finally:
        alone.stop()
    (tmp_path / "redis").mkdir()
    redis = RedisProcess(tmp_path / "redis").start()
    replicas = [service_in(tmp_path / f"r{n}", "--redis-url", redis.url) for n in range(2)]
    balancer = HAProxyProcess(tmp_path, *(replica.proxy_port for replica in replicas))
    try:
        episode = replicas[0].create_episode(**SETTINGS)
        # A new connection per load: HAProxy alternates, so the replicas serve 1, 3 and 2, 4.
        assert loads(f"http://127.0.0.1:{balancer.port}", episode, url, 4) == reference
        events = served(replicas[0], str(episode["id"]))
        assert sum("learnt" in e["knowledge"] for e in events) == 1  # learnt once, for both
        assert len({tuple(e["knowledge"]["records"]) for e in events}) == 1
    finally:
        balancer.stop()
        for replica in replicas:
            replica.stop()
        redis.stop()


@pytest.mark.browser
def test_code_the_page_loads_later_finds_its_elements_in_a_fresh_process(
    site: UpstreamServer, tmp_path: Path, browser: Browser
) -> None:
    service = service_in(tmp_path / "service")
    try:
        for seed in range(6):
            episode = service.create_episode(condition="Src-Perc", seed=seed)
            context = browser.new_context(proxy=episode["proxy"])
            page = context.new_page()
            page.goto(f"{site.origin}/app")
            page.wait_for_function("window.lateFound === true")  # the module built at run time
            page.get_by_role("button", name="Load more").click()  # the chunk, on a click
            expect(page.get_by_text("chunk ran")).to_be_visible()
            assert page.evaluate("window.chunkFound") is True, seed
            context.close()
    finally:
        service.stop()


def test_a_learn_run_makes_new_knowledge_and_older_episodes_are_told(
    site: UpstreamServer, tmp_path: Path
) -> None:
    url = f"{site.origin}/app"
    service = service_in(tmp_path / "service")
    try:
        learnt = cli("learn", url, "--api-url", service.api)
        assert learnt.returncode == 0, learnt.stderr
        assert f"{site.origin}: unchanged: version 1" in learnt.stdout  # the first version
        old = service.create_episode(**SETTINGS)
        assert old["knowledge"] == 0
        before = loads(service.proxy, old, url, 1)[0]
        (before_record,) = served(service, str(old["id"]))[0]["knowledge"]["records"]
        # The app's code changes; a learn run sees it and publishes a new version.
        site.extra["/chunk-a1.js"] = ("text/javascript", b"document.querySelector('.items')")
        relearnt = httpx.post(f"{service.api}/knowledge/learn", json={"urls": [url]}, timeout=120)
        (origin,) = relearnt.json()["origins"]
        assert relearnt.json()["epoch"] == 1 and origin["new"] and origin["version"] == 2
        # The episode created before keeps its knowledge, and is told it is outdated...
        assert without_load(loads(service.proxy, old, url, 1)[0]) == without_load(before)
        # ...and, when its browser loads the changed chunk, that it is not what it learnt.
        with httpx.Client(proxy=service.proxy, headers=dict(old["header"]), timeout=30) as client:
            client.get(f"{site.origin}/chunk-a1.js", headers={"Referer": url})
            # A module's own import (its Referer is the module) of code the record lacks.
            site.extra["/unlisted.js"] = ("text/javascript", b"window.unlisted = 1;")
            client.get(f"{site.origin}/unlisted.js", headers={"Referer": f"{site.origin}/entry.js"})
        expected = {"knowledge_outdated", "knowledge_stale", "knowledge_gap"}
        events = service.wait_for_events(str(old["id"]), expected)
        kinds = {e["type"]: e for e in events}
        assert kinds["knowledge_outdated"]["newer"] == 2, events
        assert kinds["knowledge_stale"]["asset"] == f"{site.origin}/chunk-a1.js", events
        assert kinds["knowledge_gap"]["asset"] == f"{site.origin}/unlisted.js", events
        assert kinds["knowledge_gap"]["records"] == [before_record], events
        new = service.create_episode(**SETTINGS)
        assert new["knowledge"] == 1 and new["shift_digest"] != old["shift_digest"]
        assert served(service, str(new["id"])) == []
        loads(service.proxy, new, url, 1)
        assert served(service, str(new["id"]))[0]["knowledge"]["version"] == 2
        # An episode may pin the earlier epoch: it is shifted exactly as the old one was.
        again = service.create_episode(**SETTINGS, knowledge=0)
        assert loads(service.proxy, again, url, 1)[0] == before
        listed = httpx.get(f"{service.api}/knowledge").json()
        assert listed["epoch"] == 1
        assert [v["number"] for v in listed["origins"][0]["versions"]] == [1, 2]
        shown = cli("knowledge", "list", "--api-url", service.api)
        assert shown.returncode == 0 and "knowledge epoch 1" in shown.stdout, shown.stderr
    finally:
        service.stop()


def test_knowledge_that_cannot_be_had_is_named_never_guessed(
    site: UpstreamServer, tmp_path: Path
) -> None:
    url = f"{site.origin}/app"
    service = service_in(tmp_path / "service", "--learn", "off")
    try:
        # Learning is off: a page no learn run covered is refused, naming why.
        episode = service.create_episode(**SETTINGS)
        with httpx.Client(proxy=service.proxy, headers=dict(episode["header"])) as client:
            refused = client.get(url, headers=NAV)
        assert refused.status_code == 503 and "not learnt" in refused.text
        events = service.wait_for_events(str(episode["id"]), {"knowledge_error"})
        assert any(e["type"] == "knowledge_error" for e in events)
        # A learn run meeting a 500 or a redirect loop writes nothing, and says so (a timeout:
        # tests/unit/proxy/knowledge/test_learner.py, on an upstream that never answers).
        site.redirects["/loop-a"], site.redirects["/loop-b"] = "/loop-b", "/loop-a"
        for path, reason in (
            ("/error500", "answered 500"),
            ("/loop-a", "redirects in a loop"),
        ):
            failed = httpx.post(
                f"{service.api}/knowledge/learn",
                json={"urls": [url, site.origin + path]},
                timeout=60,
            )
            assert failed.status_code == 502 and reason in failed.json()["error"], failed.text
        told = cli("learn", f"{site.origin}/error500", "--api-url", service.api)
        assert told.returncode == 2 and told.stderr.startswith("skillshift-proxy: "), told.stderr
        assert "answered 500" in told.stderr and "Traceback" not in told.stderr
        listed = httpx.get(f"{service.api}/knowledge").json()["origins"]
        assert [v["pages"] for o in listed for v in o["versions"]] in ([], [0])  # none learnt
        assert httpx.post(f"{service.api}/episodes", json={"knowledge": 5}).status_code == 422
        # Learnt by a run, the page is served; its version deleted, the episode is told.
        learn = httpx.post(f"{service.api}/knowledge/learn", json={"urls": [url]}, timeout=120)
        assert learn.status_code == 200, learn.text
        pinned = service.create_episode(**SETTINGS)
        assert len(loads(service.proxy, pinned, url, 1)) == 1
        deleted = httpx.delete(
            f"{service.api}/knowledge/version",
            params={"origin": site.origin, "version": 1},
        )
        assert deleted.status_code == 200, deleted.text
        with httpx.Client(proxy=service.proxy, headers=dict(pinned["header"])) as client:
            gone = client.get(url, headers=NAV)
        assert gone.status_code == 503 and re.search(r"version 1 .* was deleted", gone.text)
    finally:
        service.stop()
