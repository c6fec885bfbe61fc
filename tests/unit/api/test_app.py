"""The admin API in-process (ASGI transport) over a real MemoryStore: episodes, errors,
catalogue, tokens, limits."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from api.service.settings import Settings
from proxy.guard import THROUGH_PROXY_HEADER
from proxy.store import MemoryStore, RedisStore
from tests.helpers.processes import RedisProcess
from tests.unit.api.conftest import in_process


def assert_error(response: httpx.Response, status: int, fragment: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "status"} and body["status"] == status
    assert fragment in body["error"]


async def test_create_returns_binding_info(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/episodes", json={"condition": "Src-Exec", "regime": "multiple", "seed": 7}
    )
    assert response.status_code == 201
    episode = response.json()
    assert episode["condition"] == "Src-Exec" and episode["seed"] == 7
    assert episode["proxy"] == {
        "server": "http://127.0.0.1:8080",
        "username": episode["id"],
        "password": episode["token"],
    }
    assert episode["header"] == {"X-SkillShift-Episode": f"{episode['id']}:{episode['token']}"}
    assert len(episode["id"]) >= 16 and len(episode["token"]) >= 20
    got = (await api.get(f"/episodes/{episode['id']}")).json()
    assert got["token"] == episode["token"] and got["event_count"] == 1


async def test_behind_a_balancer_agents_are_told_the_balancers_address() -> None:
    """Each replica would name its own listener (or, bound to 0.0.0.0, the client's own
    loopback): the advertised address is what every answer binds agents to."""
    settings = Settings(proxy=("0.0.0.0", 3128), advertised_proxy=("balancer.lab", 8443))
    async with in_process(settings, base_url="http://api") as api:
        episode = (await api.post("/episodes", json={})).json()
        assert episode["proxy"]["server"] == "http://balancer.lab:8443"
        assert episode["proxy_url"].endswith("@balancer.lab:8443")
        listed = (await api.get(f"/episodes/{episode['id']}")).json()
        assert listed["proxy"]["server"] == "http://balancer.lab:8443"
    assert settings.proxy_server == "http://127.0.0.1:3128"  # (the service's own browsers)
    # An IPv6 address is written as a URL writes it, advertised or not.
    for given in ({"proxy": ("::1", 3128)}, {"advertised_proxy": ("::1", 3128)}):
        assert Settings(**given).agent_proxy == "[::1]:3128"  # type: ignore[arg-type]
    assert Settings(proxy=("::1", 3128)).proxy_server == "http://[::1]:3128"
    assert Settings(api=("::1", 8081)).api_url == "http://[::1]:8081"


async def test_no_body_is_an_episode_of_the_defaults(api: httpx.AsyncClient) -> None:
    created = await api.post("/episodes")
    assert created.status_code == 201, created.text
    assert (created.json()["condition"], created.json()["seed"]) == ("Src", 0)
    assert_error(await api.post("/episodes", content=b"[1]"), 422, "body")


async def test_errors_have_one_shape_and_change_nothing(api: httpx.AsyncClient) -> None:
    assert_error(await api.get("/episodes/nope"), 404, "not found")
    assert_error(await api.post("/episodes", json={"condition": "Nope"}), 422, "condition")
    assert_error(await api.post("/episodes", json={"targets": {"ftp:x": "y"}}), 422, "origin")
    assert_error(await api.post("/episodes", json={"regime_params": {"p": 2}}), 422, "p")
    assert_error(await api.post("/episodes", json={"unknown": 1}), 422, "unknown")
    twice = {"condition": "Src", "seed": 7, "shifts": ["locator_drift", "locator_drift"]}
    assert_error(
        await api.post("/episodes", json=twice), 422, "shifts: shift 'locator_drift' is given"
    )
    assert (await api.get("/episodes")).json()["episodes"] == []
    assert (await api.post("/episodes", json={"id": "fixed"})).status_code == 201
    assert_error(await api.post("/episodes", json={"id": "fixed", "seed": 3}), 409, "exists")
    assert (await api.get("/episodes/fixed")).json()["seed"] == 0
    assert_error(await api.post("/episodes", json={"id": "bad id!"}), 422, "id")


async def test_patch_validates_the_whole_result(api: httpx.AsyncClient) -> None:
    await api.post("/episodes", json={"id": "e1", "condition": "Src-Exec"})
    patched = await api.patch(
        "/episodes/e1", json={"regime": "random", "regime_params": {"p": 0.2}}
    )
    assert patched.status_code == 200 and patched.json()["regime"] == "random"
    assert_error(await api.patch("/episodes/e1", json={"shifts": ["nope"]}), 422, "unknown shift")
    twice = {"shifts": ["locator_drift", "locator_drift"]}
    assert_error(await api.patch("/episodes/e1", json=twice), 422, "'locator_drift' is given more")
    assert_error(
        await api.patch("/episodes/e1", json={"regime_params": {"min_ms": 9, "max_ms": 1}}),
        422,
        "min_ms",
    )
    assert (await api.get("/episodes/e1")).json()["condition"] == "Src-Exec"
    assert_error(await api.patch("/episodes/nope", json={"seed": 1}), 404, "not found")


async def test_a_patch_that_changes_nothing_is_no_change(api: httpx.AsyncClient) -> None:
    """Not written, not logged, `revision` kept (replicas keep what they cached of it)."""
    await api.post("/episodes", json={"id": "e1", "seed": 3})
    for unchanged in ({}, {"seed": 3}):
        patched = await api.patch("/episodes/e1", json=unchanged)
        assert patched.status_code == 200 and patched.json()["revision"] == 0
    assert (await api.post("/episodes/e1/resume")).json()["revision"] == 0  # (not suspended)
    assert (await api.patch("/episodes/e1", json={"seed": 4})).json()["revision"] == 1
    assert (await api.post("/episodes/e1/suspend")).json()["revision"] == 2
    assert (await api.post("/episodes/e1/suspend")).json()["revision"] == 2
    logged = [e["type"] for e in (await api.get("/episodes/e1/events")).json()["events"]]
    assert logged == ["episode_created", "episode_patched", "episode_suspended"]


async def test_suspend_resume_reset_delete(api: httpx.AsyncClient) -> None:
    await api.post("/episodes", json={"id": "e1"})
    assert (await api.post("/episodes/e1/suspend")).json()["suspended"] is True
    assert (await api.post("/episodes/e1/resume")).json()["suspended"] is False
    await api.post("/episodes/e1/events", json={"type": "task_result", "success": True, "steps": 4})
    assert (await api.get("/episodes/e1")).json()["event_count"] == 4
    await api.post("/episodes/e1/reset")
    events = (await api.get("/episodes/e1/events")).json()["events"]
    assert [event["type"] for event in events] == ["episode_reset"]
    assert (await api.delete("/episodes/e1")).status_code == 204
    assert_error(await api.delete("/episodes/e1"), 404, "not found")


async def test_changes_made_at_once_each_take_effect(redis_server: RedisProcess) -> None:
    """Resets, PATCHes and suspends sent together, on Redis (each awaits it between reading the
    record and writing it back): none undoes another, as a read-modify-write would."""
    store = RedisStore(redis_server.url, prefix=f"t{uuid.uuid4().hex[:8]}:")
    async with in_process(Settings(), store, base_url="http://a") as api:
        await api.post("/episodes", json={"id": "e1", "seed": 0})
        resets = [api.post("/episodes/e1/reset") for _ in range(12)]
        patches = [api.patch("/episodes/e1", json={"tags": {"run": "r"}})]
        suspends = [api.post("/episodes/e1/suspend")]
        responses = await asyncio.gather(*resets, *patches, *suspends)
        assert [response.status_code for response in responses] == [200] * len(responses)
        episode = (await api.get("/episodes/e1")).json()
        log = [e["type"] for e in (await api.get("/episodes/e1/events")).json()["events"]]
    await store.close()
    assert episode["generation"] == len(resets)
    assert episode["revision"] == len(resets) + len(patches) + len(suspends)
    assert episode["tags"] == {"run": "r"} and episode["suspended"] is True
    # Each reset's event is the first of its log: a later reset forgot the earlier's.
    assert log[0] == "episode_reset" and log.count("episode_reset") == 1, log


async def test_health_fails_as_requests_do_when_redis_refuses_the_password(
    redis_server: RedisProcess,
) -> None:
    """A password given to a Redis that has none: redis-py lets it pass, the connection every
    page load goes on refuses it, and so does /health (it reported ok while requests got 503)."""
    url = redis_server.url.replace("redis://", "redis://:pw@")
    store = RedisStore(url, prefix=f"t{uuid.uuid4().hex[:8]}:")
    async with in_process(Settings(), store, base_url="http://a") as api:
        created = await api.post("/episodes", json={"condition": "Src"})
        health = await api.get("/health")
        metrics = (await api.get("/metrics")).text
    await store.close()
    assert_error(created, 503, "AUTH")
    assert health.status_code == 503 and health.json()["status"] == "degraded"
    assert "Redis refused AUTH" in health.json()["store"]["error"]
    assert "skillshift_store_up 0" in metrics


class _EventsHeld(MemoryStore):
    """A store whose first event of one of `types`, appended on its own, waits for `release`
    (a slow connection between a change and its event): the interleaving two changes at once
    can have."""

    def __init__(self, *types: str) -> None:
        super().__init__()
        self.types = types
        self.held, self.release = asyncio.Event(), asyncio.Event()

    async def append_event(
        self, episode_id: str, event: dict[str, Any], expires_at: int
    ) -> str | None:
        if event["type"] in self.types and not self.held.is_set():
            self.held.set()
            await self.release.wait()
        return await super().append_event(episode_id, event, expires_at)


async def test_a_reset_logs_its_event_as_it_resets() -> None:
    """A first reset whose event lags: a second reset finishes, pages are logged, and then
    the first's event must not land in the new log (which would start again there)."""
    store = _EventsHeld("episode_reset")
    async with in_process(Settings(), store, base_url="http://a") as api:
        await api.post("/episodes", json={"id": "e1"})
        first = asyncio.ensure_future(api.post("/episodes/e1/reset"))
        held = asyncio.ensure_future(store.held.wait())
        await asyncio.wait([first, held], return_when=asyncio.FIRST_COMPLETED)
        store.held.set()  # (the second reset's event goes through)
        assert (await api.post("/episodes/e1/reset")).status_code == 200
        await api.post("/episodes/e1/events", json={"type": "note", "text": "page"})
        store.release.set()
        assert (await first).status_code == 200
        held.cancel()
        log = [e["type"] for e in (await api.get("/episodes/e1/events")).json()["events"]]
    assert log == ["episode_reset", "note"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PATCH", "/episodes/e1", {"tags": {"run": "r"}}),
        ("POST", "/episodes/e1/suspend", None),
        ("POST", "/episodes/e1/resume", None),
    ],
)
async def test_a_change_logs_its_event_as_it_changes(
    method: str, path: str, body: dict[str, Any] | None
) -> None:
    """A change whose event lags while a reset and a page go through: the change took effect
    before the reset, so its event belongs to the log the reset forgot, not after the page."""
    store = _EventsHeld("episode_patched", "episode_suspended", "episode_resumed")
    async with in_process(Settings(), store, base_url="http://a") as api:
        await api.post("/episodes", json={"id": "e1"})
        change = asyncio.ensure_future(api.request(method, path, json=body))
        held = asyncio.ensure_future(store.held.wait())
        await asyncio.wait([change, held], return_when=asyncio.FIRST_COMPLETED)
        assert (await api.post("/episodes/e1/reset")).status_code == 200
        await api.post("/episodes/e1/events", json={"type": "note", "text": "page"})
        store.release.set()
        assert (await change).status_code == 200
        held.cancel()
        log = [e["type"] for e in (await api.get("/episodes/e1/events")).json()["events"]]
    assert log == ["episode_reset", "note"]


