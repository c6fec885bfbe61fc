"""Diagnostics across episodes: SR, AS, ASC, SFR per group, from what agents reported."""

from __future__ import annotations

from typing import Any

import httpx

from api.diagnostics import aggregate, episode_outcome


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
    for index in range(calls):
        await api.post(f"/episodes/{episode['id']}/events", json={"type": "skill_call"})
        if index == 0 and not success:
            await api.post(f"/episodes/{episode['id']}/events", json={"type": "skill_failure"})
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


async def test_reports_reject_bad_queries(api: httpx.AsyncClient) -> None:
    for query in ("group_by=", "group_by=a;b", "format=xml", "tag=novalue"):
        response = await api.get(f"/reports?{query}")
        assert response.status_code == 422, query
        assert set(response.json()) == {"error", "status"}
