"""The admin page's session: the only way a browser may change state through the API."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest

from api.routes.ui import SESSION_COOKIE
from api.service.settings import Settings
from tests.unit.api.conftest import in_process

BROWSER = "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36"
OWN = "http://127.0.0.1:8081"


def client(settings: Settings) -> httpx.AsyncClient:
    return in_process(settings, base_url=OWN, headers={"User-Agent": BROWSER})


@pytest.fixture
async def api() -> AsyncIterator[httpx.AsyncClient]:
    async with client(Settings()) as api:
        yield api


async def test_page_and_assets_are_served_locally(api: httpx.AsyncClient) -> None:
    page = await api.get("/ui")
    assert page.status_code == 200 and "<title>skillshift admin</title>" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    # Nothing from a CDN: every script, stylesheet and link is served by the API itself.
    assert re.findall(r'(?:src|href)="([^"]*)"', page.text)
    assert all(url.startswith("/") for url in re.findall(r'(?:src|href)="([^"]*)"', page.text))
    for name, kind in (("app.js", "javascript"), ("style.css", "css")):
        asset = await api.get(f"/ui/static/{name}")
        assert asset.status_code == 200 and kind in asset.headers["content-type"]
    assert (await api.get("/ui/static/..%2Fui.py")).status_code == 404


async def test_browser_posts_need_the_page_session_header_and_origin(
    api: httpx.AsyncClient,
) -> None:
    page_headers = {"X-SkillShift-UI": "1", "Origin": OWN}
    refused = await api.post("/episodes", json={}, headers=page_headers)
    assert refused.status_code == 403  # no session yet
    assert SESSION_COOKIE in (await api.get("/ui")).cookies
    created = await api.post("/episodes", json={"seed": 4}, headers=page_headers)
    assert created.status_code == 201, created.text
    for headers in ({"Origin": OWN}, {"X-SkillShift-UI": "1", "Origin": "http://evil.test"}, {}):
        response = await api.post("/episodes", json={}, headers=headers)
        assert response.status_code == 403, headers
    listed = (await api.get("/episodes")).json()["episodes"]
    assert [episode["seed"] for episode in listed] == [4]


async def test_no_session_for_a_foreign_host_name(api: httpx.AsyncClient) -> None:
    # DNS rebinding: a page of evil.test resolved to loopback reaches us with its own Host.
    response = await api.get("/ui", headers={"Host": "evil.test:8081"})
    assert response.status_code == 200 and SESSION_COOKIE not in response.cookies
    cookie = response.headers.get("set-cookie", "")
    assert cookie == ""


async def test_with_a_token_the_page_trades_it_for_a_session() -> None:
    async with client(Settings(api_token="s3cret")) as api:
        page = await api.get("/ui")
        assert page.status_code == 200 and SESSION_COOKIE not in page.cookies
        assert (await api.get("/episodes")).status_code == 401
        headers = {"X-SkillShift-UI": "1", "Origin": OWN}
        wrong = await api.post("/ui/session", json={"token": "nope"}, headers=headers)
        assert wrong.status_code == 401 and wrong.json()["error"] == "wrong token"
        foreign = await api.post(
            "/ui/session", json={"token": "s3cret"}, headers={**headers, "Origin": "http://x"}
        )
        assert foreign.status_code == 403
        right = await api.post("/ui/session", json={"token": "s3cret"}, headers=headers)
        assert right.status_code == 204 and SESSION_COOKIE in right.cookies
        assert "samesite=strict" in right.headers["set-cookie"].lower()
        assert "httponly" in right.headers["set-cookie"].lower()
        assert (await api.get("/episodes")).status_code == 200
        assert (await api.post("/episodes", json={}, headers=headers)).status_code == 201


async def test_preview_validates_its_request(api: httpx.AsyncClient) -> None:
    await api.get("/ui")
    headers = {"X-SkillShift-UI": "1", "Origin": OWN}
    response = await api.post("/ui/preview", json={"url": "file:///etc/passwd"}, headers=headers)
    assert response.status_code == 422 and "url" in response.json()["error"]


async def test_preview_without_chromium_is_a_clear_503(
    api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.oracle import preview

    # A machine without Chromium: the real launch fails, and the page says why.
    monkeypatch.setattr(preview, "CHROMIUM", "/nonexistent/chromium")
    await api.get("/ui")
    headers = {"X-SkillShift-UI": "1", "Origin": OWN}
    response = await api.post("/ui/preview", json={"url": "http://127.0.0.1:9/"}, headers=headers)
    assert response.status_code == 503 and "/nonexistent/chromium" in response.json()["error"]
    episodes = (await api.get("/episodes")).json()["episodes"]
    assert episodes == []  # the temporary episodes are gone


async def test_preview_of_an_unknown_site_is_a_clear_422(api: httpx.AsyncClient) -> None:
    await api.get("/ui")
    headers = {"X-SkillShift-UI": "1", "Origin": OWN}
    body = {"url": "http://127.0.0.1:9/", "site": "nope"}
    response = await api.post("/ui/preview", json=body, headers=headers)
    assert response.status_code == 422 and "unknown site" in response.json()["error"]
    assert (await api.get("/episodes")).json()["episodes"] == []
