"""Routes are given their services by FastAPI: one service replaced for a test replaces it for
every route that names it, and no route reaches around it."""

from __future__ import annotations

import httpx

from api.app import create_app
from api.dependencies import get_store
from api.service.settings import Settings
from proxy.store import MemoryStore


async def test_a_replaced_store_is_the_one_every_route_uses() -> None:
    app = create_app(MemoryStore(), Settings())
    other = MemoryStore()
    app.dependency_overrides[get_store] = lambda: other
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
        created = (await api.post("/episodes", json={"condition": "Src"})).json()
        assert await other.get_episode(created["id"]) is not None
        listed = (await api.get("/episodes")).json()["episodes"]
        assert [episode["id"] for episode in listed] == [created["id"]]
        assert (await api.delete(f"/episodes/{created['id']}")).status_code == 204
    assert await other.get_episode(created["id"]) is None
