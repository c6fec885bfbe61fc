"""The admin API application (FastAPI). OpenAPI at /docs and /openapi.json."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response

from api import diagnostics, episodes, meta, ui
from api.errors import ERROR_RESPONSES, error_json, install_error_handlers
from api.settings import Settings
from proxy.store import EpisodeStore

MAX_BODY_BYTES = 256 * 1024
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _from_a_browser(request: Request) -> bool:
    """Browsers send `Mozilla/...` user agents, and an Origin header on cross-site requests."""
    return request.headers.get("user-agent", "").startswith("Mozilla/") or (
        "origin" in request.headers
    )


OPEN_PATHS = ("/health", "/ui", "/ui/static/", "/ui/session")


def _open(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in OPEN_PATHS)


def create_app(store: EpisodeStore, settings: Settings) -> FastAPI:
    app = FastAPI(
        title="skillshift admin API",
        version=meta.version(),
        description="Episodes, shifts and events of a shift injection proxy for web agents.",
    )
    app.state.store = store
    app.state.settings = settings
    app.state.started_at = time.time()
    app.state.ui_session = secrets.token_urlsafe(32)
    install_error_handlers(app)

    @app.middleware("http")
    async def guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        path = request.url.path
        if settings.api_token and not _open(path) and not ui.has_ui_session(request):
            supplied = request.headers.get("authorization", "")
            expected = f"Bearer {settings.api_token}"
            if not hmac.compare_digest(supplied.encode(), expected.encode()):
                return error_json(
                    401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"}
                )
        if (
            request.method not in SAFE_METHODS
            and _from_a_browser(request)
            and not ui.is_ui_request(request)
        ):
            # A web page the agent visits must not be able to drive the API (CSRF); the admin
            # page has its own session (api/ui.py).
            return error_json(403, "requests from browsers are refused; use an HTTP client")
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            return error_json(413, f"request body over {MAX_BODY_BYTES} bytes")
        # Every body is JSON: `curl -d '{...}'` (sent as a form) must work as it does in the docs.
        if request.method in ("POST", "PUT", "PATCH"):
            request.scope["headers"] = [
                (name, value) for name, value in request.scope["headers"] if name != b"content-type"
            ] + [(b"content-type", b"application/json")]
        return await call_next(request)

    for router in (episodes.router, meta.router, diagnostics.router):
        app.include_router(router, responses=ERROR_RESPONSES)
    app.include_router(ui.router)
    return app
