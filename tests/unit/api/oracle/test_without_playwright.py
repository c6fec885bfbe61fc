"""Without the `browser` extra (Playwright) the service runs with `--learn static`, and what needs
a browser says how to get it, with its own status: never a 500 or a traceback. (Serving with
the browser learner refuses to start without it: tests/unit/api/service/test_settings.py.)"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import httpx
import pytest

from api.service.settings import Settings
from tests.unit.api.conftest import in_process
from tests.unit.api.routes.test_ui_session import OWN, client

EXTRA = "pip install 'skillshift-proxy[browser]'"


WITHOUT_BROWSER = Settings(learn="static")


@pytest.fixture
def no_playwright(monkeypatch: pytest.MonkeyPatch) -> None:
    # `None` in sys.modules makes every import of it fail as a missing module does.
    for name in ("playwright", "playwright.async_api", "playwright.sync_api"):
        monkeypatch.setitem(sys.modules, name, None)


@pytest.fixture
async def api(no_playwright: None) -> AsyncIterator[httpx.AsyncClient]:
    async with in_process(WITHOUT_BROWSER, base_url="http://api") as client:
        yield client


async def test_the_browser_check_says_which_extra_it_needs(api: httpx.AsyncClient) -> None:
    body = {"url": "http://127.0.0.1:9/", "condition": "Src-Perc"}
    response = await api.post("/checks/browser", json=body)
    assert response.status_code == 501
    message = f"the browser check cannot run without Playwright, which is not installed: {EXTRA}"
    assert response.json() == {"error": message, "status": 501}
    assert (await api.get("/episodes", params={"include_internal": "true"})).json() == {
        "episodes": []
    }


@pytest.mark.usefixtures("no_playwright")
async def test_the_preview_says_which_extra_it_needs() -> None:
    async with client(WITHOUT_BROWSER) as page:  # the admin page's own session
        await page.get("/ui")
        headers = {"X-SkillShift-UI": "1", "Origin": OWN}
        body = {"url": "http://127.0.0.1:9/"}
        response = await page.post("/ui/preview", json=body, headers=headers)
    assert response.status_code == 501 and EXTRA in response.json()["error"]


async def test_the_rest_of_the_api_works_without_it(api: httpx.AsyncClient) -> None:
    created = await api.post("/episodes", json={"condition": "Src-Perc"})
    assert created.status_code == 201
    assert (await api.get("/health")).status_code == 200
