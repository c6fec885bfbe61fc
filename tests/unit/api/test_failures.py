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
