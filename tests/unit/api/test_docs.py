"""/docs and /redoc load everything from the API itself: no CDN, so they work offline."""

from __future__ import annotations

import re

import httpx
import pytest

from api.service.settings import Settings
from tests.unit.api.conftest import in_process

CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


def referenced(html: str) -> list[str]:
    """Every URL the page loads or links to (src=, href=, and the url: given to Swagger UI)."""
    attributes = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)
    in_script = re.findall(r"""\burl\s*:\s*["']([^"']+)["']""", html)
    spec = re.findall(r"""spec-url\s*=\s*["']([^"']+)["']""", html)
    return attributes + in_script + spec


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_docs_reference_no_external_host(api: httpx.AsyncClient, page: str) -> None:
    response = await api.get(page)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "http://" not in response.text and "https://" not in response.text
    urls = referenced(response.text)
    assert "/openapi.json" in urls
    # Relative to this API only: no scheme, no protocol-relative //host.
    assert all(url.startswith("/") and not url.startswith("//") for url in urls), urls
    assets = [url for url in urls if url != "/openapi.json"]
    assert assets and all(url.startswith("/docs/static/") for url in assets), urls
    for url in assets:
        asset = await api.get(url)
        assert asset.status_code == 200, url
        suffix = url[url.rindex(".") :]
        assert asset.headers["content-type"].split(";")[0] == CONTENT_TYPES[suffix], url
        assert len(asset.content) > 1000, url


async def test_swagger_ui_is_one_that_reads_openapi_3_1(api: httpx.AsyncClient) -> None:
    # FastAPI writes OpenAPI 3.1, which Swagger UI renders from version 5 on.
    assert (await api.get("/openapi.json")).json()["openapi"].startswith("3.1")
    bundle = (await api.get("/docs/static/swagger-ui-bundle.js")).text
    version = re.search(r'PACKAGE_VERSION:"([0-9]+)\.', bundle)
    assert "SwaggerUIBundle" in bundle and version and int(version.group(1)) >= 5


async def test_unknown_docs_asset_is_404(api: httpx.AsyncClient) -> None:
    assert (await api.get("/docs/static/../app.py")).status_code == 404
    assert (await api.get("/docs/static/index.html")).status_code == 404


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_docs_pages_may_load_only_from_the_api(api: httpx.AsyncClient, page: str) -> None:
    """ReDoc's sidebar shows its vendor's logo from a CDN: the page's policy keeps the browser
    from fetching it (tests/integration/test_browser.py watches Chromium load both pages)."""
    policy = (await api.get(page)).headers["content-security-policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'" and directives["img-src"] == "'self' data:"
    assert "http" not in policy


async def test_redoc_is_served_without_its_vendors_logo(api: httpx.AsyncClient) -> None:
    bundle = (await api.get("/docs/static/redoc.standalone.js")).text
    assert "Redoc" in bundle and len(bundle) > 500_000
    assert "cdn.redoc.ly" not in bundle  # else ReDoc's sidebar fetches its logo from there


async def test_the_favicon_answers_without_the_token() -> None:
    async with in_process(Settings(api_token="s3cret"), base_url="http://api") as api:
        icon = await api.get("/favicon.ico")
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/png"
        assert icon.content.startswith(b"\x89PNG")


async def test_docs_are_open_but_the_schema_needs_the_token() -> None:
    async with in_process(Settings(api_token="s3cret"), base_url="http://api") as api:
        assert (await api.get("/docs")).status_code == 200
        assert (await api.get("/redoc")).status_code == 200
        assert (await api.get("/docs/static/swagger-ui.css")).status_code == 200
        assert (await api.get("/openapi.json")).status_code == 401
        with_token = await api.get("/openapi.json", headers={"Authorization": "Bearer s3cret"})
        assert with_token.status_code == 200
