"""Diagnostics across episodes, as the paper reports them: SR, AS, ASC, SFR, plus popups.

Agent code reports `task_result` (`success`, optionally `steps`), `skill_call` and
`skill_failure` events (and `step` events when it does not count steps itself). One episode is
one task attempt; an episode without a `task_result` counts as unfinished and is left out of SR
and AS (reported as `unfinished`), so a crashed agent run cannot pass for a failure or success.
"""

from __future__ import annotations

import csv
import io
import statistics
from collections import Counter, defaultdict
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import StringConstraints

from api.errors import ApiError
from api.evidence import Evidence, evidence_of
from proxy.episode import Episode

router = APIRouter(tags=["reports"])
TagFilter = Annotated[str, StringConstraints(pattern=r"^[^=]+=", max_length=256)]
EPISODE_FIELDS = ("condition", "regime", "seed", "site")
COLUMNS = (
    "episodes",
    "finished",
    "unfinished",
    "SR",
    "AS",
    "ASC",
    "SFR",
    "skill_calls",
    "skill_failures",
    "popups_injected",
    "popups_shown",
    "popups_dismissed",
    "blocked_interactions",
)


def group_value(episode: Episode, key: str) -> str:
    """A grouping key: an episode field (condition, regime, seed, site) or else a tag."""
    if key == "site":
        return episode.site or episode.tags.get("site", "auto")
    if key in EPISODE_FIELDS:
        return str(getattr(episode, key))
    return episode.tags.get(key, "-")


def episode_outcome(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What one episode contributes: its task result (last reported wins), skills, popups."""
    agent = [event for event in events if event.get("source") == "agent"]
    results = [event for event in agent if event["type"] == "task_result"]
    result = results[-1] if results else None
    steps = result.get("steps") if result else None
    if result is not None and not isinstance(steps, int | float):
        steps = sum(event["type"] == "step" for event in agent)
    count = Counter(str(event["type"]) for event in events)
    return {
        "finished": result is not None,
        "success": bool(result and result.get("success") is True),
        "steps": steps,
        "skill_calls": count["skill_call"],
        "skill_failures": count["skill_failure"],
        "popups_injected": count["popup_injected"],
        "popups_shown": count["popup_shown"],
        "popups_dismissed": count["popup_dismissed"],
        "blocked_interactions": count["blocked_interaction"],
    }


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def aggregate(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    finished = [o for o in outcomes if o["finished"]]
    calls = sum(o["skill_calls"] for o in outcomes)
    failures = sum(o["skill_failures"] for o in outcomes)
    return {
        "episodes": len(outcomes),
        "finished": len(finished),
        "unfinished": len(outcomes) - len(finished),
        "SR": _ratio(sum(o["success"] for o in finished), len(finished)),
        "AS": round(statistics.fmean(o["steps"] for o in finished), 3) if finished else None,
        "ASC": round(calls / len(outcomes), 3) if outcomes else None,
        "SFR": _ratio(failures, calls),
        "skill_calls": calls,
        "skill_failures": failures,
        **{
            name: sum(o[name] for o in outcomes)
            for name in (
                "popups_injected",
                "popups_shown",
                "popups_dismissed",
                "blocked_interactions",
            )
        },
    }


async def build_report(
    evidence: Evidence, group_by: list[str], tags: dict[str, str]
) -> list[dict[str, Any]]:
    """Live and archived episodes alike; replays are not task attempts and are left out."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for episode, live in await evidence.episodes():
        if episode.replay_of or any(episode.tags.get(k) != v for k, v in tags.items()):
            continue
        key = tuple(group_value(episode, name) for name in group_by)
        groups[key].append(episode_outcome(await evidence.events(episode.id, live)))
    return [
        {**dict(zip(group_by, key, strict=True)), **aggregate(outcomes)}
        for key, outcomes in sorted(groups.items())
    ]


def to_csv(rows: list[dict[str, Any]], group_by: list[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*group_by, *COLUMNS], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _parse_tags(values: list[str]) -> dict[str, str]:
    tags = {}
    for value in values:
        key, sep, wanted = value.partition("=")
        if not sep or not key:
            raise ApiError(422, f"tag filter {value!r} is not KEY=VALUE")
        tags[key] = wanted
    return tags


@router.get(
    "/reports",
    responses={200: {"content": {"application/json": {}, "text/csv": {}}, "description": "Rows"}},
)
async def reports(
    request: Request,
    group_by: str = Query(
        "condition",
        pattern=r"^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$",
        description="Comma-separated: condition, regime, seed, site, or any tag name (method...)",
    ),
    tag: Annotated[
        list[TagFilter], Query(description="Only episodes with this tag, KEY=VALUE; repeatable")
    ] = [],  # noqa: B006 - FastAPI copies query defaults per request
    format: str = Query("json", pattern="^(json|csv)$"),
) -> Response:
    """SR, AS, ASC, SFR and popup counts over all stored episodes, one row per group."""
    keys = group_by.split(",")
    rows = await build_report(evidence_of(request), keys, _parse_tags(tag))
    if format == "csv":
        return PlainTextResponse(to_csv(rows, keys), media_type="text/csv")
    return JSONResponse({"group_by": keys, "columns": list(COLUMNS), "rows": rows})