class _RewrittenAfterEachRead(MemoryStore):
    """A store another writer writes to right after each read of a record."""

    async def get_episode(self, episode_id: str) -> dict[str, Any] | None:
        record = await super().get_episode(episode_id)
        if record is not None:
            other = {**record, "tags": {"writes": str(int(record["tags"].get("writes", 0)) + 1)}}
            await super().update_episode(episode_id, other)
        return record


async def test_a_change_that_always_loses_the_race_is_a_409_that_changed_nothing() -> None:
    store = _RewrittenAfterEachRead()
    async with in_process(Settings(), store, base_url="http://a") as api:
        await api.post("/episodes", json={"id": "e1"})
        assert_error(await api.post("/episodes/e1/reset"), 409, "kept changing")
        assert_error(await api.patch("/episodes/e1", json={"seed": 5}), 409, "kept changing")
    record = await MemoryStore.get_episode(store, "e1")
    assert record is not None and record["generation"] == 0 and record["seed"] == 0
    assert await store.count_events("e1") == 1  # its creation: no reset, no patch


NOT_JSON = [
    ("POST", "/episodes", "/episodes", b"{not json"),
    ("PATCH", "/episodes/e1", "/episodes/{episode_id}", b'{"seed": 1,}'),
    ("POST", "/episodes/e1/events", "/episodes/{episode_id}/events", b"[1,"),
    ("PUT", "/listeners/8080", "/listeners/{name}", b"{"),
]


