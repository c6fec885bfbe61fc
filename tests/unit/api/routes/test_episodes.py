"""Agent events: every type has a schema, proxy and runtime types are refused, nothing invalid
reaches the log (a bad event would corrupt SR/AS)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from api.service.settings import Settings
from proxy.store import EpisodeStore, MemoryStore, RedisStore
from tests.helpers.processes import RedisProcess
from tests.unit.api.conftest import in_process
from tests.unit.api.test_app import assert_error

REFUSED = [
    ({"type": "task_result", "success": "yes"}, "success"),
    ({"type": "task_result", "success": True, "steps": -5}, "steps"),
    ({"type": "task_result", "success": True, "steps": "many"}, "steps"),
    ({"type": "task_result", "success": True, "steps": 10**30}, "steps"),  # (no count made)
    ({"type": "task_result", "success": 1}, "success"),
    ({"type": "task_result"}, "success"),
    ({"type": "page_served"}, "page_served"),
    ({"type": "popup_shown"}, "popup_shown"),
    ({"type": "episode_created"}, "episode_created"),
    ({"type": "anything_else"}, "anything_else"),
    ({"type": "skill_call", "skill": ""}, "skill"),
    ({"type": "skill_call", "skill": "s", "args": {"q": "x" * 3000}}, "args"),
    ({"type": "skill_call", "skill": "s", "ts": 5}, "ts"),
    ({"type": "skill_failure", "skill": "s", "error": "x" * 3000}, "error"),
    # A failure belongs to a named skill (SFR pairs it with a call of that skill).
    ({"type": "skill_failure"}, "a skill_failure names its skill"),
    ({"type": "skill_failure", "skill": None, "error": "gone"}, "a skill_failure names its skill"),
    ({"type": "skill_call"}, "a skill_call names its skill"),
    ({"type": "note", **{f"f{i}": i for i in range(40)}}, "at most 32"),
]


@pytest.mark.parametrize(("event", "fragment"), REFUSED, ids=lambda v: str(v)[:40])
async def test_invalid_events_are_refused_and_change_nothing(
    api: httpx.AsyncClient,
    event: dict,
    fragment: str,  # type: ignore[type-arg]
) -> None:
    await api.post("/episodes", json={"id": "e1"})
    assert_error(await api.post("/episodes/e1/events", json=event), 422, fragment)
    events = (await api.get("/episodes/e1/events")).json()["events"]
    assert [e["type"] for e in events] == ["episode_created"]


async def test_valid_events_are_logged_as_the_agents(api: httpx.AsyncClient) -> None:
    await api.post("/episodes", json={"id": "e1"})
    posted = [
        {"type": "skill_call", "skill": "search", "attempt": 2, "args": {"q": "risotto"}},
        {"type": "skill_failure", "skill": "search", "error": "gone", "target": "#q"},
        {"type": "step", "action": "click", "duration_ms": 12.5},
        {"type": "note", "text": "retrying"},
        {"type": "task_result", "success": False, "steps": 9},
    ]
    for event in posted:
        response = await api.post("/episodes/e1/events", json=event)
        assert response.status_code == 201, response.text
    logged = (await api.get("/episodes/e1/events")).json()["events"][1:]
    for sent, stored in zip(posted, logged, strict=True):
        assert stored["source"] == "agent" and {**stored, **sent} == stored
    row = (await api.get("/reports")).json()["rows"][0]
    assert (row["SR"], row["AS"], row["skill_calls"], row["skill_failures"]) == (0.0, 9, 1, 1)


async def test_the_openapi_documents_each_agent_event(api: httpx.AsyncClient) -> None:
    schema = (await api.get("/openapi.json")).json()
    body = schema["paths"]["/episodes/{episode_id}/events"]["post"]["requestBody"]
    text = str(body) + str(schema["components"]["schemas"])
    for name in ("TaskResult", "SkillCall", "SkillFailure", "Step", "Note"):
        assert name in text
    assert schema["components"]["schemas"]["TaskResult"]["properties"]["success"]["type"] == (
        "boolean"
    )


async def episode_with(api: httpx.AsyncClient, case: str, events: list[dict[str, str]]) -> None:
    created = await api.post("/episodes", json={"id": case, "tags": {"run": "sfr", "case": case}})
    assert created.status_code == 201, created.text
    for event in events:
        response = await api.post(f"/episodes/{case}/events", json=event)
        assert response.status_code == 201, response.text


def call(skill: str) -> dict[str, str]:
    return {"type": "skill_call", "skill": skill}


def failure(skill: str) -> dict[str, str]:
    return {"type": "skill_failure", "skill": skill}


async def test_sfr_is_failures_of_called_skills_over_calls(api: httpx.AsyncClient) -> None:
    """A failure is paired with an earlier unfailed call of its skill; one without such a call
    counts as a call too (the skill ran, its call went unreported): SFR never exceeds 1."""
    await episode_with(api, "paired", [call("search"), call("search"), failure("search")])
    # Four failures of a skill never called: 1 call and 5 failures gave an SFR of 5.0.
    await episode_with(api, "uncalled", [call("search"), failure("search"), *[failure("buy")] * 4])
    query = {"group_by": "case", "tag": "run=sfr"}
    rows = {row["case"]: row for row in (await api.get("/reports", params=query)).json()["rows"]}
    assert (rows["paired"]["skill_calls"], rows["paired"]["skill_failures"]) == (2, 1)
    assert rows["paired"]["SFR"] == 0.5
    assert (rows["uncalled"]["skill_calls"], rows["uncalled"]["skill_failures"]) == (5, 5)
    assert rows["uncalled"]["SFR"] == 1.0
    per_task = await api.get("/reports", params={"format": "per_task", "tag": "run=sfr"})
    records = [json.loads(line) for line in per_task.text.splitlines()]
    assert sorted((r["skill_calls"], r["skill_failures"]) for r in records) == [(2, 1), (5, 5)]
    table = (await api.get("/reports", params={"format": "benchmark", "tag": "run=sfr"})).json()
    # One (website, condition) cell: 6 failures over 7 calls.
    assert table["metrics"]["SFR"]["overall"] == round(6 / 7, 4)


BEYOND_64_BITS = ["18446744073709551616-0", "1-18446744073709551616"]


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_an_event_id_beyond_64_bits_is_a_422_on_every_store(
    kind: str, request: pytest.FixtureRequest
) -> None:
    """Redis refused such an `after` as an error, which the API reported as an outage (503)."""
    store: EpisodeStore = MemoryStore()
    if kind == "redis":
        redis_server: RedisProcess = request.getfixturevalue("redis_server")
        store = RedisStore(redis_server.url, prefix=f"t{uuid.uuid4().hex[:8]}:")
    async with in_process(Settings(), store, base_url="http://a") as api:
        await api.post("/episodes", json={"id": "e1"})
        for after in BEYOND_64_BITS:
            refused = await api.get(f"/episodes/e1/events?after={after}")
            assert_error(
                refused,
                422,
                "query.after: each part of an event id is at most 18446744073709551615",
            )
        largest = f"{2**64 - 1}-{2**64 - 1}"
        found = (await api.get(f"/episodes/e1/events?after={largest}")).json()
    await store.close()
    assert found == {"events": [], "next": largest}
