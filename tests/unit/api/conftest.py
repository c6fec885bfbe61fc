"""The admin API in-process (ASGI transport) over a real MemoryStore."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from api.app import create_app
from api.service.settings import Settings
from proxy.store import MemoryStore


def in_process(settings: Settings, **client_options: object) -> httpx.AsyncClient:
    app = create_app(MemoryStore(), settings)
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, **client_options)  # type: ignore[arg-type]


@pytest.fixture
async def api() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process(Settings(), base_url="http://api") as client:
        yield client
