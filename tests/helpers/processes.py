"""Real processes for tests: redis-server and the skillshift service, on free ports."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.helpers.ports import free_port, wait_for_port

REPO = Path(__file__).resolve().parents[2]


def scratch_directory(prefix: str) -> Path:
    """A new directory for a run's processes (their logs, Redis's files), removed when this
    Python exits, however it exits short of a kill: a benchmark is run again and again, and
    each run would leave its own behind."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


class RedisProcess:
    def __init__(self, workdir: Path, appendonly: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (./scripts/bootstrap installs it)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.workdir = workdir
        self.args = [
            binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes" if appendonly else "no",
            # Every write in the file before its reply: with the default (a write each second,
            # put off while an fsync is slow), a kill on a busy disk loses what it accepted.
            "--appendfsync",
            "always",
            "--dir",
            str(workdir),
        ]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> RedisProcess:
        self.process = subprocess.Popen(self.args, stdout=subprocess.DEVNULL)
        wait_for_port(self.port)
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def kill(self) -> None:
        """Die as in a crash: no shutdown, no final save."""
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)


class ServiceProcess:
    """`skillshift serve` as a user runs it, on free ports, with its own CA directory."""

    def __init__(self, workdir: Path, *extra_args: str, env: dict[str, str] | None = None) -> None:
        self.proxy_port = free_port()
        self.api_port = free_port()
        self.confdir = workdir / "mitmproxy"
        self.log_path = workdir / f"service-{self.proxy_port}.log"
        self.args = [
            str(Path(sys.executable).with_name("skillshift-proxy")),
            "serve",
            "--proxy",
            f"127.0.0.1:{self.proxy_port}",
            "--api",
            f"127.0.0.1:{self.api_port}",
            "--confdir",
            str(self.confdir),
            "--log-level",
            "warning",
            # Tests only ever talk to loopback, whatever a page asks the browser to fetch.
            "--upstream-allow",
            "127.0.0.1,localhost",
            *extra_args,
        ]
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None
        self.api = f"http://127.0.0.1:{self.api_port}"
        self.demo: str | None = None
        self.desktop_port: int | None = None  # set by whoever passes --desktop-proxy
        self.proxy = f"http://127.0.0.1:{self.proxy_port}"

    def start(self) -> ServiceProcess:
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            self.args, stdout=self._log, stderr=subprocess.STDOUT, env=self.env, cwd=REPO
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"service exited early:\n{self.log()}")
            try:
                # 401: up, behind its --api-token
                if httpx.get(f"{self.api}/version", timeout=1).status_code in (200, 401):
                    wait_for_port(self.proxy_port)
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"service did not start:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM) -> float:
        """Stop with a signal; returns how long the process took to exit."""
        assert self.process is not None
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return time.monotonic() - started

    def create_episode(self, **config: object) -> dict[str, object]:
        response = httpx.post(f"{self.api}/episodes", json=config, timeout=5)
        assert response.status_code == 201, response.text
        return dict(response.json())

    def counter(self, name: str) -> int:
        """A counter of the service's /metrics (`name` without the `skillshift_` prefix)."""
        text = httpx.get(f"{self.api}/metrics", timeout=5).text
        found = re.search(rf"^skillshift_{name} (\d+)$", text, re.MULTILINE)
        assert found, text
        return int(found.group(1))

    def events(self, episode_id: str) -> list[dict[str, object]]:
        response = httpx.get(f"{self.api}/episodes/{episode_id}/events?limit=1000", timeout=5)
        response.raise_for_status()
        return list(response.json()["events"])

    def wait_for_events(
        self, episode_id: str, wanted: set[str], timeout: float = 10
    ) -> list[dict[str, object]]:
        """The episode's events once every wanted type is among them (or the timeout passed)."""
        deadline = time.monotonic() + timeout
        while True:
            events = self.events(episode_id)
            if wanted <= {str(event["type"]) for event in events} or time.monotonic() > deadline:
                return events
            time.sleep(0.1)

    def client(self, episode: dict[str, object] | None = None, **kwargs: object) -> httpx.Client:
        """An HTTP client that goes through the proxy, bound by header when given an episode."""
        headers = dict(episode["header"]) if episode else {}  # type: ignore[call-overload]
        return httpx.Client(proxy=self.proxy, headers=headers, timeout=10, **kwargs)  # type: ignore[arg-type]


def start_all(services: list[ServiceProcess]) -> list[ServiceProcess]:
    """Start several services, as many at once as there are cores (most of a start is the
    interpreter importing the service, on one core), each waiting for its own API and proxy
    as `start` does. If one does not start, those that did are stopped and its error raised."""
    workers = max(1, min(len(services), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        starts = [pool.submit(service.start) for service in services]
        failures = [start.exception() for start in starts]
    if any(failures):
        for service, failure in zip(services, failures, strict=True):
            if failure is None:
                service.stop()
        raise next(failure for failure in failures if failure)
    return services


HAPROXY_CONFIG = REPO / "deploy" / "haproxy.cfg"


def deployed_haproxy() -> tuple[str, str]:
    """The `defaults` section of deploy/haproxy.cfg and the options of its servers (health
    checks), so the tests run the balancer as it is deployed."""
    lines = HAPROXY_CONFIG.read_text().splitlines()
    start = lines.index("defaults")
    section = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        section.append(line)
    server = next(line for line in lines if line.strip().startswith("server "))
    return "\n".join(section), server.split(None, 3)[3]


class HAProxyProcess:
    """A real HAProxy in front of some ports, configured as deploy/haproxy.cfg (TCP, round
    robin, each connection to the next live backend; a dead one is skipped: health checks and
    redispatch on a refused connect)."""

    def __init__(self, workdir: Path, *backend_ports: int) -> None:
        binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
        if not Path(binary).exists():
            raise RuntimeError("haproxy is not installed (./scripts/bootstrap installs it)")
        self.port = free_port()
        defaults, server_options = deployed_haproxy()
        servers = "\n".join(
            f"    server r{n} 127.0.0.1:{port} {server_options}"
            for n, port in enumerate(backend_ports)
        )
        config = workdir / f"haproxy-{self.port}.cfg"
        config.write_text(
            f"{defaults}\n"
            f"frontend front\n    bind 127.0.0.1:{self.port}\n    default_backend replicas\n"
            f"backend replicas\n    balance roundrobin\n{servers}\n"
        )
        # -db: in the foreground, so it is stopped by its PID like every other process here.
        self.process = subprocess.Popen(
            [binary, "-db", "-f", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_agent(
    python: Path | str, api: str, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """An agent's script (an example) in its own Python, told the API by SKILLSHIFT_API_URL
    and without PYTHONPATH: it imports the skillshift_client installed there, as an agent's
    environment does, not the checkout's."""
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            "SKILLSHIFT_API_URL": api,
        },
        timeout=timeout,
        check=False,
    )