@pytest.mark.parametrize(("method", "path", "route", "body"), NOT_JSON)
async def test_a_body_that_is_not_json_is_a_400_as_the_schema_says(
    api: httpx.AsyncClient, method: str, path: str, route: str, body: bytes
) -> None:
    await api.post("/episodes", json={"id": "e1"})
    schema = (await api.get("/openapi.json")).json()
    assert "400" in schema["paths"][route][method.lower()]["responses"]
    assert_error(await api.request(method, path, content=body), 400, "the body is not valid JSON")
    # JSON of the wrong shape is a 422, naming what is wrong.
    assert_error(await api.post("/episodes", content=b'{"seed": "x"}'), 422, "seed")
    assert [e["id"] for e in (await api.get("/episodes")).json()["episodes"]] == ["e1"]


async def test_events_paging_and_agent_events(api: httpx.AsyncClient) -> None:
    await api.post("/episodes", json={"id": "e1"})
    for step in range(5):
        event = {"type": "skill_call", "skill": "s", "step": step}
        posted = await api.post("/episodes/e1/events", json=event)
        assert posted.status_code == 201 and posted.json()["source"] == "agent"
    page = (await api.get("/episodes/e1/events", params={"limit": 3})).json()
    assert [e["type"] for e in page["events"]] == ["episode_created", "skill_call", "skill_call"]
    rest = (await api.get("/episodes/e1/events", params={"after": page["next"]})).json()
    assert [e["step"] for e in rest["events"]] == [2, 3, 4]
    assert_error(await api.get("/episodes/e1/events", params={"after": "x"}), 422, "after")
    assert_error(await api.post("/episodes/e1/events", json={"type": "Bad Type"}), 422, "type")


