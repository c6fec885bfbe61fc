"""Evidence through the API: archived episodes, recordings, replays, attributions, digests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from api.app import create_app
from api.service.settings import Settings
from proxy.episode import beacon_key_of
from proxy.events import event
from proxy.recording_dir import Recording
from proxy.store import MemoryStore
from proxy.store.archiving import ArchivingStore


@pytest.fixture
async def recorded(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, Recording]]:
    recording = Recording(tmp_path)
    app = create_app(ArchivingStore(MemoryStore(), recording), Settings(), recording)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        yield client, recording
    recording.close()


async def test_without_a_record_dir_there_is_nothing_to_replay(api: httpx.AsyncClient) -> None:
    await api.post("/episodes", json={"id": "e1"})
    replay = await api.post("/episodes", json={"replay_of": "e1"})
    assert replay.status_code == 404 and "--record-dir" in replay.json()["error"]
    assert (await api.get("/episodes/e1/har")).status_code == 404
    assert (await api.get("/episodes/e1/pages")).status_code == 404


async def test_bad_replays_are_refused(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, _ = recorded
    assert (await api.post("/episodes", json={"replay_of": "nope"})).status_code == 404
    await api.post("/episodes", json={"id": "empty"})
    empty = await api.post("/episodes", json={"replay_of": "empty"})
    assert empty.status_code == 422 and "no recorded page" in empty.json()["error"]
    assert (await api.post("/episodes", json={"from_load": 2})).status_code == 422
    assert (await api.post("/episodes", json={"replay_of": ".."})).status_code == 422
    assert (await api.post("/episodes", json={"id": ".."})).status_code == 422


async def test_a_deleted_episode_is_still_evidence(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, _ = recorded
    await api.post("/episodes", json={"id": "gone", "condition": "src-perc", "tags": {"r": "1"}})
    body = {"type": "task_result", "success": False, "steps": 7}
    assert (await api.post("/episodes/gone/events", json=body)).status_code == 201
    assert (await api.delete("/episodes/gone")).status_code == 204
    shown = (await api.get("/episodes/gone")).json()
    assert shown["archived"] is True and shown["condition"] == "Src-Perc"
    assert not {"token", "proxy", "proxy_url", "header"} & set(shown)  # nothing to bind to
    events = (await api.get("/episodes/gone/events")).json()["events"]
    assert [e["type"] for e in events] == ["episode_created", "task_result"]
    after_first = (await api.get(f"/episodes/gone/events?after={events[0]['id']}")).json()
    assert [e["type"] for e in after_first["events"]] == ["task_result"]
    (row,) = (await api.get("/reports?tag=r=1")).json()["rows"]
    assert row["episodes"] == 1 and row["SR"] == 0.0 and row["AS"] == 7.0
    assert (await api.get("/episodes/gone/report")).json()["archived"] is True
    # Archived is not live: it cannot be changed, nor deleted again.
    assert (await api.delete("/episodes/gone")).status_code == 404
    assert (await api.post("/episodes/gone/reset")).status_code == 404
    # Nor made anew: its id stays taken, and the evidence stays as it was.
    again = await api.post("/episodes", json={"id": "gone", "condition": "Tgt"})
    assert again.status_code == 409 and "already exists" in again.json()["error"]
    assert (await api.get("/episodes/gone")).json()["condition"] == "Src-Perc"
    assert (await api.get("/reports?tag=r=1")).json()["rows"] == [row]


async def test_failures_carry_their_attribution(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, _ = recorded
    await api.post("/episodes", json={"id": "f", "condition": "Src-Exec"})
    body = {"type": "skill_failure", "skill": "search", "target": "#q"}
    event = (await api.post("/episodes/f/events", json=body)).json()
    assert event["attribution"]["shift"] == "unattributed"
    assert "no page" in event["attribution"]["why"]
    stored = (await api.get("/episodes/f/events")).json()["events"][-1]
    assert stored["attribution"] == event["attribution"]


async def test_the_shift_digest_names_what_decides_the_shifts(api: httpx.AsyncClient) -> None:
    async def digest(**config: object) -> str:
        return str((await api.post("/episodes", json=config)).json()["shift_digest"])

    same = await digest(condition="Src-Perc", seed=1, tags={"a": "1"})
    assert same == await digest(condition="src-perc", seed=1, tags={"a": "2"}, ttl_s=60)
    assert same.startswith("sha256:")
    assert same != await digest(condition="Src-Perc", seed=2)
    assert same != await digest(condition="Src-Perc", seed=1, perceptual="extended")
    assert same != await digest(condition="Src-Perc", seed=1, site="wordpress")
    params = {"locator_drift": {"wrap_rate": 0.9}}
    assert same != await digest(condition="Src-Perc", seed=1, shift_params=params)


async def test_an_archived_record_this_version_cannot_read_breaks_no_report(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, recording = recorded
    await recording.save_episode({"id": "old", "site": "a-profile-since-removed"})
    await api.post("/episodes", json={"id": "new", "tags": {"r": "2"}})
    assert (await api.get("/reports")).status_code == 200
    assert (await api.get("/episodes/old")).status_code == 404
    assert (await api.get("/episodes/new")).json()["archived"] is False


async def test_a_replay_of_an_archived_episode_reports_with_its_pages_key(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, recording = recorded
    original = (await api.post("/episodes", json={"id": "orig"})).json()
    entry = page_entry()
    await recording.append_entry("orig", entry, b"<p>page</p>", None)
    await api.delete("/episodes/orig")
    replay = (await api.post("/episodes", json={"replay_of": "orig"})).json()
    assert replay["replayed_beacon_key"] == beacon_key_of("orig", original["token"])


async def test_archived_service_episodes_from_before_the_marker_are_internal(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    """An archive written before `internal` existed: the oracle's and the preview's episodes
    (tagged so by the service) stay out of /reports; a user's episode counts."""
    api, recording = recorded
    for episode_id, tags in (("o1", {"oracle": "1"}), ("p1", {"preview": "1"}), ("u1", {})):
        created = (await api.post("/episodes", json={"id": episode_id, "tags": tags})).json()
        old_record = {
            key: value
            for key, value in created.items()
            if key in ("id", "condition", "seed", "tags", "created_at", "expires_at", "ttl_s")
        }
        await recording.save_episode(old_record)
        await api.delete(f"/episodes/{episode_id}")
    rows = (await api.get("/reports")).json()["rows"]
    assert [row["episodes"] for row in rows] == [1]
    everything = (await api.get("/reports", params={"include_internal": "true"})).json()
    assert [row["episodes"] for row in everything["rows"]] == [3]


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"replay_ignore": {"login": ["csrf"]}}, "'login' is neither a path prefix"),
        ({"replay_ignore": {"/login?x=1": ["csrf"]}}, "without query or fragment"),
        ({"replay_ignore": {"/login": []}}, "'/login': give 1 to 64 field names"),
        ({"replay_ignore": {"/login": [""]}}, "a field name has 1 to 256 characters"),
        ({"replay_ignore": {"/login": "csrf"}}, "replay_ignore./login: Input should be"),
        ({"replay_deterministic": "no"}, "replay_deterministic: Input should be a valid boolean"),
    ],
)
async def test_bad_replay_settings_are_refused_saying_what_is_wrong(
    recorded: tuple[httpx.AsyncClient, Recording], settings: dict[str, object], says: str
) -> None:
    api, _ = recorded
    refused = await api.post("/episodes", json={"replay_of": "any", **settings})
    assert refused.status_code == 422 and says in refused.json()["error"], refused.text


