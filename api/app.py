"""The admin API application (FastAPI). OpenAPI at /docs (and /redoc) and /openapi.json."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Awaitable, Callable
from functools import cache
from importlib import resources

from fastapi import FastAPI, Request, Response
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.dependencies import Services
from api.episodes.evidence import Evidence
from api.errors import ERROR_RESPONSES, ApiError, error_json, install_error_handlers
from api.routes import catalogue, checks, episodes, evidence, reports, ui
from api.routes import knowledge as knowledge_routes
from api.service.settings import Settings
from api.version import version
from proxy.guard import THROUGH_PROXY_HEADER
from proxy.knowledge import KnowledgeLookup, Learner, MemoryKnowledge
from proxy.recording_dir import Recording
from proxy.store import EpisodeStore

MAX_BODY_BYTES = 256 * 1024
# The one route whose body is a document, not a request: a HAR holds every body of a run
# (the service's own export of a single shifted page can be over 512 KB). Its limit is a
# setting, `import_max_bytes`.
IMPORT_PATH = "/episodes/import"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def _from_a_browser(request: Request) -> bool:
    """Browsers send `Mozilla/...` user agents, and an Origin header on cross-site requests."""
    return request.headers.get("user-agent", "").startswith("Mozilla/") or (
        "origin" in request.headers
    )


# The docs pages and their assets are generic (Swagger UI, ReDoc) and hold nothing about this
# service: the schema they show is fetched from /openapi.json, which stays behind the token.
OPEN_PATHS = (
    "/health",
    "/favicon.ico",
    "/ui",
    "/ui/static/",
    "/ui/session",
    "/docs",
    "/docs/static/",
    "/redoc",
)


def _open(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in OPEN_PATHS)


class BodyLimit:
    """Refuse request bodies over their limit with a 413, however they are framed: a
    Content-Length over the limit is refused before reading, a chunked body once it grows past
    it. The body is read here and replayed to the app. Every body has the general `limit` but a
    HAR import's, which has `import_limit` (a setting, named in its 413)."""

    def __init__(self, app: ASGIApp, limit: int, import_limit: int) -> None:
        self.app = app
        self.limit = limit
        self.import_limit = import_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, refusal = self._limit_of(scope)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await error_json(413, refusal)(scope, receive, send)
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if size > limit:
                await error_json(413, refusal)(scope, receive, send)
                return
            if message["type"] != "http.request" or not message.get("more_body"):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    def _limit_of(self, scope: Scope) -> tuple[int, str]:
        """The request's body limit, and what its 413 says."""
        if scope["method"] == "POST" and scope["path"] == IMPORT_PATH:
            return self.import_limit, (
                f"request body over {self.import_limit} bytes, the limit of a HAR import "
                "(--import-max-bytes, SKILLSHIFT_IMPORT_MAX_BYTES)"
            )
        return self.limit, f"request body over {self.limit} bytes"


# Swagger UI and ReDoc served from an installed package (fastapi-offline ships their dist files),
# not from FastAPI's default CDN: the docs must work on a lab machine without Internet access.
DOCS_ASSETS = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "redoc.standalone.js": "text/javascript",
    "favicon.png": "image/png",
}
# ReDoc's sidebar shows its vendor's logo from a CDN, with no option to turn it off. Served
# here with an empty address instead, the image is never fetched and ReDoc drops it (it removes
# an image that fails to load).
REDOC_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"'
# And the docs pages may load nothing from anywhere else, whatever a later version adds. Swagger
# UI starts from an inline script; ReDoc's search runs in a worker made from a blob.
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; "
    "connect-src 'self'; frame-ancestors 'self'"
)


