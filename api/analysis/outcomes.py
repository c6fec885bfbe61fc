"""Outcomes across episodes, as the paper reports them: SR, AS, ASC, SFR, plus popups and the
pages the perceptual drift changed.

Agent code reports `task_result` (`success`, optionally `steps`), `skill_call` and
`skill_failure` events (and `step` events when it does not count steps itself). One episode is
one task attempt; an episode without a `task_result` counts as unfinished and is left out of SR
and AS (reported as `unfinished`), so a crashed agent run cannot pass for a failure or success.

Three shapes: rows per group (`json`, `csv`); the benchmark's table (`benchmark`: per metric,
macro averages over (website, condition) cells, by website, by condition and overall); and one
JSON line per task attempt (`per_task`, the benchmark's `per_task.jsonl` records).
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from api.analysis.drift import drift_counts
from api.episodes.evidence import Evidence
from proxy.episode import Episode
from shifts.conditions import CONDITIONS

EPISODE_FIELDS = ("condition", "regime", "seed", "site")
# What a skill failure is blamed on (its `attribution.shift`); anything else is unattributed.
ATTRIBUTIONS = ("perceptual", "execution", "contextual", "unattributed")
FAILURE_COLUMNS = tuple(f"failures_{shift}" for shift in ATTRIBUTIONS)
# Navigations the perceptual drift changed something on, and those it changed nothing on (an
# app rendering into `<body>` itself: there the `-Perc` condition is its base condition).
DRIFT_COLUMNS = ("pages_drifted", "pages_not_drifted")
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
    *FAILURE_COLUMNS,
    "popups_injected",
    "popups_shown",
    "popups_dismissed",
    "blocked_interactions",
    *DRIFT_COLUMNS,
)
METRICS = ("SR", "AS", "ASC", "SFR")
DIGITS = {"SR": 4, "AS": 3, "ASC": 3, "SFR": 4}  # of a group's or a cell's value
MARGINAL_DIGITS = 4
MIN_SFR_CALLS = 30  # an SFR resting on fewer skill calls is flagged
PER_TASK_KEYS = ("uid", "site", "condition", "success", "steps", "skill_calls", "skill_failures")


def group_value(episode: Episode, key: str) -> str:
    """A grouping key: an episode field (condition, regime, seed, site) or else a tag."""
    if key == "site":
        return episode.site or episode.tags.get("site", "auto")
    if key in EPISODE_FIELDS:
        return str(getattr(episode, key))
    return episode.tags.get(key, "-")


def failure_shift(event: dict[str, Any]) -> str:
    """The shift a skill failure is attributed to; `unattributed` when it carries none."""
    attribution = event.get("attribution")
    shift = attribution.get("shift") if isinstance(attribution, dict) else None
    return shift if shift in ATTRIBUTIONS else "unattributed"


def skill_counts(events: list[dict[str, Any]]) -> tuple[int, int]:
    """(calls, failures) of an episode's skills, as the benchmark counts them: SFR is failures
    of called skills over calls. Each failure is paired with a call of its skill made before it
    and not yet failed; a failure with no such call counts as a call too (the skill ran and
    failed, its call went unreported), so failures never exceed calls."""
    unfailed: Counter[Any] = Counter()  # per skill: calls made and not failed yet
    calls = failures = 0
    for event in events:
        if event["type"] == "skill_call":
            calls += 1
            unfailed[event.get("skill")] += 1
        elif event["type"] == "skill_failure":
            failures += 1
            if unfailed[event.get("skill")]:
                unfailed[event.get("skill")] -= 1
            else:
                calls += 1
    return calls, failures


def episode_outcome(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What one episode contributes: its task result (last reported wins), skills, popups."""
    agent = [event for event in events if event.get("source") == "agent"]
    results = [event for event in agent if event["type"] == "task_result"]
    result = results[-1] if results else None
    steps = result.get("steps") if result else None
    if result is not None and not isinstance(steps, int | float):
        steps = sum(event["type"] == "step" for event in agent)
    count = Counter(str(event["type"]) for event in events)
    blamed = Counter(failure_shift(event) for event in events if event["type"] == "skill_failure")
    calls, failures = skill_counts(events)
    return {
        "finished": result is not None,
        "success": bool(result and result.get("success") is True),
        "steps": steps,
        "skill_calls": calls,
        "skill_failures": failures,
        **{f"failures_{shift}": blamed[shift] for shift in ATTRIBUTIONS},
        "popups_injected": count["popup_injected"],
        "popups_shown": count["popup_shown"],
        "popups_dismissed": count["popup_dismissed"],
        "blocked_interactions": count["blocked_interaction"],
        **drift_counts(events),
    }