async def test_replay_settings_need_a_replay(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, _ = recorded
    for settings in ({"replay_ignore": {"/": ["t"]}}, {"replay_deterministic": False}):
        refused = await api.post("/episodes", json=settings)
        assert refused.status_code == 422
        assert f"{next(iter(settings))} is a replay setting" in refused.json()["error"]
    assert (await api.post("/episodes", json={"replay_deterministic": True})).status_code == 201


async def test_a_recording_that_cannot_be_read_is_refused_naming_the_file_and_line(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, recording = recorded
    await api.post("/episodes", json={"id": "torn"})
    entry = page_entry()
    await recording.append_entry("torn", entry, b"<p>page</p>", None)
    await recording.flush()
    with (recording.root / "episodes" / "torn" / "entries.jsonl").open("a") as entries:
        entries.write('{"request": {"met\n')
    for answer in (
        await api.post("/episodes", json={"replay_of": "torn"}),
        await api.get("/episodes/torn/har"),
        await api.get("/episodes/torn/pages"),
    ):
        assert answer.status_code == 422, answer.text
        assert "episodes/torn/entries.jsonl, line 2" in answer.json()["error"]


async def test_a_replay_of_an_episode_that_recorded_nothing_says_why(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    api, _ = recorded
    await api.post("/episodes", json={"id": "unrecorded", "record": "off"})
    refused = await api.post("/episodes", json={"replay_of": "unrecorded"})
    assert refused.status_code == 422
    assert (
        "no recorded page" in refused.json()["error"] and "record: off" in refused.json()["error"]
    )


def page_entry() -> dict[str, object]:
    """A recorded navigation's entry (load 1 of http://site/), its bodies given as it is kept."""
    return {
        "startedDateTime": "2026-01-01T00:00:00+00:00",
        "request": {"method": "GET", "url": "http://site/"},
        "response": {"status": 200, "headers": [], "content": {"mimeType": "text/html"}},
        "_skillshift": {"navigation": True, "load": 1, "changes": {"elements": []}},
    }


def har_of_one_page(text: str) -> dict[str, object]:
    """A HAR of one page load, as another tool writes it, its body `text`."""
    entry = {
        "startedDateTime": "2026-01-01T00:00:00+00:00",
        "request": {"method": "GET", "url": "http://site/", "headers": []},
        "response": {
            "status": 200,
            "headers": [{"name": "Content-Type", "value": "text/html"}],
            "content": {"size": len(text), "mimeType": "text/html", "text": text},
        },
        "_resourceType": "document",
    }
    return {"log": {"version": "1.2", "entries": [entry]}}


async def test_a_har_import_has_its_own_body_limit(tmp_path: Path) -> None:
    """A HAR holds every body of a run: one over the 256 KB of other requests imports, one
    over `import_max_bytes` is a 413 naming the option, and nothing is written."""
    recording = Recording(tmp_path)
    settings = Settings(import_max_bytes=600_000)
    app = create_app(ArchivingStore(MemoryStore(), recording), settings, recording)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as api:
        big = await api.post("/episodes/import", json=har_of_one_page("<p>" + "x" * 400_000))
        assert big.status_code == 201, big.text
        assert big.json()["pages"] == 1
        too_big = await api.post(
            "/episodes/import", params={"id": "huge"}, json=har_of_one_page("x" * 700_000)
        )
        assert too_big.status_code == 413
        assert too_big.json() == {
            "error": "request body over 600000 bytes, the limit of a HAR import "
            "(--import-max-bytes, SKILLSHIFT_IMPORT_MAX_BYTES)",
            "status": 413,
        }
        assert (await api.get("/episodes/huge")).status_code == 404
        # Every other body keeps the general limit.
        assert (await api.post("/episodes", content=b"x" * 300_000)).status_code == 413
    recording.close()


async def test_the_pages_of_another_tools_har_are_what_is_known_of_them(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    """An imported HAR another tool wrote has no change maps: its pages are listed, each
    with no element changed and no popup, and a replay of it is made."""
    api, _ = recorded
    imported = await api.post(
        "/episodes/import", params={"id": "foreign"}, json=har_of_one_page("<p>hi</p>")
    )
    assert imported.status_code == 201, imported.text
    listed = await api.get("/episodes/foreign/pages")
    assert listed.status_code == 200, listed.text
    (shown,) = listed.json()["pages"]
    assert (shown["load"], shown["url"], shown["shifted"]) == (1, "http://site/", False)
    assert (shown["shifts"], shown["elements_changed"], shown["popup"]) == ({}, 0, None)
    page = await api.get("/episodes/foreign/pages/1")
    assert page.status_code == 200, page.text
    assert page.json() == {"load": 1, "url": "http://site/", "shifts": {}, "elements": []}
    assert (await api.get("/episodes/foreign/pages/1/served")).text == "<p>hi</p>"
    assert (await api.post("/episodes", json={"replay_of": "foreign"})).status_code == 201


@pytest.mark.parametrize("damage", ["one byte appended", "deleted"])
async def test_a_recorded_body_that_cannot_be_read_is_refused_naming_its_file(
    recorded: tuple[httpx.AsyncClient, Recording], damage: str
) -> None:
    """As the docs say: a replay of it, its HAR and its pages are each a 422 naming the body's
    file, not a replay that answers that page with a 502."""
    api, recording = recorded
    await api.post("/episodes", json={"id": "bad"})
    entry = page_entry()
    await recording.append_entry("bad", entry, b"<p>page</p>", None)
    await recording.flush()
    (written,) = await recording.entries("bad")
    digest = written["_skillshift"]["body"]
    body = recording.root / "bodies" / digest[:2] / digest
    if damage == "deleted":
        body.unlink()
    else:
        with body.open("ab") as appended:
            appended.write(b"x")
    for answer in (
        await api.post("/episodes", json={"replay_of": "bad"}),
        await api.get("/episodes/bad/har"),
        await api.get("/episodes/bad/pages"),
    ):
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"].startswith(
            f"the recording cannot be read: bodies/{digest[:2]}/{digest}: the body"
        )


async def test_a_replay_of_pages_served_but_never_written_says_so(tmp_path: Path) -> None:
    """A process killed after a page was served and before its entry reached the disk leaves
    the `page_served` event alone: the refusal says what the events and the recording hold."""
    recording = Recording(tmp_path)
    store = ArchivingStore(MemoryStore(), recording)
    app = create_app(store, Settings(), recording)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://api"
    ) as api:
        created = (await api.post("/episodes", json={"id": "killed"})).json()
        served = event("page_served", "proxy", url="http://site/", kind="document", load_index=1)
        await store.append_event("killed", served, created["expires_at"])  # as the proxy does
        refused = await api.post("/episodes", json={"replay_of": "killed"})
        assert refused.status_code == 422
        assert refused.json()["error"] == (
            "episode 'killed' has no recorded page to replay: its events say 1 page(s) were "
            "served, but its recording holds no page entry: they were served while the service "
            "had no record directory, or by a process stopped before it wrote them"
        )
    recording.close()


async def test_an_import_takes_the_ids_an_episode_may_have(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    """`run.1` is an episode id `POST /episodes` takes: an import takes it too; dots alone
    (a directory's `.` and `..`) neither."""
    api, _ = recorded
    imported = await api.post(
        "/episodes/import", params={"id": "run.1"}, json=har_of_one_page("<p>hi</p>")
    )
    assert imported.status_code == 201, imported.text
    assert (await api.get("/episodes/run.1")).status_code == 200
    for dots in ("..", "."):
        refused = await api.post(
            "/episodes/import", params={"id": dots}, json=har_of_one_page("<p>hi</p>")
        )
        assert refused.status_code == 422 and "dots" in refused.json()["error"], dots


async def test_a_replay_needs_the_bodies_it_serves_not_the_pages_they_were_shifted_from(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    """A replay answers with the bodies as served: the upstream's page a body was shifted from
    going missing refuses its pages' view (which reads it), not the replay."""
    api, recording = recorded
    await api.post("/episodes", json={"id": "shifted"})
    entry = page_entry()
    await recording.append_entry("shifted", entry, b"<p>served</p>", b"<p>upstream</p>")
    await recording.flush()
    (written,) = await recording.entries("shifted")
    source = written["_skillshift"]["source"]
    (recording.root / "bodies" / source[:2] / source).unlink()
    assert (await api.get("/episodes/shifted/pages")).status_code == 422
    replay = await api.post("/episodes", json={"replay_of": "shifted"})
    assert replay.status_code == 201, replay.text


async def test_a_recorded_page_nested_past_the_parser_is_refused_saying_why(
    recorded: tuple[httpx.AsyncClient, Recording],
) -> None:
    """A page served unshifted (or imported) may nest deeper than the parser reads: its view
    says so, where it was a 500; its bytes are still served as they were kept."""
    api, _ = recorded
    deep = "<html><body>" + "<div>" * 3000 + "x" + "</div>" * 3000 + "</body></html>"
    imported = await api.post("/episodes/import", params={"id": "deep"}, json=har_of_one_page(deep))
    assert imported.status_code == 201, imported.text
    view = await api.get("/ui/pages/deep/1/served")
    assert view.status_code == 422, view.text
    assert "deeper than the parser reads" in view.json()["error"]
    assert (await api.get("/episodes/deep/pages/1/served")).text == deep
