"""The admin API in-process (ASGI transport) over a real MemoryStore."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from api.app import create_app
from api.service.settings import Settings
from proxy.store import EpisodeStore, MemoryStore


def in_process(
    settings: Settings, store: EpisodeStore | None = None, **client_options: object
) -> httpx.AsyncClient:
    """A client of the API over `store` (a new MemoryStore if None)."""
    app = create_app(store or MemoryStore(), settings)
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, **client_options)  # type: ignore[arg-type]


@pytest.fixture
async def api() -> AsyncIterator[httpx.AsyncClient]:
    async with in_process(Settings(), base_url="http://api") as client:
        yield client
