from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from api.oracle.browser import CHROMIUM, launch_chromium
from tests.helpers.ports import free_port, free_port_pair
from tests.helpers.processes import RedisProcess, ServiceProcess
from tests.helpers.wordpress import wordpress_lab


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Module scope: sync Playwright keeps an event loop running in this thread while it lives,
    # which would stop pytest-asyncio from running any async test collected after it.
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing (./scripts/bootstrap installs chromium)")
    with sync_playwright() as playwright:
        launched = launch_chromium(playwright)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def demo_service(
    tmp_path_factory: pytest.TempPathFactory, redis_server: RedisProcess
) -> Iterator[ServiceProcess]:
    """The service on Redis, serving its demo shop (a real multi-page site with a strict CSP)."""
    demo_port = free_port_pair()
    process = ServiceProcess(
        tmp_path_factory.mktemp("demo-service"),
        "--redis-url",
        redis_server.url,
        "--key-prefix",
        "demo:",
        "--demo",
        "--demo-port",
        str(demo_port),
    )
    process.demo = f"http://127.0.0.1:{demo_port}"
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def memory_demo_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """The service as `./scripts/serve` runs it (embedded store and the demo shop), with a
    desktop listener."""
    demo_port = free_port_pair()
    desktop_port = free_port()
    process = ServiceProcess(
        tmp_path_factory.mktemp("memory-demo"),
        "--demo",
        "--demo-port",
        str(demo_port),
        "--desktop-proxy",
        f"127.0.0.1:{desktop_port}",
    )
    process.desktop_port = desktop_port
    process.demo = f"http://127.0.0.1:{demo_port}"
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def wordpress(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A real WordPress (Debian's packages) with seeded content: source and target theme."""
    with wordpress_lab(tmp_path_factory.mktemp("wordpress")) as env:
        yield env
