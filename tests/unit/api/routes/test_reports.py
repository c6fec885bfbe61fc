"""Diagnostics across episodes: SR, AS, ASC, SFR per group, from what agents reported."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from api.analysis.outcomes import COLUMNS, FAILURE_COLUMNS, aggregate, episode_outcome


def agent(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "source": "agent", **fields}


def test_outcome_takes_the_last_task_result_and_counts_steps_when_missing() -> None:
    events = [
        agent("step"),
        agent("step"),
        agent("task_result", success=True),
        agent("skill_call", skill="s"),
        {"type": "popup_shown", "source": "client"},
        {"type": "task_result", "source": "client", "success": False},  # not from the agent
    ]
    outcome = episode_outcome(events)
    assert outcome["finished"] and outcome["success"] and outcome["steps"] == 2
    assert outcome["skill_calls"] == 1 and outcome["popups_shown"] == 1
    assert not episode_outcome([agent("step")])["finished"]
    assert not episode_outcome([agent("task_result", success="yes")])["success"]


def test_aggregate_leaves_unfinished_runs_out_of_sr_and_as() -> None:
    finished = [
        {**episode_outcome([agent("task_result", success=ok, steps=n)]), "skill_calls": 2}
        for ok, n in ((True, 4), (False, 8))
    ]
    unfinished = episode_outcome([agent("skill_call"), agent("skill_failure")])
    row = aggregate([*finished, unfinished])
    assert row["episodes"] == 3 and row["finished"] == 2 and row["unfinished"] == 1
    assert row["SR"] == 0.5 and row["AS"] == 6.0
    assert row["ASC"] == round(5 / 3, 3) and row["SFR"] == 0.2
    assert aggregate([])["SR"] is None and aggregate([unfinished])["AS"] is None


async def run(
    api: httpx.AsyncClient, condition: str, method: str, success: bool, steps: int, calls: int
) -> None:
    body = {"condition": condition, "tags": {"method": method, "run": "r1"}}
    episode = (await api.post("/episodes", json=body)).json()
    events = f"/episodes/{episode['id']}/events"
    for index in range(calls):
        await api.post(events, json={"type": "skill_call", "skill": "s"})
        if index == 0 and not success:
            await api.post(events, json={"type": "skill_failure", "skill": "s"})
    await api.post(
        f"/episodes/{episode['id']}/events",
        json={"type": "task_result", "success": success, "steps": steps},
    )


async def test_reports_group_by_condition_and_tags(api: httpx.AsyncClient) -> None:
    await run(api, "Src", "react", True, 4, 2)
    await run(api, "Src", "skills", True, 6, 1)
    await run(api, "Src-Perc", "react", False, 10, 3)
    await run(api, "Src-Perc", "skills", True, 8, 1)
    await api.post("/episodes", json={"condition": "Src", "tags": {"run": "other"}})
    by_condition = (await api.get("/reports", params={"tag": "run=r1"})).json()
    rows = {row["condition"]: row for row in by_condition["rows"]}
    assert rows["Src"]["SR"] == 1.0 and rows["Src"]["AS"] == 5.0 and rows["Src"]["ASC"] == 1.5
    assert rows["Src-Perc"]["SR"] == 0.5 and rows["Src-Perc"]["SFR"] == 0.25
    everything = (await api.get("/reports")).json()["rows"]
    assert {row["condition"]: row["unfinished"] for row in everything}["Src"] == 1
    grouped = (await api.get("/reports?group_by=condition,method&tag=run=r1")).json()["rows"]
    assert [(r["condition"], r["method"], r["SR"]) for r in grouped] == [
        ("Src", "react", 1.0),
        ("Src", "skills", 1.0),
        ("Src-Perc", "react", 0.0),
        ("Src-Perc", "skills", 1.0),
    ]
    csv = await api.get("/reports?group_by=method&format=csv&tag=run=r1")
    assert csv.headers["content-type"].startswith("text/csv")
    lines = csv.text.splitlines()
    assert lines[0].startswith("method,episodes,finished,unfinished,SR,AS,ASC,SFR")
    assert lines[1].startswith("react,2,2,0,0.5,7.0,2.5,0.2")


async def test_every_tag_filter_applies_a_repeated_key_too(api: httpx.AsyncClient) -> None:
    """Filters are ANDed in every format: a key given twice was the last value alone."""
    await run(api, "Src", "react", True, 4, 2)
    await api.post("/episodes", json={"condition": "Src", "tags": {"run": "attr"}})
    both = [("tag", "run=r1"), ("tag", "run=attr")]
    rows = (await api.get("/reports", params=both)).json()["rows"]
    assert rows == []
    assert (await api.get("/reports", params=[*both, ("format", "per_task")])).text == ""
    table = (await api.get("/reports", params=[*both, ("format", "benchmark")])).json()
    assert all(cell["episodes"] == 0 for cell in table["cells"])
    same = [("tag", "run=r1"), ("tag", "run=r1"), ("tag", "method=react")]
    (row,) = (await api.get("/reports", params=same)).json()["rows"]
    assert row["episodes"] == 1
    other = [("tag", "run=r1"), ("tag", "method=skills")]
    assert (await api.get("/reports", params=other)).json()["rows"] == []


async def test_reports_reject_bad_queries(api: httpx.AsyncClient) -> None:
    for query in ("group_by=", "group_by=a;b", "format=xml", "format=Benchmark", "tag=novalue"):
        response = await api.get(f"/reports?{query}")
        assert response.status_code == 422, query
        assert set(response.json()) == {"error", "status"}


def test_skill_failures_are_counted_by_the_shift_they_are_attributed_to() -> None:
    def failure(shift: Any = None, **attribution: Any) -> dict[str, Any]:
        if shift is not None:
            attribution["shift"] = shift
        return agent(
            "skill_failure", skill="s", **({"attribution": attribution} if attribution else {})
        )

    events = [
        agent("skill_call", skill="s"),
        failure("perceptual", target="#buy"),
        failure("perceptual"),
        failure("execution", popup="newsletter"),
        failure("contextual"),
        failure("unattributed"),
        failure(),  # no attribution at all
        failure("gremlins"),  # not a shift
        agent("skill_failure", attribution="perceptual"),  # not an attribution object
        failure(reason="no shift given"),
    ]
    outcome = episode_outcome(events)
    assert outcome["skill_failures"] == 9
    assert (
        outcome["failures_perceptual"],
        outcome["failures_execution"],
        outcome["failures_contextual"],
        outcome["failures_unattributed"],
    ) == (2, 1, 1, 5)
    row = aggregate([outcome, episode_outcome([failure("execution")]), episode_outcome([])])
    assert row["failures_perceptual"] == 2 and row["failures_execution"] == 2
    assert row["failures_unattributed"] == 5 and row["skill_failures"] == 10
    assert set(FAILURE_COLUMNS) <= set(COLUMNS) <= set(row)


async def test_reports_carry_the_attribution_columns(api: httpx.AsyncClient) -> None:
    await run(api, "Src", "react", False, 3, 2)  # one failure, unattributed (none posted)
    body = (await api.get("/reports")).json()
    assert body["columns"][body["columns"].index("skill_failures") + 1 :][:4] == list(
        FAILURE_COLUMNS
    )
    assert body["rows"][0]["failures_unattributed"] == 1
    assert body["rows"][0]["failures_perceptual"] == 0
    header, row = (await api.get("/reports?format=csv")).text.splitlines()
    assert dict(zip(header.split(","), row.split(","), strict=True))["failures_unattributed"] == "1"


# One task attempt: success (None: unfinished), steps, skill calls, skill failures.
Attempt = tuple[bool | None, int, int, int]
WEBSITES = ("gitlab", "magento", "shop")  # the first two are site profiles, "shop" a site tag
ORDER = ("Src", "Src-Perc", "Src-Exec", "Tgt", "Tgt-Perc", "Tgt-Exec")


def synthetic_run() -> dict[tuple[str, str], list[Attempt]]:
    """3 websites x 6 conditions, 1 to 4 attempts per cell, so cells weigh differently."""
    cells: dict[tuple[str, str], list[Attempt]] = {}
    for i, website in enumerate(WEBSITES):
        for j, condition in enumerate(ORDER):
            cells[website, condition] = [
                ((i + j + k) % 3 != 0, 2 + i + j + 3 * k, 1 + (i * j + k) % 3, (j + k) % 2)
                for k in range(1 + (i + 2 * j) % 4)
            ]
    cells["gitlab", "Src"][0] = (True, 5, 30, 3)  # a cell resting on >= 30 skill calls
    cells["shop", "Tgt-Exec"].append((None, 0, 2, 1))  # unfinished: out of SR and AS, in ASC
    return cells


def cell_metrics(attempts: list[Attempt]) -> dict[str, float]:
    finished = [a for a in attempts if a[0] is not None]
    return {
        "SR": sum(bool(a[0]) for a in finished) / len(finished),
        "AS": sum(a[1] for a in finished) / len(finished),
        "ASC": sum(a[2] for a in attempts) / len(attempts),
        "SFR": sum(a[3] for a in attempts) / sum(a[2] for a in attempts),
    }


def mean(values: Any) -> float:
    values = list(values)
    return sum(values) / len(values)


async def attempt(
    api: httpx.AsyncClient, website: str, condition: str, outcome: Attempt, tags: dict[str, str]
) -> str:
    success, steps, calls, failures = outcome
    where = {"site": website} if website in WEBSITES[:2] else {"tags": {"site": website}}
    body = {"condition": condition, **where}
    body["tags"] = {**body.get("tags", {}), **tags}  # type: ignore[dict-item]
    created = await api.post("/episodes", json=body)
    assert created.status_code == 201, created.text
    events = f"/episodes/{created.json()['id']}/events"
    for index in range(calls):
        await api.post(events, json={"type": "skill_call", "skill": "s"})
        if index < failures:
            await api.post(events, json={"type": "skill_failure", "skill": "s"})
    if success is not None:
        await api.post(events, json={"type": "task_result", "success": success, "steps": steps})
    return str(created.json()["id"])


async def test_benchmark_table_is_a_macro_average_over_website_condition_cells(
    api: httpx.AsyncClient,
) -> None:
    design = synthetic_run()
    for (website, condition), attempts in design.items():
        for outcome in attempts:
            await attempt(api, website, condition, outcome, {"run": "bench"})
    # Another run's attempt in a cell: the tag filter keeps it out.
    await attempt(api, "shop", "Src", (False, 99, 5, 5), {"run": "other"})
    response = await api.get("/reports", params={"format": "benchmark", "tag": "run=bench"})
    assert response.status_code == 200, response.text
    table = response.json()
    assert table["format"] == "benchmark" and table["aggregation"] == "macro"
    assert table["websites"] == sorted(WEBSITES) and table["conditions"] == list(ORDER)
    assert table["complete"] is True and table["missing_cells"] == []
    assert len(table["cells"]) == 18

    # Each cell is exactly the grouped report's row for that website and condition.
    grouped = await api.get("/reports?group_by=site,condition&tag=run=bench")
    rows = {(row["site"], row["condition"]): row for row in grouped.json()["rows"]}
    for cell in table["cells"]:
        row = rows[cell["website"], cell["condition"]]
        assert {k: cell[k] for k in COLUMNS} == {k: row[k] for k in COLUMNS}
        assert cell["episodes"] == len(design[cell["website"], cell["condition"]])

    expected = {key: cell_metrics(attempts) for key, attempts in design.items()}
    pooled = cell_metrics([a for attempts in design.values() for a in attempts])
    for name in ("SR", "AS", "ASC", "SFR"):
        metric = table["metrics"][name]
        websites, conditions = metric["websites"], metric["conditions"]
        assert list(websites) == sorted(WEBSITES) and list(conditions) == list(ORDER)
        # mean(websites) == mean(conditions) == overall (up to the 4 digits each is rounded to)
        assert mean(websites.values()) == pytest.approx(metric["overall"], abs=1.5e-4), name
        assert mean(conditions.values()) == pytest.approx(metric["overall"], abs=1.5e-4), name
        # ... and each is an unweighted mean of cells, not of episodes.
        macro = mean(value[name] for value in expected.values())
        assert metric["overall"] == pytest.approx(macro, abs=1e-4), name
        assert abs(pooled[name] - macro) > 0.01, f"{name}: the design must tell micro from macro"
        for website in WEBSITES:
            cells = [expected[website, condition][name] for condition in ORDER]
            assert websites[website] == pytest.approx(mean(cells), abs=1e-4), (name, website)
            assert metric["cells"]["websites"][website] == 6
        for condition in ORDER:
            cells = [expected[website, condition][name] for website in WEBSITES]
            assert conditions[condition] == pytest.approx(mean(cells), abs=1e-4), name
            assert metric["cells"]["conditions"][condition] == 3
        assert metric["cells"]["overall"] == 18

    # SFR resting on fewer than 30 calls is flagged, in cells and in means.
    sfr = table["metrics"]["SFR"]
    flagged = {(c["website"], c["condition"]) for c in table["cells"] if c["SFR_low_calls"]}
    assert flagged == set(design) - {("gitlab", "Src")}
    assert table["min_sfr_calls"] == 30
    calls = {key: sum(a[2] for a in attempts) for key, attempts in design.items()}
    for condition in ORDER:
        total = sum(calls[website, condition] for website in WEBSITES)
        assert sfr["skill_calls"]["conditions"][condition] == total
        assert sfr["low_calls"]["conditions"][condition] is (total < 30)
    assert sfr["low_calls"]["conditions"]["Src"] is False
    assert sfr["low_calls"]["conditions"]["Tgt"] is True
    assert sfr["low_calls"]["websites"]["gitlab"] is False
    assert sfr["skill_calls"]["overall"] == sum(calls.values())
    assert sfr["low_calls"]["overall"] is False


async def test_benchmark_table_with_null_and_missing_cells(api: httpx.AsyncClient) -> None:
    # a: Src finished without a single skill call; Tgt never finished, no calls either.
    # b: Src only, with calls. Every other cell has no episode at all.
    await attempt(api, "a", "Src", (True, 4, 0, 0), {})
    await attempt(api, "a", "Src", (False, 6, 0, 0), {})
    await attempt(api, "a", "Tgt", (None, 0, 0, 0), {})
    await attempt(api, "b", "Src", (False, 10, 4, 1), {})
    table = (await api.get("/reports?format=benchmark")).json()
    assert table["websites"] == ["a", "b"] and table["complete"] is False
    assert len(table["cells"]) == 12 and len(table["missing_cells"]) == 9
    assert ["a", "Src"] not in table["missing_cells"] and ["b", "Tgt"] in table["missing_cells"]
    cells = {(c["website"], c["condition"]): c for c in table["cells"]}
    assert cells["a", "Src"]["SFR"] is None and cells["a", "Src"]["SR"] == 0.5
    assert cells["a", "Src"]["SFR_low_calls"] is False  # no number, nothing to flag
    assert cells["a", "Tgt"]["SR"] is None and cells["a", "Tgt"]["AS"] is None
    assert cells["a", "Tgt"]["ASC"] == 0.0 and cells["a", "Tgt"]["unfinished"] == 1
    missing = cells["b", "Tgt-Exec"]
    assert missing["episodes"] == 0 and missing["SR"] is None and missing["ASC"] is None
    sr, sfr, asc = (table["metrics"][name] for name in ("SR", "SFR", "ASC"))
    # A mean over the cells that have a value, saying how many that is.
    assert sr["conditions"]["Src"] == 0.25 and sr["cells"]["conditions"]["Src"] == 2
    assert sr["conditions"]["Tgt"] is None and sr["cells"]["conditions"]["Tgt"] == 0
    assert sr["websites"]["a"] == 0.5 and sr["cells"]["websites"]["a"] == 1
    assert asc["websites"]["a"] == 0.0 and asc["cells"]["websites"]["a"] == 2
    assert sfr["conditions"]["Src"] == 0.25 and sfr["cells"]["conditions"]["Src"] == 1
    assert sfr["websites"]["a"] is None and sfr["cells"]["websites"]["a"] == 0
    assert sfr["low_calls"]["websites"] == {"a": False, "b": True}
    assert sfr["overall"] == 0.25 and sfr["low_calls"]["overall"] is True
    assert (
        sfr["conditions"]["Tgt-Exec"] is None
        and sfr["low_calls"]["conditions"]["Tgt-Exec"] is False
    )
    empty = (await api.get("/reports?format=benchmark&tag=run=none")).json()
    assert empty["websites"] == [] and empty["cells"] == [] and empty["complete"] is False
    assert empty["metrics"]["SR"]["overall"] is None
    assert empty["metrics"]["SR"]["conditions"] == dict.fromkeys(ORDER)  # always all six


async def test_per_task_is_one_benchmark_record_per_attempt(api: httpx.AsyncClient) -> None:
    await attempt(api, "gitlab", "Src-Perc", (True, 7, 3, 1), {"uid": "gitlab-12", "run": "r"})
    unfinished = await attempt(api, "shop", "Tgt-Exec", (None, 0, 2, 2), {"run": "r"})
    await attempt(api, "shop", "Src", (False, 3, 0, 0), {"uid": "shop-1", "run": "r"})
    await attempt(api, "shop", "Src", (True, 1, 0, 0), {"uid": "elsewhere", "run": "other"})
    counted = await api.post("/episodes", json={"condition": "src-exec", "tags": {"run": "r"}})
    events = f"/episodes/{counted.json()['id']}/events"
    for _ in range(4):
        await api.post(events, json={"type": "step"})
    await api.post(events, json={"type": "task_result", "success": True})  # steps counted
    response = await api.get("/reports?format=per_task&tag=run=r")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    assert response.text.endswith("\n")
    records = [json.loads(line) for line in response.text.splitlines()]
    keys = ["uid", "site", "condition", "success", "steps", "skill_calls", "skill_failures"]
    assert all(list(record) == keys for record in records)
    assert records == [
        {
            "uid": counted.json()["id"],
            "site": "auto",
            "condition": "src-exec",
            "success": True,
            "steps": 4,
            "skill_calls": 0,
            "skill_failures": 0,
        },
        {
            "uid": "gitlab-12",
            "site": "gitlab",
            "condition": "src-perc",
            "success": True,
            "steps": 7,
            "skill_calls": 3,
            "skill_failures": 1,
        },
        {
            "uid": "shop-1",
            "site": "shop",
            "condition": "src",
            "success": False,
            "steps": 3,
            "skill_calls": 0,
            "skill_failures": 0,
        },
        {
            "uid": unfinished,
            "site": "shop",
            "condition": "tgt-exec",
            "success": None,
            "steps": None,
            "skill_calls": 2,
            "skill_failures": 2,
        },
    ]
    assert (await api.get("/reports?format=per_task&tag=run=none")).text == ""


async def test_the_services_own_episodes_are_no_task_attempts(api: httpx.AsyncClient) -> None:
    """`internal` episodes (the oracle's, the preview's, calibration runs) are left out of every
    format of /reports and of the listing, unless asked for."""
    await run(api, "Src", "agent", True, 4, 1)
    own = {"condition": "Tgt-Perc", "site": "wordpress", "internal": True}
    internal = (await api.post("/episodes", json=own)).json()
    assert internal["internal"] is True
    await api.post(
        f"/episodes/{internal['id']}/events", json={"type": "task_result", "success": False}
    )
    for everything, conditions, websites in (
        (False, ["Src"], ["auto"]),
        (True, ["Src", "Tgt-Perc"], ["auto", "wordpress"]),
    ):
        query = {"include_internal": "true"} if everything else {}
        rows = (await api.get("/reports", params=query)).json()["rows"]
        assert [row["condition"] for row in rows] == conditions
        table = (await api.get("/reports", params={**query, "format": "benchmark"})).json()
        assert table["websites"] == websites
        lines = (await api.get("/reports", params={**query, "format": "per_task"})).text
        assert len(lines.splitlines()) == len(conditions)
        csv = (await api.get("/reports", params={**query, "format": "csv"})).text
        assert len(csv.splitlines()) == 1 + len(conditions)
        listed = (await api.get("/episodes", params=query)).json()["episodes"]
        assert (internal["id"] in [e["id"] for e in listed]) is everything
    refused = await api.post("/episodes", json={"internal": "yes"})
    assert refused.status_code == 422
