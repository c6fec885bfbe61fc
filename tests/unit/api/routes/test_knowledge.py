"""POST /knowledge/learn refuses what it must not fetch before it fetches anything."""

from __future__ import annotations

import httpx

from api.service.settings import Settings
from tests.unit.api.conftest import in_process


async def test_a_learn_of_a_bad_or_refused_url_fetches_nothing(api: httpx.AsyncClient) -> None:
    for url in ("ftp://x.test/", "http://", "http://[bad/", "not a url"):
        answer = await api.post("/knowledge/learn", json={"urls": [url]})
        assert answer.status_code == 422, (url, answer.text)
        assert answer.json()["error"].startswith("urls: ")
    # The service's own API is never an upstream, however its address is spelled; outside an
    # allow-list, nothing is.
    cases = [
        (Settings(api=("127.0.0.1", 8081)), "http://localhost:8081/episodes"),
        (Settings(api=("127.0.0.1", 8081)), "http://127.1:8081/"),
        (Settings(upstream_allow="*.allowed.test"), "http://elsewhere.test/"),
    ]
    for settings, url in cases:
        async with in_process(settings, base_url="http://api") as limited:
            answer = await limited.post("/knowledge/learn", json={"urls": [url]})
            assert answer.status_code == 403, (url, answer.text)
            assert "not an upstream this service may reach" in answer.json()["error"]
            assert (await limited.get("/knowledge")).json()["origins"] == []