def metrics(outcomes: list[dict[str, Any]]) -> dict[str, float | None]:
    """SR and AS over finished episodes, ASC over all, SFR over skill calls; unrounded, None
    where there is nothing to divide by."""
    finished = [o for o in outcomes if o["finished"]]
    calls = sum(o["skill_calls"] for o in outcomes)
    failures = sum(o["skill_failures"] for o in outcomes)
    return {
        "SR": sum(o["success"] for o in finished) / len(finished) if finished else None,
        "AS": statistics.fmean(o["steps"] for o in finished) if finished else None,
        "ASC": calls / len(outcomes) if outcomes else None,
        "SFR": failures / calls if calls else None,
    }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def aggregate(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    finished = sum(o["finished"] for o in outcomes)
    values = metrics(outcomes)
    return {
        "episodes": len(outcomes),
        "finished": finished,
        "unfinished": len(outcomes) - finished,
        **{name: _round(values[name], DIGITS[name]) for name in METRICS},
        **{
            name: sum(o[name] for o in outcomes)
            for name in (
                "skill_calls",
                "skill_failures",
                *FAILURE_COLUMNS,
                "popups_injected",
                "popups_shown",
                "popups_dismissed",
                "blocked_interactions",
                *DRIFT_COLUMNS,
            )
        },
    }


async def attempts(
    evidence: Evidence, tags: Iterable[tuple[str, str]], include_internal: bool = False
) -> list[tuple[Episode, dict[str, Any]]]:
    """Every task attempt with its outcome: live and archived episodes alike, those with every
    wanted tag (KEY, VALUE pairs; a key given twice with two values matches none). Replays are
    not task attempts and are left out, and so are the service's own (`internal`) episodes
    unless `include_internal`."""
    found = []
    wanted = list(tags)
    for episode, live in await evidence.episodes():
        if episode.replay_of or (episode.internal and not include_internal):
            continue
        if any(episode.tags.get(k) != v for k, v in wanted):
            continue
        found.append((episode, episode_outcome(await evidence.events(episode.id, live))))
    return found


def build_report(
    found: list[tuple[Episode, dict[str, Any]]], group_by: list[str]
) -> list[dict[str, Any]]:
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for episode, outcome in found:
        groups[tuple(group_value(episode, name) for name in group_by)].append(outcome)
    return [
        {**dict(zip(group_by, key, strict=True)), **aggregate(outcomes)}
        for key, outcomes in sorted(groups.items())
    ]


def _marginal(values: list[float | None]) -> tuple[float | None, int]:
    """The unweighted mean of the values that are not None, and how many there are."""
    present = [value for value in values if value is not None]
    return (statistics.fmean(present) if present else None), len(present)


def benchmark(found: list[tuple[Episode, dict[str, Any]]]) -> dict[str, Any]:
    """The benchmark's table, macro-averaged over (website, condition) cells.

    A cell's metrics are `aggregate()`'s over its episodes. A website's value is the unweighted
    mean of its six condition cells, a condition's the unweighted mean of its website cells, the
    overall value the mean of every cell (computed from the cells' unrounded values): with every
    cell present, mean(websites) == mean(conditions) == overall. A cell whose metric is None (no
    finished episode for SR and AS, no skill call for SFR) is left out of that metric's means,
    and every value says how many cells it rests on (`cells`). A cell with no episode at all is
    still listed, with `episodes` 0 and None metrics, and in `missing_cells`; `complete` is then
    false and the identity above need not hold. An SFR resting on fewer than MIN_SFR_CALLS
    skill calls (a cell's own; a mean's summed over the cells it averages) is flagged:
    `SFR_low_calls` on a cell, `low_calls` on a mean. None is never flagged.
    """
    websites = sorted({group_value(episode, "site") for episode, _ in found})
    conditions = list(CONDITIONS)
    by_cell: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for episode, outcome in found:
        by_cell[group_value(episode, "site"), episode.condition].append(outcome)
    cells, exact = [], {}
    for website in websites:
        for condition in conditions:
            outcomes = by_cell.get((website, condition), [])
            row = {"website": website, "condition": condition, **aggregate(outcomes)}
            row["SFR_low_calls"] = row["SFR"] is not None and row["skill_calls"] < MIN_SFR_CALLS
            cells.append(row)
            exact[website, condition] = metrics(outcomes)
    scopes = {
        "websites": {w: [(w, k) for k in conditions] for w in websites},
        "conditions": {k: [(w, k) for w in websites] for k in conditions},
    }
    calls = {(c["website"], c["condition"]): c["skill_calls"] for c in cells}
    table: dict[str, Any] = {}
    for name in METRICS:
        entry: dict[str, Any] = {}
        support: dict[str, Any] = {}
        for scope, groups in scopes.items():
            means = {key: _marginal([exact[m][name] for m in ms]) for key, ms in groups.items()}
            entry[scope] = {
                key: _round(value, MARGINAL_DIGITS) for key, (value, _) in means.items()
            }
            support[scope] = {key: count for key, (_, count) in means.items()}
        value, count = _marginal([values[name] for values in exact.values()])
        entry["overall"], support["overall"] = _round(value, MARGINAL_DIGITS), count
        entry["cells"] = support
        if name == "SFR":
            total = {
                scope: {key: sum(calls[m] for m in members) for key, members in groups.items()}
                for scope, groups in scopes.items()
            }
            entry["skill_calls"] = {**total, "overall": sum(calls.values())}
            entry["low_calls"] = {
                scope: {
                    key: value is not None and total[scope][key] < MIN_SFR_CALLS
                    for key, value in entry[scope].items()
                }
                for scope in scopes
            }
            entry["low_calls"]["overall"] = (
                entry["overall"] is not None and sum(calls.values()) < MIN_SFR_CALLS
            )
        table[name] = entry
    missing = [[c["website"], c["condition"]] for c in cells if not c["episodes"]]
    return {
        "format": "benchmark",
        "aggregation": "macro",
        "websites": websites,
        "conditions": conditions,
        "metrics": table,
        "cells": cells,
        "missing_cells": missing,
        "complete": bool(cells) and not missing,
        "min_sfr_calls": MIN_SFR_CALLS,
    }


def per_task(found: list[tuple[Episode, dict[str, Any]]]) -> str:
    """One JSON line per task attempt, the benchmark's per_task.jsonl record and nothing else:
    `uid` (the episode's `uid` tag, else its id), `site` (its site, else its `site` tag),
    `condition` (lowercase: `src`, `src-perc`, ...), `success` and `steps` (both null for an
    unfinished episode, one without a task result), `skill_calls`, `skill_failures`. Ordered by
    site, condition (the benchmark's order) and uid."""
    order = {condition: index for index, condition in enumerate(CONDITIONS)}
    records = []
    for episode, outcome in found:
        finished = outcome["finished"]
        record = {
            "uid": episode.tags.get("uid", episode.id),
            "site": group_value(episode, "site"),
            "condition": episode.condition.lower(),
            "success": outcome["success"] if finished else None,
            "steps": outcome["steps"] if finished else None,
            "skill_calls": outcome["skill_calls"],
            "skill_failures": outcome["skill_failures"],
        }
        records.append((record["site"], order[episode.condition], record["uid"], record))
    records.sort(key=lambda item: item[:3])
    return "".join(json.dumps(record) + "\n" for *_, record in records)


def to_csv(rows: list[dict[str, Any]], group_by: list[str]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[*group_by, *COLUMNS], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