async def test_catalogue_listeners_metrics(api: httpx.AsyncClient) -> None:
    conditions = (await api.get("/conditions")).json()["conditions"]
    assert [c["name"] for c in conditions] == [
        "Src",
        "Src-Perc",
        "Src-Exec",
        "Tgt",
        "Tgt-Perc",
        "Tgt-Exec",
    ]
    shifts = {s["name"]: s for s in (await api.get("/shifts")).json()["shifts"]}
    assert {"contextual", "relabel", "popup"} <= set(shifts)
    assert "rate" in shifts["relabel"]["params_schema"]["properties"]
    names = [site["name"] for site in (await api.get("/sites")).json()["sites"]]
    assert names == ["gitlab", "magento", "wordpress", "generic"]
    await api.post("/episodes", json={"id": "e1"})
    assert_error(await api.put("/listeners/9", json={"default_episode": "e1"}), 404, "listener")
    metrics = (await api.get("/metrics")).text
    assert "skillshift_episodes 1" in metrics and "skillshift_store_up 1" in metrics
    assert (await api.get("/health")).json()["status"] == "ok"
    assert (await api.get("/openapi.json")).status_code == 200


async def test_bearer_token_when_configured() -> None:
    async with in_process(Settings(api_token="s3cret"), base_url="http://api") as api:
        assert_error(await api.get("/episodes"), 401, "token")
        assert_error(
            await api.get("/episodes", headers={"Authorization": "Bearer nope"}), 401, "token"
        )
        for given in ("Bearer s3cret", "bearer s3cret", "BEARER s3cret"):  # (a case-free scheme)
            ok = await api.get("/episodes", headers={"Authorization": given})
            assert ok.status_code == 200, given
        for wrong in ("Basic s3cret", "Bearer s3cret ", "Bearers3cret", "s3cret", "Bearer  s3cret"):
            assert_error(await api.get("/episodes", headers={"Authorization": wrong}), 401, "token")
        assert (await api.get("/health")).status_code == 200


