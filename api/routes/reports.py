"""The reports route: SR, AS, ASC, SFR across episodes (api/analysis/outcomes.py), as rows,
the benchmark's table, or one line per task attempt."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import StringConstraints

from api.analysis.outcomes import COLUMNS, attempts, benchmark, build_report, per_task, to_csv
from api.dependencies import EvidenceDep
from api.errors import ApiError

router = APIRouter(tags=["reports"])
TagFilter = Annotated[str, StringConstraints(pattern=r"^[^=]+=", max_length=256)]


def _parse_tags(values: list[str]) -> list[tuple[str, str]]:
    """Every filter, a key given twice too: they all apply (a dict kept only the last)."""
    tags = []
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key:
            raise ApiError(422, f"tag filter {value!r} is not KEY=VALUE")
        tags.append((key, wanted))
    return tags


@router.get(
    "/reports",
    responses={
        200: {
            "content": {"application/json": {}, "text/csv": {}, "application/x-ndjson": {}},
            "description": "Rows (json, csv), the benchmark's table (benchmark), or one JSON "
            "line per task attempt (per_task)",
        }
    },
)
async def reports(
    evidence: EvidenceDep,
    group_by: str = Query(
        "condition",
        pattern=r"^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$",
        description="Comma-separated: condition, regime, seed, site, or any tag name "
        "(method...); json and csv only",
    ),
    tag: Annotated[
        list[TagFilter],
        Query(
            description="Only episodes with this tag, KEY=VALUE; repeatable: an episode must "
            "have every one (two values of one key match none)"
        ),
    ] = [],  # noqa: B006 - FastAPI copies query defaults per request
    format: str = Query(
        "json",
        pattern="^(json|csv|benchmark|per_task)$",
        description="json or csv: one row per group; benchmark: SR, AS, ASC, SFR macro-"
        "averaged over (website, condition) cells, by website, by condition and overall; "
        "per_task: JSON lines, one per task attempt",
    ),
    include_internal: bool = Query(
        False,
        description="Count the service's own episodes too (`internal`: the browser oracle's, "
        "the preview's, calibration runs), which are no task attempts",
    ),
) -> Response:
    """SR, AS, ASC, SFR, attributed skill failures and popup counts over all stored episodes:
    one row per group, the benchmark's macro-averaged table, or one line per task attempt.
    Replays and the service's own episodes are no task attempts and are left out."""
    found = await attempts(evidence, _parse_tags(tag), include_internal)
    if format == "benchmark":
        return JSONResponse(benchmark(found))
    if format == "per_task":
        return Response(per_task(found), media_type="application/x-ndjson")
    keys = group_by.split(",")
    rows = build_report(found, keys)
    if format == "csv":
        return PlainTextResponse(to_csv(rows, keys), media_type="text/csv")
    return JSONResponse({"group_by": keys, "columns": list(COLUMNS), "rows": rows})
