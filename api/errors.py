"""One JSON error shape for every failure: {"error": "...", "status": N}. `ApiError` is the
routes' own; what the work under them raises (api/failures.py) gets its status here."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from api.failures import Failure, validation_message
from proxy.recording_dir import CorruptRecording
from proxy.store import StoreUnavailable

logger = logging.getLogger(__name__)


class ErrorBody(BaseModel):
    error: str
    status: int


# Documented on every route (OpenAPI), so clients and schema checkers know the one error shape.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in {
        400: "The body is not valid JSON",
        401: "Missing or wrong bearer token",
        403: "Refused (a request from a browser)",
        404: "No such episode or resource",
        405: "Method not allowed",
        409: "Already exists, or not possible in the current state",
        413: "Request body too large",
        422: "Invalid request, or a recording that cannot be read",
        503: "Episode store unavailable",
    }.items()
}


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def error_json(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


def _not_json(error: RequestValidationError) -> str | None:
    """What is wrong with a body that is not JSON at all (400, as the schema says); None when
    the body is JSON and only its content is invalid (422)."""
    for item in error.errors():
        if item.get("type") == "json_invalid":
            reason = (item.get("ctx") or {}).get("error") or item.get("msg", "")
            position = item.get("loc", ())[-1:]
            at = f" at character {position[0]}" if position and isinstance(position[0], int) else ""
            return f"the body is not valid JSON: {reason}{at}"
    return None


def allowed_methods(app: FastAPI, request: Request) -> list[str]:
    """Every method some route offers for this path (Starlette names only the first route's)."""
    methods: set[str] = set()
    for route in app.router.routes:
        match, _ = route.matches(request.scope)
        if match != Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(_: Request, error: ApiError) -> JSONResponse:
        return error_json(error.status, error.message)

    @app.exception_handler(Failure)
    async def failure(_: Request, error: Failure) -> JSONResponse:
        return error_json(error.status, error.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        headers = getattr(error, "headers", None)
        if error.status_code == 405:
            headers = {"Allow": ", ".join(allowed_methods(app, request))}
        return error_json(error.status_code, str(error.detail), headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, error: RequestValidationError) -> JSONResponse:
        not_json = _not_json(error)
        if not_json is not None:
            return error_json(400, not_json)
        return error_json(422, validation_message(error))

    @app.exception_handler(StoreUnavailable)
    async def store_error(_: Request, error: StoreUnavailable) -> JSONResponse:
        return error_json(503, f"{error.store} store unavailable: {error}")

    @app.exception_handler(CorruptRecording)
    async def corrupt_recording(_: Request, error: CorruptRecording) -> JSONResponse:
        # The request is sound, the recording it reads is not: said with the file and line,
        # never answered from what could be read of it.
        return error_json(422, f"the recording cannot be read: {error}")

    @app.exception_handler(Exception)
    async def unexpected(_: Request, error: Exception) -> JSONResponse:
        logger.exception("unexpected API error")
        return error_json(500, f"internal error: {type(error).__name__}")
