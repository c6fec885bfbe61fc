"""Check routes: the browser alignment oracle (api/oracle) on a URL, through this proxy."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from api.dependencies import ServicesDep
from api.errors import ErrorBody
from api.fetchable import url_problem
from api.oracle import run as oracle
from proxy.episode import Origin, Seed

router = APIRouter(prefix="/checks", tags=["checks"])


class Cookie(BaseModel):
    """A cookie set in every browser context before the load (Playwright's cookie fields):
    give `url`, or `domain` and `path`."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(..., min_length=1, max_length=256)
    value: str = Field(..., max_length=4096)
    url: str | None = Field(None, pattern=r"^https?://", max_length=2048)
    domain: str | None = Field(None, max_length=256)
    path: str | None = Field(None, max_length=1024)
    expires: float | None = Field(None, description="Unix time; default: a session cookie")
    httpOnly: bool | None = None  # noqa: N815 - Playwright's spelling
    secure: bool | None = None
    sameSite: Literal["Strict", "Lax", "None"] | None = None  # noqa: N815

    def playwright(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class BrowserCheck(BaseModel):
    """Load `url` in Chromium through this proxy: `baseline_runs` times under the condition
    without its perceptual part (Src for Src-Perc, Tgt for Tgt-Perc), then once per seed under
    `condition`, and list what the shift changed that a task could depend on."""

    model_config = ConfigDict(extra="forbid", strict=True)
    url: str = Field(..., pattern=r"^https?://", max_length=2048, description="Page to load")
    condition: str = Field(
        "Src-Perc",
        description="Src, Src-Perc, Tgt or Tgt-Perc: conditions that apply no popup (-Exec "
        "covers the page with one by design)",
    )
    seeds: list[Seed] = Field(
        default_factory=lambda: [0], min_length=1, max_length=20, description="One load each"
    )
    site: str | None = Field(None, description="Site profile; default: matched by host")
    targets: dict[Origin, Origin] = Field(
        default_factory=dict, description="Contextual shift: source origin -> target origin"
    )
    shift_params: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-shift parameters of the shifted episodes"
    )
    perceptual: Literal["benchmark", "extended"] | None = Field(
        None, description="The episodes' perceptual set; default: the episode default"
    )
    cookies: list[Cookie] = Field(default_factory=list, max_length=50)
    tolerance_px: float = Field(4, ge=0, le=1000, description="Allowed move / resize, px")
    tolerance_ratio: float = Field(
        0.05, ge=0, le=1, description="Allowed resize as a share of the size (the larger wins)"
    )
    settle_ms: int = Field(
        800, ge=0, le=10_000, description="Wait after network idle before the snapshot"
    )
    baseline_runs: int = Field(
        2, ge=1, le=5, description="Unshifted loads; what differs between them is ignored"
    )

    @field_validator("url")
    @classmethod
    def _fetchable(cls, url: str) -> str:
        problem = url_problem(url)
        if problem:
            raise ValueError(problem)
        return url

    @field_validator("condition")
    @classmethod
    def _no_popup(cls, condition: str) -> str:
        if condition.endswith("-Exec"):
            raise ValueError(
                f"{condition} covers the page with a popup by design; check Src-Perc or Tgt-Perc"
            )
        if condition not in ("Src", "Src-Perc", "Tgt", "Tgt-Perc"):
            raise ValueError(f"unknown condition {condition!r}: Src, Src-Perc, Tgt or Tgt-Perc")
        return condition


NDJSON = "application/x-ndjson"


@router.post(
    "/browser",
    response_model=None,
    responses={
        200: {
            "content": {"application/json": {}, NDJSON: {}},
            "description": "The result (JSON); or, when the request accepts "
            f"{NDJSON}, one JSON line per step as it finishes, the result last",
        },
        **{
            status: {"model": ErrorBody, "description": description}
            for status, description in {
                403: "The URL's upstream is not allowed through this proxy",
                501: "Playwright is not installed",
                503: "The proxy is not listening, or Chromium cannot start",
            }.items()
        },
    },
)
async def browser_check(body: BrowserCheck, request: Request, services: ServicesDep) -> Response:
    """The browser alignment oracle. Answers `{url, condition, status, reason, runs: [{seed,
    load_ms, locator_share, violations: [{kind, detail, element}]}], violations}` (violations:
    the total). `status` is `aligned`, `violations`, or `unchecked` with a `reason` when the
    page could not be checked: the unshifted page did not load or answered a non-2xx status
    (an unreachable upstream gives the proxy's 502), or the browser crashed. Kinds: structure,
    error, visibility, covered, moved, resized, image, listeners, label, relabelled. Every
    episode it creates is internal (kept out of /reports), tagged `oracle` and deleted before
    it answers.

    With `Accept: application/x-ndjson` the answer is streamed, one JSON object per line as
    each step finishes: `{"type": "started"}`, `{"type": "baseline", load, of, status,
    load_ms}` per unshifted load, `{"type": "run", seed, ...}` per seed, and last `{"type":
    "result", ...}`, the answer above."""
    steps = oracle.browser_check(
        services.store,
        services.settings,
        url=body.url,
        condition=body.condition,
        seeds=body.seeds,
        site=body.site,
        targets=body.targets,
        shift_params=body.shift_params,
        perceptual=body.perceptual,
        cookies=[cookie.playwright() for cookie in body.cookies],
        tolerance_px=body.tolerance_px,
        tolerance_ratio=body.tolerance_ratio,
        settle_ms=body.settle_ms,
        baseline_runs=body.baseline_runs,
        knowledge=services.knowledge.store,
    )
    if NDJSON not in request.headers.get("accept", ""):
        async with contextlib.aclosing(steps):
            async for step in steps:
                if step.pop("type") == "result":
                    return JSONResponse(step)
        raise AssertionError("the browser check ends with its result")
    # A request the check refuses (no Chromium, say) is refused before its first line: as an
    # error status, not as a stream that says so.
    first = await anext(steps)
    return StreamingResponse(_lines(first, steps), media_type=NDJSON)


async def _lines(
    first: dict[str, Any], rest: AsyncGenerator[dict[str, Any], None]
) -> AsyncIterator[str]:
    async with contextlib.aclosing(rest):
        yield json.dumps(first) + "\n"
        async for step in rest:
            yield json.dumps(step) + "\n"
