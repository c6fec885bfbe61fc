"""Faults caused for real: the store dies and comes back, while the proxy serves."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from tests.helpers.processes import RedisProcess, ServiceProcess
from tests.helpers.upstream import UpstreamServer

NAV = {"Sec-Fetch-Dest": "document"}


def test_a_store_down_at_start_is_said_and_the_service_recovers_once_it_is_up(
    tmp_path: Path,
) -> None:
    (tmp_path / "redis").mkdir()
    redis = RedisProcess(tmp_path / "redis")  # (its port picked, nothing listening yet)
    service = ServiceProcess(tmp_path, "--redis-url", redis.url).start()
    try:
        assert "the episode store is not reachable yet" in service.log()
        assert httpx.get(f"{service.api}/health").status_code == 503
        redis.start()
        deadline = time.monotonic() + 15
        while httpx.get(f"{service.api}/health").status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert service.create_episode(condition="Src")["condition"] == "Src"
    finally:
        service.stop()
        redis.stop()


def test_redis_killed_and_restarted(tmp_path: Path, upstream: UpstreamServer) -> None:
    redis = RedisProcess(tmp_path / "redis", appendonly=True)
    (tmp_path / "redis").mkdir()
    redis.start()
    service = ServiceProcess(tmp_path, "--redis-url", redis.url).start()
    try:
        episode = service.create_episode(condition="Src-Exec", regime="multiple")
        url = f"{upstream.origin}/page.html"
        with service.client(episode) as client:
            assert client.get(url, headers=NAV).status_code == 200
            before = service.events(str(episode["id"]))
            redis.kill()
            # Down: bound requests fail closed with a clear 503, never an unshifted page.
            down = client.get(url, headers=NAV)
            assert down.status_code == 503 and "store is unavailable" in down.text
            assert b"Lorem ipsum" not in down.content
            health = httpx.get(f"{service.api}/health")
            assert health.status_code == 503 and health.json()["store"]["ok"] is False
            # Back (same port, its append-only file): the service recovers by itself.
            redis.start()
            deadline = time.monotonic() + 15
            while (response := client.get(url, headers=NAV)).status_code != 200:
                assert time.monotonic() < deadline, response.text
                time.sleep(0.2)
            assert "/__ss/r.js" in response.text
        after = service.events(str(episode["id"]))
        assert after[: len(before)] == before  # accepted before the crash: intact
        assert httpx.get(f"{service.api}/health").json()["status"] == "ok"
    finally:
        service.stop()
        redis.stop()