async def test_json_body_without_a_json_content_type(api: httpx.AsyncClient) -> None:
    # What `curl -X POST :8081/episodes -d '{...}'` sends: a form content type.
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    created = await api.post(
        "/episodes", content=b'{"condition": "Src-Exec", "seed": 7}', headers=form
    )
    assert created.status_code == 201 and created.json()["seed"] == 7


async def test_browsers_cannot_change_anything(api: httpx.AsyncClient) -> None:
    browser = {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0"}
    assert_error(await api.post("/episodes", json={}, headers=browser), 403, "browsers")
    cross_site = {"Origin": "http://evil.test"}
    assert_error(await api.post("/episodes", json={}, headers=cross_site), 403, "browsers")
    assert (await api.get("/episodes")).json()["episodes"] == []  # nothing was created
    assert (await api.get("/docs", headers=browser)).status_code == 200  # reading is fine


async def test_nothing_that_came_through_a_skillshift_proxy_is_served() -> None:
    """A proxy marks what it forwards: an agent's browser reaches no admin API through one,
    whichever process's (every path, every method, a valid token or not)."""
    async with in_process(Settings(api_token="s3cret"), base_url="http://api") as api:
        token = {"Authorization": "Bearer s3cret"}
        created = (await api.post("/episodes", json={}, headers=token)).json()["id"]
        marked = {**token, THROUGH_PROXY_HEADER: "1"}
        for method, path in [
            ("GET", "/episodes"),
            ("GET", "/health"),
            ("GET", "/ui"),
            ("DELETE", f"/episodes/{created}"),
        ]:
            assert_error(await api.request(method, path, headers=marked), 403, "proxy")
        assert (await api.get(f"/episodes/{created}", headers=token)).status_code == 200


async def test_oversized_body_is_refused(api: httpx.AsyncClient) -> None:
    assert_error(await api.post("/episodes", content=b"x" * 300_000), 413, "body")


async def test_deployment_targets_are_written_into_new_episodes() -> None:
    settings = Settings(targets=(("http://src:1", "http://tgt:2"),))
    async with in_process(settings, base_url="http://api") as api:
        plain = (await api.post("/episodes", json={"condition": "Tgt"})).json()
        assert plain["targets"] == {"http://src:1": "http://tgt:2"}
        own = {"http://src:1": "http://mine:3", "http://x:4": "http://y:5"}
        custom = (await api.post("/episodes", json={"targets": own})).json()
        assert custom["targets"] == own  # the episode's own mapping of an origin wins


async def test_only_the_desktop_and_reverse_listeners_take_a_default() -> None:
    settings = Settings(desktop_proxy=("127.0.0.1", 8082), reverse=["http://127.0.0.1:9000@8083"])
    async with in_process(settings, base_url="http://api") as api:
        await api.post("/episodes", json={"id": "e1"})
        # The agents' listener: a default would answer before Chromium sends credentials.
        assert_error(
            await api.put("/listeners/8080", json={"default_episode": "e1"}), 409, "agents"
        )
        for name in ("8082", "8083"):
            response = await api.put(f"/listeners/{name}", json={"default_episode": "e1"})
            assert response.status_code == 200, response.text
        listeners = {
            item["name"]: item for item in (await api.get("/listeners")).json()["listeners"]
        }
        assert [listeners[n]["kind"] for n in ("8080", "8082", "8083")] == [
            "regular",
            "desktop",
            "reverse",
        ]
        assert listeners["8080"]["takes_default"] is False
        assert listeners["8080"]["default_episode"] is None
        assert listeners["8082"]["default_episode"] == "e1"
        assert_error(
            await api.put("/listeners/8082", json={"default_episode": "nope"}), 404, "episode"
        )


async def test_deleting_an_episode_unbinds_every_listener_naming_it() -> None:
    settings = Settings(desktop_proxy=("127.0.0.1", 8082), reverse=["http://127.0.0.1:9000@8083"])
    async with in_process(settings, base_url="http://api") as api:
        for episode_id in ("gone", "kept"):
            await api.post("/episodes", json={"id": episode_id})
        for name, episode_id in (("8082", "gone"), ("8083", "gone")):
            await api.put(f"/listeners/{name}", json={"default_episode": episode_id})
        assert (await api.delete("/episodes/gone")).status_code == 204
        defaults = {
            item["name"]: item["default_episode"]
            for item in (await api.get("/listeners")).json()["listeners"]
        }
        assert defaults == {"8080": None, "8082": None, "8083": None}
        # A default naming another episode stays.
        await api.put("/listeners/8082", json={"default_episode": "kept"})
        await api.post("/episodes", json={"id": "other"})
        assert (await api.delete("/episodes/other")).status_code == 204
        listeners = (await api.get("/listeners")).json()["listeners"]
        assert [item["default_episode"] for item in listeners] == [None, "kept", None]


async def test_a_chunked_body_over_the_limit_is_refused() -> None:
    """The limit holds however the body is framed: a chunked body has no Content-Length."""

    async def chunks():  # type: ignore[no-untyped-def]
        for _ in range(40):
            yield b"x" * 10_000

    async with in_process(Settings(), base_url="http://api") as api:
        response = await api.post("/episodes", content=chunks())
        assert "content-length" not in response.request.headers
        assert_error(response, 413, "body")
        assert (await api.get("/episodes")).json()["episodes"] == []


async def test_check_fetches_only_what_the_proxy_may_reach() -> None:
    settings = Settings(upstream_allow="127.0.0.1")
    async with in_process(settings, base_url="http://api") as api:
        await api.post("/episodes", json={"id": "e1"})
        # The admin API itself, under another spelling of this machine too.
        for url in ("http://127.0.0.1:8081/episodes", "http://127.1:8081/episodes"):
            assert_error(await api.get("/episodes/e1/check", params={"url": url}), 403, "8081")
        # A name outside the allow-list is refused before any DNS lookup (.invalid never
        # resolves: a lookup would have answered 502).
        response = await api.get("/episodes/e1/check", params={"url": "http://shop.invalid/"})
        assert_error(response, 403, "shop.invalid")


async def test_a_request_refused_at_the_door_has_no_body_read() -> None:
    """A HAR import may be 256 MB: one without the token (or with the proxy's mark) is refused
    before its body is read, not after."""
    read = 0

    async def body():  # type: ignore[no-untyped-def]
        nonlocal read
        for _ in range(100):
            read += 1024 * 1024
            yield b" " * (1024 * 1024)

    async with in_process(Settings(api_token="s3cret"), base_url="http://api") as api:
        for headers in ({}, {"Authorization": "Bearer s3cret", THROUGH_PROXY_HEADER: "1"}):
            read = 0
            refused = await api.post("/episodes/import", content=body(), headers=headers)
            assert refused.status_code in (401, 403), refused.text
            assert read <= 2 * 1024 * 1024, read


async def test_an_episode_an_earlier_version_stored_is_still_read() -> None:
    """A shift named twice is refused when asked for; an episode stored with one before that
    rule (a live one in Redis across an upgrade) is still read, listed and reported."""
    store = MemoryStore()
    async with in_process(Settings(), store, base_url="http://api") as api:
        created = (await api.post("/episodes", json={"shifts": ["locator_drift"]})).json()
        record = await store.get_episode(created["id"])
        assert record is not None
        await store.update_episode(
            created["id"], {**record, "shifts": ["locator_drift", "locator_drift"]}
        )
        assert (await api.get(f"/episodes/{created['id']}")).status_code == 200
        assert len((await api.get("/episodes")).json()["episodes"]) == 1
        assert (await api.get("/reports")).status_code == 200
        assert_error(
            await api.patch(f"/episodes/{created['id']}", json={"shifts": ["relabel", "relabel"]}),
            422,
            "more than once",
        )
