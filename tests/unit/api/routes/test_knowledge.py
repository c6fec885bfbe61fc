"""POST /knowledge/learn refuses what it must not fetch before it fetches anything; a record
is looked up by its digest alone."""

from __future__ import annotations

from pathlib import Path

import httpx

from api.app import create_app
from api.service.settings import Settings
from proxy.knowledge import KnowledgeLookup, Learner, open_knowledge
from proxy.store import MemoryStore
from tests.unit.api.conftest import in_process


async def test_a_learn_of_a_bad_or_refused_url_fetches_nothing(api: httpx.AsyncClient) -> None:
    # (the last: where the scripts JSON screens bring are learnt, no page to fetch)
    screen_scripts = "http://app.test/.skillshift/screen-scripts"
    for url in ("ftp://x.test/", "http://", "http://[bad/", "not a url", screen_scripts):
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


async def test_a_record_of_a_name_no_digest_has_is_not_found_in_any_store(tmp_path: Path) -> None:
    """The directory store was asked for a file of that name: too long a name was a 503 (as if
    the store were down), one with a slash a look elsewhere."""
    knowledge = KnowledgeLookup(open_knowledge(None, tmp_path, ""), Learner())
    app = create_app(MemoryStore(), Settings(), knowledge=knowledge)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as api:
        for digest in ("a" * 300, "sha256:" + "0" * 64, "x.json", "sha256:AB"):
            answer = await api.get(f"/knowledge/records/{digest}")
            assert answer.status_code == 404, (digest, answer.text)
            assert answer.json()["error"].startswith("no knowledge record")
