from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.processes import RedisProcess, ServiceProcess
from tests.helpers.upstream import UpstreamServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    server = RedisProcess(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def upstream() -> Iterator[UpstreamServer]:
    server = UpstreamServer("source").start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def target_upstream() -> Iterator[UpstreamServer]:
    server = UpstreamServer("target").start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """The service with the embedded store, shared by the integration tests."""
    process = ServiceProcess(tmp_path_factory.mktemp("service")).start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def redis_service(
    tmp_path_factory: pytest.TempPathFactory, redis_server: RedisProcess
) -> Iterator[ServiceProcess]:
    process = ServiceProcess(
        tmp_path_factory.mktemp("redis-service"),
        "--redis-url",
        redis_server.url,
        "--key-prefix",
        "svc:",
    ).start()
    yield process
    process.stop()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