def _install_docs(app: FastAPI) -> None:
    assets = resources.files("fastapi_offline").joinpath("static")

    def url(request: Request, path: str) -> str:
        return f"{request.scope.get('root_path', '')}{path}"

    def confined(page: HTMLResponse) -> HTMLResponse:
        page.headers["Content-Security-Policy"] = DOCS_POLICY
        return page

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        return confined(
            get_swagger_ui_html(
                openapi_url=url(request, "/openapi.json"),
                title=f"{app.title} - Swagger UI",
                swagger_js_url=url(request, "/docs/static/swagger-ui-bundle.js"),
                swagger_css_url=url(request, "/docs/static/swagger-ui.css"),
                swagger_favicon_url=url(request, "/docs/static/favicon.png"),
            )
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        return confined(
            get_redoc_html(
                openapi_url=url(request, "/openapi.json"),
                title=f"{app.title} - ReDoc",
                redoc_js_url=url(request, "/docs/static/redoc.standalone.js"),
                redoc_favicon_url=url(request, "/docs/static/favicon.png"),
                with_google_fonts=False,
            )
        )

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        # Browsers ask every origin for one; a PNG is what they all accept under this name.
        return await docs_asset("favicon.png")

    @cache
    def redoc_without_logo() -> bytes:
        return (
            assets.joinpath("redoc.standalone.js")
            .read_text("utf-8")
            .replace(REDOC_LOGO, '""')
            .encode()
        )

    @app.get("/docs/static/{name}", include_in_schema=False)
    async def docs_asset(name: str) -> Response:
        if name not in DOCS_ASSETS:
            raise ApiError(404, f"no such file {name!r}")
        if name == "redoc.standalone.js":
            return Response(redoc_without_logo(), media_type=DOCS_ASSETS[name])
        with resources.as_file(assets.joinpath(name)) as path:
            return FileResponse(path, media_type=DOCS_ASSETS[name])


def create_app(
    store: EpisodeStore,
    settings: Settings,
    recording: Recording | None = None,
    knowledge: KnowledgeLookup | None = None,
) -> FastAPI:
    app = FastAPI(
        title="skillshift admin API",
        version=version(),
        description="Episodes, shifts and events of a shift injection proxy for web agents.",
        docs_url=None,  # _install_docs serves them without a CDN
        redoc_url=None,
    )
    app.state.services = Services(
        store=store,
        settings=settings,
        knowledge=knowledge or KnowledgeLookup(MemoryKnowledge(), Learner()),
        evidence=Evidence(store, recording),
        started_at=time.time(),
        ui_session=secrets.token_urlsafe(32),
    )
    install_error_handlers(app)

    # Inside the guard (a middleware added later wraps those before it): a request refused for
    # its token or its proxy mark is refused before a byte of its body is read.
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES, import_limit=settings.import_max_bytes)

    @app.middleware("http")
    async def guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        path = request.url.path
        if THROUGH_PROXY_HEADER in request.headers:
            # Forwarded by a skillshift proxy (this process's, a sibling replica's, or one behind
            # the same balancer): an agent's browser must not reach any admin API.
            return error_json(403, "the admin API is not reachable through a skillshift proxy")
        if settings.api_token and not _open(path) and not ui.has_ui_session(request):
            # The scheme's name is case-insensitive (RFC 9110); the token is compared whole.
            scheme, _, supplied = request.headers.get("authorization", "").partition(" ")
            wrong = not hmac.compare_digest(supplied.encode(), settings.api_token.encode())
            if scheme.lower() != "bearer" or wrong:
                return error_json(
                    401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"}
                )
        if (
            request.method not in SAFE_METHODS
            and _from_a_browser(request)
            and not ui.is_ui_request(request)
        ):
            # A web page the agent visits must not be able to drive the API (CSRF); the admin
            # page has its own session (api/routes/ui.py).
            return error_json(403, "requests from browsers are refused; use an HTTP client")
        # Every body is JSON: `curl -d '{...}'` (sent as a form) must work as it does in the docs.
        if request.method in ("POST", "PUT", "PATCH"):
            request.scope["headers"] = [
                (name, value) for name, value in request.scope["headers"] if name != b"content-type"
            ] + [(b"content-type", b"application/json")]
        return await call_next(request)

    for router in (
        episodes.router,
        evidence.router,
        catalogue.router,
        reports.router,
        knowledge_routes.router,
    ):
        app.include_router(router, responses=ERROR_RESPONSES)
    app.include_router(checks.router, responses=ERROR_RESPONSES)
    app.include_router(ui.router)
    _install_docs(app)
    return app
