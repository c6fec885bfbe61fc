"""The admin web page at /ui: plain HTML and JavaScript served from the package, no CDN.

The API refuses state-changing requests from browsers (a page the agent visits must not drive
it). The page gets its own session instead: a cookie (HttpOnly, SameSite=Strict) handed out on
loopback when the API has no token, or in exchange for the token, and honoured only together
with the `X-SkillShift-UI` header and a same-origin `Origin` — which a foreign page cannot send
without a CORS preflight this API never answers.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, Field, ValidationError

from api.dependencies import EvidenceDep, ServicesDep, SettingsDep, services
from api.episodes.lifecycle import with_deployment_targets
from api.errors import ApiError
from api.failures import Invalid, validation_message
from api.oracle.preview import render_preview
from api.routes.evidence import page_view
from api.service.settings import is_loopback
from proxy.episode import EpisodeConfig
from shifts.conditions import ExecutionSet

router = APIRouter(prefix="/ui", include_in_schema=False)
ASSETS = Path(__file__).parents[1] / "ui"
STATIC = {"app.js": "text/javascript", "style.css": "text/css"}
SESSION_COOKIE = "skillshift_ui"
UI_HEADER = "x-skillshift-ui"


def has_ui_session(request: Request) -> bool:
    supplied = request.cookies.get(SESSION_COOKIE, "")
    return hmac.compare_digest(supplied.encode(), services(request).ui_session.encode())


def is_ui_request(request: Request) -> bool:
    """The page's own fetch: its header and its origin, and its session (or asking for one)."""
    origin = request.headers.get("origin")
    own_origin = f"{request.url.scheme}://{request.headers.get('host', '')}"
    from_own_page = UI_HEADER in request.headers and origin == own_origin
    return from_own_page and (has_ui_session(request) or request.url.path == "/ui/session")


def _host_is_loopback(request: Request) -> bool:
    # The Host header, not the peer: a DNS-rebinding page reaches us from loopback too, but
    # under its own host name, and must not be handed a session.
    host = request.headers.get("host", "").rsplit(":", 1)[0].strip("[]")
    return is_loopback(host)


def _set_session(request: Request, response: Response) -> Response:
    response.set_cookie(
        SESSION_COOKIE,
        services(request).ui_session,
        httponly=True,
        samesite="strict",
        path="/",
    )
    return response


@router.get("")
async def page(request: Request, settings: SettingsDep) -> Response:
    response = HTMLResponse((ASSETS / "index.html").read_text())
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"
    )
    if not settings.api_token and _host_is_loopback(request):
        _set_session(request, response)
    return response


@router.get("/static/{name}")
async def static(name: str) -> Response:
    if name not in STATIC:
        raise ApiError(404, f"no such file {name!r}")
    return FileResponse(ASSETS / name, media_type=STATIC[name])


class SessionRequest(BaseModel):
    token: str = Field(..., max_length=512)


@router.post("/session", status_code=204)
async def session(body: SessionRequest, request: Request, settings: SettingsDep) -> Response:
    """Trade the API token for a page session (when the API has a token)."""
    expected = settings.api_token or ""
    if not expected or not hmac.compare_digest(body.token.encode(), expected.encode()):
        raise ApiError(401, "wrong token")
    return _set_session(request, Response(status_code=204))


class PreviewRequest(BaseModel):
    model_config = {"extra": "forbid"}
    url: str = Field(..., pattern=r"^https?://", max_length=2048)
    site: str | None = None
    seed: int = Field(0, ge=0, le=2**63 - 1)
    targets: dict[str, str] = Field(default_factory=dict)
    execution: ExecutionSet = Field(
        "benchmark", description="-Exec's set: the extended one's kinds are shown on load"
    )


@router.post("/preview")
async def preview(body: PreviewRequest, services: ServicesDep) -> dict[str, Any]:
    """Screenshots of `url` under all six conditions, through this process's proxy."""
    shots = await render_preview(
        services.store,
        services.settings,
        body.url,
        body.site,
        body.seed,
        body.targets,
        services.knowledge.store,
        body.execution,
    )
    return {"url": body.url, "seed": body.seed, "shots": shots}


class RoutingRequest(BaseModel):
    model_config = {"extra": "forbid"}
    site: str | None = None
    targets: dict[str, str] = Field(default_factory=dict)


@router.post("/routing")
async def routing(body: RoutingRequest, settings: SettingsDep) -> dict[str, Any]:
    """Where a Tgt episode of this site and targets sends requests (source -> target origin),
    as the proxy will route them; every other origin gets the synthetic variant. The page says
    so before it creates the episode."""
    config = with_deployment_targets(settings, body.model_dump())
    try:
        episode = EpisodeConfig.model_validate(config)
    except ValidationError as error:
        raise Invalid(validation_message(error)) from None
    return {"routes": episode.all_targets()}


@router.get("/pages/{episode_id}/{load}/{version}")
async def recorded_page(
    episode_id: str, load: int, version: str, evidence: EvidenceDep
) -> Response:
    """A recorded page (`served` or `source`) with its changed elements outlined, for the
    page's side-by-side view (a GET in a frame: the session cookie is its credential)."""
    return await page_view(evidence, episode_id, load, version)
