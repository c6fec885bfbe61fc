"""What the work under the routes fails with reaches the client as its status, in the one
error shape, without the work knowing HTTP."""

from __future__ import annotations

import httpx
import pytest
from fastapi import APIRouter

from api.app import create_app
from api.failures import (
    Conflict,
    Failure,
    Invalid,
    MissingExtra,
    NotFound,
    Refused,
    Unavailable,
)
from api.service.settings import Settings
from proxy.store import MemoryStore


@pytest.mark.parametrize(
    ("failure", "status"),
    [
        (NotFound, 404),
        (Refused, 403),
        (Conflict, 409),
        (Invalid, 422),
        (MissingExtra, 501),
        (Unavailable, 503),
    ],
)
async def test_each_failure_is_its_status_in_the_one_shape(
    failure: type[Failure], status: int
) -> None:
    app = create_app(MemoryStore(), Settings())
    router = APIRouter()

    @router.get("/fails")
    async def fails() -> None:
        raise failure("what went wrong, for the user")

    app.include_router(router)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as api:
        response = await api.get("/fails")
    assert response.status_code == status
    assert response.json() == {"error": "what went wrong, for the user", "status": status}


async def test_a_check_of_the_whole_body_is_its_message_alone() -> None:
    """A field's error names the field; a check of the whole body names what it is about in
    its own words, with no `body:` before them; a body of the wrong type says `body`."""
    app = create_app(MemoryStore(), Settings())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://a"
    ) as api:
        unknown = await api.post("/episodes", json={"shifts": ["nope"]})
        assert unknown.json()["error"] == "unknown shift 'nope'"
        replay = await api.post("/episodes", json={"from_load": 2})
        assert replay.json()["error"] == "from_load is a replay setting: give replay_of too"
        field = await api.post("/episodes", json={"seed": "x"})
        assert field.json()["error"].startswith("seed: ")
        wrong_type = await api.post("/episodes", content=b"[1]")
        assert wrong_type.json()["error"].startswith("body: ")
