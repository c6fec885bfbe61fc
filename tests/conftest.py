from __future__ import annotations

import functools
import os
import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx._transports.default
import pytest
from hypothesis import settings

from tests.helpers.ports import forget_reservations
from tests.helpers.processes import RedisProcess, ServiceProcess
from tests.helpers.upstream import UpstreamServer

# No test passes or fails by machine speed: Hypothesis fails an example that takes over 200 ms,
# which a property test of a few milliseconds does on a loaded machine (seen beside two
# browser trials). Examples are bounded by their size, not a clock.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


def _share_default_ssl_contexts() -> None:
    """httpx builds a new SSL context for every client it makes, and every proxy a client
    mounts, loading the whole CA bundle each time (40-50 ms), even for a client that only ever
    speaks plain HTTP to 127.0.0.1; the tests make thousands of short-lived ones (`httpx.get`,
    `ServiceProcess.create_episode`, ...): minutes of a suite run. Here the default context
    (verify=True, no client certificate) is built once per CA setting and shared, as the
    clients of one long-lived process would share theirs; any other (verify=False, a path, a
    test's own context) is made exactly as before. What the clients do is unchanged: the
    same verification, and httpcore sets the ALPN protocols on the context itself before each
    TLS handshake, as it does on a context of a client's own."""
    make = httpx._transports.default.create_ssl_context

    @functools.cache
    def default(trust_env: bool, cafile: str | None, capath: str | None) -> ssl.SSLContext:
        return make(verify=True, cert=None, trust_env=trust_env)

    def create_ssl_context(
        verify: ssl.SSLContext | str | bool = True,
        cert: httpx._types.CertTypes | None = None,
        trust_env: bool = True,
    ) -> ssl.SSLContext:
        if verify is True and cert is None:
            environ = os.environ if trust_env else {}
            return default(trust_env, environ.get("SSL_CERT_FILE"), environ.get("SSL_CERT_DIR"))
        return make(verify=verify, cert=cert, trust_env=trust_env)

    httpx._transports.default.create_ssl_context = create_ssl_context  # type: ignore[assignment]


_share_default_ssl_contexts()


# The modules that take minutes, longest first (their serial times: about 700, 200, 130, 90,
# 80, 75 and 70 s): `scripts/test` spreads the suite over two workers a module at a time, in
# this order, so the long ones start at once and the short ones fill in around them rather
# than one long module running alone at the end. The others keep their collected order.
LONGEST_FIRST = (
    "tests/integration/test_lab.py",
    "tests/integration/test_wordpress.py",
    "tests/integration/test_bench_smoke.py",
    "tests/integration/test_browsergym_sweep.py",
    "tests/integration/test_verdicts.py",
    "tests/integration/test_ui.py",
    "tests/integration/test_cli.py",
)


def pytest_configure(config: pytest.Config) -> None:
    # The run's id, chosen here rather than by xdist so that the controller knows which ports
    # folder to remove at the end (tests/helpers/ports.py); xdist hands it to its workers.
    if not hasattr(config, "workerinput") and getattr(config.option, "testrunuid", 0) is None:
        config.option.testrunuid = uuid.uuid4().hex


def pytest_unconfigure(config: pytest.Config) -> None:
    run = getattr(config.option, "testrunuid", None)
    if not hasattr(config, "workerinput") and run:
        forget_reservations(run)


@pytest.hookimpl(trylast=True)  # after pytest's own grouping of items by their fixtures
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not hasattr(config, "workerinput"):
        return  # one process: the order is the collected one (what `--sw` counts on)
    rank = {module: index for index, module in enumerate(LONGEST_FIRST)}
    # A stable sort on the module alone: the order within a module is left as it was.
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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
