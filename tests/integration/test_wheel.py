"""The distributions as users install them: wheels built from a copy of the checkout, each
installed into a really fresh venv (no --system-site-packages, nothing from the checkout), and
run from a directory outside the checkout.

- skillshift-proxy: `skillshift-proxy serve` starts, and all six conditions are served through
  the proxy (every package and data file the service imports made it into the wheel);
- skillshift-client: importable with httpx alone, without the server's dependencies.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import processes
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import UpstreamServer
from tests.helpers.wheels import built_and_installed, run

pytestmark = pytest.mark.wheel

REPO = Path(__file__).resolve().parents[2]
NAV = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"}
SERVER_ONLY = {"mitmproxy", "fastapi", "uvicorn", "starlette", "lxml", "pydantic", "playwright"}


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where installed programs run from: not the checkout, so nothing is imported from it."""
    path = tmp_path_factory.mktemp("outside")
    assert REPO not in path.parents
    return path


@pytest.fixture(scope="module")
def proxy_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built, venv = built_and_installed("proxy", tmp_path_factory.mktemp("wheels"))
    assert built.name.startswith("skillshift_proxy-")
    assert REPO not in venv.parents
    return venv


@pytest.fixture(scope="module")
def installed_service(
    proxy_venv: Path, outside: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceProcess]:
    """The installed `skillshift-proxy serve`, run from outside the checkout."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONPATH", raising=False)
        process = ServiceProcess(tmp_path_factory.mktemp("wheel-service"))
        process.args[0] = str(proxy_venv / "bin" / "skillshift-proxy")
        patch.setattr(processes, "REPO", outside)  # the directory the service is started in
        process.start()
    yield process
    process.stop()


def test_installed_packages_come_from_the_venv(proxy_venv: Path, outside: Path) -> None:
    code = (
        "import api, proxy, shifts, shifts.perceptual, shifts.references, sites, api.calibration;"
        "import api.oracle.run, api.service.cli, skillshift_client, skillshift_client.playwright;"
        "print(api.__file__); print(skillshift_client.__file__)"
    )
    printed = run(proxy_venv / "bin" / "python", "-c", code, cwd=outside).split()
    site_packages = next((proxy_venv / "lib").glob("python3*/site-packages"))
    assert all(Path(path).is_relative_to(site_packages) for path in printed), printed
    assert not (proxy_venv / "bin" / "skillshift").exists()  # the harness's command's name
    data = [site_packages / "shifts/assets", site_packages / "api/ui"]
    assert all(any(folder.iterdir()) for folder in data)
    assert (site_packages / "api/oracle/page.js").is_file()  # the oracle's page script


def test_all_six_conditions_through_the_installed_service(
    installed_service: ServiceProcess, upstream: UpstreamServer, target_upstream: UpstreamServer
) -> None:
    service = installed_service
    version = httpx.get(f"{service.api}/version", timeout=5).json()["version"]
    assert version != "0+unknown"  # the distribution's metadata is found under its new name
    targets = {upstream.origin: target_upstream.origin}
    direct = httpx.get(f"{upstream.origin}/variant", headers=NAV).content
    pages: dict[str, bytes] = {}
    for condition in ("Src", "Src-Perc", "Src-Exec", "Tgt", "Tgt-Perc", "Tgt-Exec"):
        episode = service.create_episode(condition=condition, seed=3, targets=targets)
        with service.client(episode) as client:
            response = client.get(f"{upstream.origin}/variant", headers=NAV)
            script = client.get(f"{upstream.origin}/__ss/r.js?v=1")
        assert response.status_code == 200, (condition, response.text)
        pages[condition] = response.content
        assert script.status_code == 200, (condition, script.text)
        assert script.headers["content-type"].startswith("text/javascript"), condition
        assert len(script.content) > 100
    assert pages["Src"] == direct  # bytes untouched
    for condition in ("Src-Exec", "Tgt-Exec"):
        assert b'<script src="/__ss/r.js' in pages[condition], condition
    for condition in ("Tgt", "Tgt-Perc", "Tgt-Exec"):
        assert b'<h1 id="title">target</h1>' in pages[condition], condition
    assert b'<h1 id="title">source</h1>' in pages["Src-Perc"]
    assert pages["Src-Perc"] != pages["Src"]  # relabelled, restyled, locators moved
    assert pages["Tgt-Perc"] != pages["Tgt"]


def test_docs_of_the_installed_service_are_local(installed_service: ServiceProcess) -> None:
    page = httpx.get(f"{installed_service.api}/docs", timeout=5)
    assert page.status_code == 200 and "https://" not in page.text
    css = httpx.get(f"{installed_service.api}/docs/static/swagger-ui.css", timeout=5)
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")


def test_client_installs_alone(tmp_path: Path, outside: Path) -> None:
    built, venv = built_and_installed("client", tmp_path)
    assert built.name.startswith("skillshift_client-")
    assert REPO not in venv.parents
    python = venv / "bin" / "python"
    code = "import skillshift_client as c; print(c.__file__); c.SkillShift; c.AsyncSkillShift"
    assert Path(run(python, "-c", code, cwd=outside).strip()).is_relative_to(venv)
    installed = {
        line.split("==")[0].lower().replace("_", "-")
        for line in run(python, "-m", "pip", "list", "--format=freeze", cwd=outside).split()
    }
    assert "skillshift-client" in installed and "httpx" in installed
    assert not installed & SERVER_ONLY, installed & SERVER_ONLY
    assert not list((venv / "bin").glob("skillshift*"))  # no command beside the harness's
