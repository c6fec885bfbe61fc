"""deploy/: the container, compose and Kubernetes files validated statically, and their
topology (replicas sharing one redis-server behind a balancer) run for real with processes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from api.service.settings import Settings
from tests.helpers.processes import HAProxyProcess, RedisProcess, ServiceProcess
from tests.helpers.upstream import UpstreamServer

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


def tool(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    return str(path) if path.exists() else str(shutil.which(name))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def test_compose_file_matches_the_compose_spec() -> None:
    result = run(
        tool("check-jsonschema"),
        "--builtin-schema",
        "vendor.compose-spec",
        str(DEPLOY / "compose.yaml"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    environment = compose["services"]["skillshift"]["environment"]
    value = environment["SKILLSHIFT_TARGETS"].replace("${SITE_HOST:-127.0.0.1}", "h")
    targets = Settings(targets=value).targets
    assert targets == (("http://h:8080", "http://h:8081"), ("http://h", "http://h:7780"))
    published = {
        name: service["ports"][0].split(":")[0]
        for name, service in compose["services"].items()
        if "ports" in service
    }
    # The benchmark's documented host ports.
    assert published == {
        "gitlab12": "8080",
        "gitlab16": "8081",
        "magento19": "80",
        "magento24": "7780",
        "wordpress": "8000",
    }


def test_kubernetes_manifests_are_valid() -> None:
    manifests = sorted(str(path) for path in (DEPLOY / "k8s").glob("*.yaml"))
    result = run(tool("kubernetes-validate"), "--strict", *manifests)
    assert result.returncode == 0, result.stdout + result.stderr
    documents = [d for m in manifests for d in yaml.safe_load_all(Path(m).read_text())]
    kinds = Counter(document["kind"] for document in documents)
    assert kinds == {"Deployment": 2, "Service": 2, "Secret": 1}
    proxy = next(
        d for d in documents if d["metadata"]["name"] == "skillshift" and d["kind"] == "Deployment"
    )
    container = proxy["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    token = next(e for e in container["env"] if e["name"] == "SKILLSHIFT_API_TOKEN")
    assert token["valueFrom"]["secretKeyRef"]["name"] == "skillshift-api"


def test_dockerfile_lints_clean_and_copies_every_package() -> None:
    result = run(tool("hadolint"), str(DEPLOY / "Dockerfile"))
    assert result.returncode == 0, result.stdout + result.stderr
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    find = pyproject["tool"]["setuptools"]["packages"]["find"]
    # The top folder of every package the distribution finds (skillshift_client: clients/).
    folders = {
        Path(where, pattern.rstrip("*")).parts[0]
        for where in find["where"]
        for pattern in find["include"]
        if (REPO / where / pattern.rstrip("*")).is_dir()
    }
    copied = set(re.findall(r"^COPY (\w+) ", (DEPLOY / "Dockerfile").read_text(), re.M))
    assert folders == copied


def rewritten(replica: ServiceProcess) -> int:
    metrics = httpx.get(f"{replica.api}/metrics").text
    return int(re.search(r"^skillshift_pages_rewritten_total (\d+)", metrics, re.M).group(1))


@pytest.fixture
def topology(tmp_path: Path) -> Iterator[tuple[list[ServiceProcess], HAProxyProcess, str]]:
    """Two replicas on one redis-server; one balancer for the proxies, one for the APIs."""
    for name in ("redis", "replica0", "replica1"):
        (tmp_path / name).mkdir()
    redis = RedisProcess(tmp_path / "redis").start()
    replicas = [
        ServiceProcess(tmp_path / f"replica{index}", "--redis-url", redis.url).start()
        for index in range(2)
    ]
    proxy = HAProxyProcess(tmp_path, *(replica.proxy_port for replica in replicas))
    api = HAProxyProcess(tmp_path, *(replica.api_port for replica in replicas))
    yield replicas, proxy, f"http://127.0.0.1:{api.port}"
    for balancer in (proxy, api):
        balancer.stop()
    for replica in replicas:
        replica.stop()
    redis.stop()


def test_replicas_behind_a_balancer_act_as_one_service(
    topology: tuple[list[ServiceProcess], HAProxyProcess, str], upstream: UpstreamServer
) -> None:
    replicas, proxy, api = topology
    created = httpx.post(f"{api}/episodes", json={"condition": "Src-Exec", "regime": "once"})
    episode = created.json()
    proxy_url = f"http://{episode['id']}:{episode['token']}@127.0.0.1:{proxy.port}"
    for _ in range(12):  # a new connection each time: the balancer alternates replicas
        with httpx.Client(proxy=proxy_url, timeout=10) as client:
            page = client.get(f"{upstream.origin}/page.html")
        assert page.status_code == 200 and "/__ss/r.js" in page.text
    # Each replica rewrote its share (its own counters), into one shared event stream.
    assert [rewritten(replica) for replica in replicas] == [6, 6]
    events = httpx.get(f"{api}/episodes/{episode['id']}/events?limit=1000").json()["events"]
    assert sum(e["type"] == "page_served" for e in events) == 12
    assert sum(e["type"] == "popup_injected" for e in events) == 1  # `once`, in total
    # No admin API is reachable through the proxy: not a replica's own (which it knows), nor
    # its sibling's or the balancer's (which it does not): every episode's token is there.
    other = httpx.post(f"{api}/episodes", json={"condition": "Src"}).json()["id"]
    apis = [api, *(replica.api for replica in replicas)]
    for address in apis:
        with httpx.Client(proxy=proxy_url, timeout=10) as client:
            listed = client.get(f"{address}/episodes")
            deleted = client.delete(f"{address}/episodes/{other}")
        assert listed.status_code == deleted.status_code == 403, (address, listed.text)
        assert "token" not in listed.text  # (refused by the API, or by the proxy's own guard)
    assert httpx.get(f"{api}/episodes/{other}").status_code == 200
    # A replica dies in the middle of the episode: the balancer skips it, no request fails,
    # every page is still shifted, and the episode's events go on with none lost or twice.
    replicas[0].stop()
    for _ in range(4):
        with httpx.Client(proxy=proxy_url, timeout=10) as client:
            page = client.get(f"{upstream.origin}/page.html")
        assert page.status_code == 200 and "/__ss/r.js" in page.text
        assert httpx.get(f"{api}/episodes/{episode['id']}").status_code == 200
    events = httpx.get(f"{api}/episodes/{episode['id']}/events?limit=1000").json()["events"]
    served = [e["load_index"] for e in events if e["type"] == "page_served"]
    assert sorted(served) == list(range(1, 17))
    assert len({e["id"] for e in events}) == len(events)
