"""The recording directory: bodies by hash, logs that survive a torn write, safe names."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import time
from pathlib import Path

import pytest

from proxy.recording_dir import (
    RECENTLY_CHANGED_NS,
    CorruptRecording,
    Recording,
    WriteFailure,
    har_text,
    run_of,
)
from proxy.store import MemoryStore
from proxy.store.archiving import ArchivingStore


@pytest.fixture
def recording(tmp_path: Path) -> Recording:
    return Recording(tmp_path)


def entry(url: str) -> dict[str, object]:
    return {
        "startedDateTime": "2026-01-01T00:00:00+00:00",
        "request": {"method": "GET", "url": url},
        "response": {"status": 200, "headers": [], "content": {"mimeType": "text/html"}},
    }


async def test_bodies_are_stored_once_by_hash(recording: Recording, tmp_path: Path) -> None:
    for episode_id in ("a", "b"):
        await recording.append_entry(episode_id, entry("http://x/"), b"<p>same</p>", None)
    (first,), (second,) = [await recording.entries(e) for e in ("a", "b")]
    assert first["_skillshift"]["body"] == second["_skillshift"]["body"]
    await recording.flush()
    assert len(list((tmp_path / "bodies").glob("*/*"))) == 1
    with pytest.raises(ValueError):
        await recording.body("../../etc/passwd")


async def test_a_torn_last_line_loses_only_itself(recording: Recording, tmp_path: Path) -> None:
    await recording.append_event("e", {"type": "episode_created", "id": "1-0"})
    await recording.append_event("e", {"type": "step", "id": "2-0"})
    await recording.flush()  # (writes are queued; this test writes beside them)
    with (tmp_path / "episodes" / "e" / "events.jsonl").open("a") as log:
        log.write('{"type": "ste')  # a process killed mid-write
    assert [e["type"] for e in await recording.events("e")] == ["episode_created", "step"]


async def test_events_are_the_log_since_the_episode_was_created_or_reset(
    recording: Recording,
) -> None:
    # Written out of order, as two processes sharing the directory may append them.
    for event_id, kind in (("5-0", "step"), ("1-0", "episode_created"), ("3-0", "episode_reset"),
                           ("2-0", "step"), ("4-0", "skill_call")):  # fmt: skip
        await recording.append_event("e", {"type": kind, "id": event_id})
    assert [e["id"] for e in await recording.events("e")] == ["3-0", "4-0", "5-0"]


@pytest.mark.parametrize("episode_id", ["..", ".", "a/b", ""])
async def test_names_that_are_no_episode_ids_are_refused(
    recording: Recording, episode_id: str
) -> None:
    with pytest.raises(ValueError):
        await recording.append_event(episode_id, {"type": "x"})
    with pytest.raises(ValueError):
        await recording.episode(episode_id)


def test_har_text_is_text_only_for_text() -> None:
    assert har_text("é".encode(), "text/html; charset=utf-8") == {"text": "é"}
    assert har_text(b"\xff\xfe", "text/html")["encoding"] == "base64"
    assert har_text(b"GIF89a", "image/gif") == {"text": "R0lGODlh", "encoding": "base64"}


async def test_the_archive_keeps_what_the_store_drops(recording: Recording) -> None:
    now = [1000.0]
    store = ArchivingStore(MemoryStore(clock=lambda: now[0]), recording)
    record = {"id": "e", "created_at": 1000.0, "condition": "Src"}
    assert await store.create_episode("e", record, 1010)
    await store.append_event("e", {"type": "episode_created"}, 1010)
    await store.append_event("e", {"type": "task_result", "success": True}, 1010)
    now[0] = 1011.0  # expired: the store forgets it
    assert await store.get_episode("e") is None and await store.read_events("e") == []
    assert await store.append_event("e", {"type": "late"}, 1010) is None
    assert await recording.episode("e") == record
    assert [e["type"] for e in await recording.events("e")] == ["episode_created", "task_result"]
    assert await recording.episode_ids() == ["e"]


async def test_processes_sharing_a_directory_create_an_id_once(tmp_path: Path) -> None:
    """Two processes (each its own store) sharing one record directory, asked for one id at
    once: one creates it, the other is refused; an id whose creation failed is free again."""
    stores = [ArchivingStore(MemoryStore(), Recording(tmp_path)) for _ in range(2)]
    for index in range(5):
        record = {"id": f"race-{index}", "created_at": 1.0, "condition": "Src"}
        created = await asyncio.gather(
            *(store.create_episode(f"race-{index}", record, 2**31) for store in stores)
        )
        assert sorted(created) == [False, True], index
    failing = ArchivingStore(MemoryStore(), Recording(tmp_path))
    await failing.inner.create_episode("taken-live", {}, 2**31)  # (live in the store alone)
    assert not await failing.create_episode("taken-live", {"id": "taken-live"}, 2**31)
    assert await stores[0].create_episode("taken-live", {"id": "taken-live"}, 2**31)
    # A creation that failed leaves nothing an import of the id would run into.
    await failing.inner.create_episode("run-1", {}, 2**31)
    assert not await failing.create_episode("run-1", {"id": "run-1"}, 2**31)
    assert not (tmp_path / "episodes" / "run-1").exists()
    # An import and a creation of one id: whichever makes the directory first has it.
    await failing.recording.import_episode({"id": "imported-1"}, [])
    assert not await stores[1].create_episode("imported-1", {"id": "imported-1"}, 2**31)


async def test_the_archive_follows_a_reset_to_its_new_run(recording: Recording) -> None:
    store = ArchivingStore(MemoryStore(), recording)
    record = {"id": "e", "created_at": 1.0, "generation": 0, "condition": "Src"}
    assert await store.create_episode("e", record, 2**31)
    assert await store.reset_episode("e", {**record, "generation": 1})
    assert (await recording.episode("e") or {}).get("generation") == 1
    assert not await store.reset_episode("gone", {**record, "id": "gone"})
    assert await recording.episode("gone") is None


@pytest.mark.parametrize(("reset", "change"), [(True, {"generation": 1}), (False, {"seed": 4})])
async def test_a_logged_change_is_archived_with_its_event(
    recording: Recording, reset: bool, change: dict[str, int]
) -> None:
    store = ArchivingStore(MemoryStore(), recording)
    record = {"id": "e", "created_at": 1.0, "generation": 0, "condition": "Src"}
    assert await store.create_episode("e", record, 2**31)
    new = {**record, **change}
    assert await store.change_logged("e", new, record, {"type": "changed"}, 2**31, reset)
    assert await recording.episode("e") == new
    assert [e["type"] for e in await recording.events("e")] == ["changed"]
    # Not over a record it did not read: nothing archived.
    assert await store.change_logged("e", record, record, {"type": "changed"}, 2**31, reset) is None
    assert await recording.episode("e") == new
    assert len(await recording.events("e")) == 1


async def test_an_earlier_run_written_late_does_not_replace_a_later_one(
    recording: Recording,
) -> None:
    """Two resets at once may finish their archive writes in either order: the later run's
    record stays. A new creation under the id (another `created_at`) starts over."""
    record = {"id": "e", "created_at": 1.0, "generation": 2, "condition": "Src"}
    await recording.save_episode(record)
    await recording.save_episode({**record, "generation": 1})
    assert await recording.episode("e") == record
    # Within a run, by revision: two replicas' changes (a PATCH archived before a change that
    # took effect earlier) land in either order too.
    patched = {**record, "revision": 4, "tags": {"run": "r"}}
    await recording.save_episode(patched)
    await recording.save_episode({**record, "revision": 3})
    assert await recording.episode("e") == patched
    again = {**record, "created_at": 5.0, "generation": 0}
    await recording.save_episode(again)
    assert await recording.episode("e") == again
    # An archived record of another shape is replaced, not obeyed.
    shapes = ('{"created_at": 5.0, "generation": null}', '{"created_at": 5.0, "revision": "9"}')
    for archived in (*shapes, "[1, 2]", "{"):
        (recording.root / "episodes" / "e" / "episode.json").write_text(archived)
        await recording.save_episode(again)
        assert await recording.episode("e") == again


async def test_reads_see_every_write_queued_before_them(recording: Recording) -> None:
    writes = [recording.append_event("e", {"type": "step", "id": f"{i}-0"}) for i in range(50)]
    await asyncio.gather(*writes, recording.events("e"))
    assert len(await recording.events("e")) == 50


async def test_a_reset_or_a_reused_id_starts_a_new_run(recording: Recording) -> None:
    def entry_of(run: str) -> dict[str, object]:
        return {**entry("http://x/"), "_skillshift": {"load": 1, "run": run}}

    await recording.save_episode({"id": "e", "created_at": 1.0, "generation": 0})
    await recording.append_entry("e", entry_of(run_of(1.0, 0)), b"run one", None)
    await recording.save_episode({"id": "e", "created_at": 1.0, "generation": 1})  # reset
    assert await recording.entries("e") == []
    await recording.append_entry("e", entry_of(run_of(1.0, 1)), b"run two", None)
    (current,) = await recording.entries("e")
    assert await recording.body(current["_skillshift"]["body"]) == b"run two"


async def test_an_archive_never_holds_the_token(recording: Recording, tmp_path: Path) -> None:
    store = ArchivingStore(MemoryStore(), recording)
    record = {"id": "e", "created_at": 1.0, "token": "secret-token", "condition": "Src"}
    await store.create_episode("e", record, 2**31)
    await recording.flush()
    text = (tmp_path / "episodes" / "e" / "episode.json").read_text()
    assert "secret-token" not in text and "beacon_key" in text


async def test_an_archive_that_cannot_be_written_fails_nothing_else(
    recording: Recording, tmp_path: Path
) -> None:
    (tmp_path / "episodes" / "e").write_text("a file where the episode's directory goes")
    store = ArchivingStore(MemoryStore(), recording)
    assert await store.create_episode("e", {"id": "e", "created_at": 1.0}, 2**31)
    # An archived record that is no JSON still holds its id.
    (tmp_path / "episodes" / "f").mkdir()
    (tmp_path / "episodes" / "f" / "episode.json").write_text("{torn")
    assert not await store.create_episode("f", {"id": "f", "created_at": 1.0}, 2**31)
    assert await store.append_event("e", {"type": "page_served"}, 2**31) is not None
    assert [e["type"] for e in await store.read_events("e")] == ["page_served"]


async def test_a_torn_or_corrupt_entry_is_named_never_skipped(
    recording: Recording, tmp_path: Path
) -> None:
    """A replay answers from the entries: one silently missing would be a request answered
    otherwise than recorded. The events stay lenient (above): a report needs no torn line."""
    await recording.append_entry("e", entry("http://x/"), b"<p>page</p>", None)
    await recording.flush()
    with (tmp_path / "episodes" / "e" / "entries.jsonl").open("a") as entries:
        entries.write('{"request": {"method": "GE')  # a disk that filled up mid-line
    with pytest.raises(CorruptRecording, match=r"episodes/e/entries\.jsonl, line 2: not a JSON"):
        await recording.entries("e")


async def test_a_body_cut_short_is_named_by_its_file(recording: Recording, tmp_path: Path) -> None:
    await recording.append_entry("e", entry("http://x/"), b"<p>the whole page</p>", None)
    (found,) = await recording.entries("e")
    digest = found["_skillshift"]["body"]
    (tmp_path / "bodies" / digest[:2] / digest).write_bytes(b"<p>the wh")
    with pytest.raises(CorruptRecording, match=f"bodies/{digest[:2]}/{digest}: the body's bytes"):
        await recording.body(digest)


async def test_a_body_is_hashed_again_only_once_its_file_changed(
    recording: Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/pages` and a replay check every body at each call: a body unchanged since its last
    check is not read again; one written since is, even with its modification time (and so
    its size and mtime) put back as they were."""
    await recording.append_entry("e", entry("http://x/"), b"<p>the whole page</p>", None)
    entries = await recording.entries("e")
    digest = entries[0]["_skillshift"]["body"]
    path = tmp_path / "bodies" / digest[:2] / digest
    await recording.flush()
    while time.time_ns() - path.stat().st_ctime_ns <= RECENTLY_CHANGED_NS:
        await asyncio.sleep(0.01)  # (a body written within a tick of the check is read again)
    read: list[str] = []
    read_body = recording._read_body
    monkeypatch.setattr(recording, "_read_body", lambda d: (read.append(d), read_body(d))[1])
    await recording.check_bodies(entries)
    await recording.check_bodies(entries)
    assert read == [digest]
    before = path.stat()
    path.write_bytes(b"<p>the WHOLE page</p>")  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(CorruptRecording, match="the body's bytes are not"):
        await recording.check_bodies(entries)
    path.unlink()
    with pytest.raises(CorruptRecording, match="the body is missing"):
        await recording.check_bodies(entries)


async def test_a_full_disk_is_reported_per_entry_and_leaves_no_half_file(
    recording: Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures: list[WriteFailure] = []
    recording.on_entry_failure = failures.append

    def no_space(self: Path, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", no_space)
    await recording.append_entry("e", entry("http://x/big"), b"<p>big</p>", None)
    await recording.flush()
    await asyncio.sleep(0)  # the report is handed to the loop that queued the write
    (failure,) = failures
    assert failure.episode_id == "e" and failure.url == "http://x/big"
    assert failure.file.startswith("bodies/") and failure.reason == "No space left on device"
    assert list((tmp_path / "bodies").glob("*/*")) == []  # no partial body behind
    monkeypatch.undo()
    # A line the disk took only part of is ended, and the next one stays whole.
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, data[:10]))
    await recording.append_entry("e", entry("http://x/torn"), None, None)
    await recording.flush()
    monkeypatch.undo()
    await recording.append_entry("e", entry("http://x/after"), None, None)
    await recording.flush()
    await asyncio.sleep(0)
    assert [f.url for f in failures] == ["http://x/big", "http://x/torn"]
    assert failures[1].reason == "only part of the record was written"
    lines = (tmp_path / "episodes" / "e" / "entries.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["request"]["url"] == "http://x/after"


async def test_a_page_waits_for_room_when_the_writer_falls_behind(recording: Recording) -> None:
    """The bodies queued for the disk are bounded: with the writer held, entries go in until
    the budget is full, and the next one waits until the writer has written earlier ones."""
    import threading

    recording.max_backlog_bytes = 3 * 1024 * 1024
    held = threading.Event()
    recording._worker.submit(held.wait, 60)  # the writer, busy (until released)
    body = b"x" * (1024 * 1024)
    for index in range(3):
        await recording.append_entry("ep", entry(f"http://app.test/{index}"), body, None)
    fourth = asyncio.create_task(
        recording.append_entry("ep", entry("http://app.test/3"), body, None)
    )
    for _ in range(20):  # every chance to run: it waits on the held writer, not on time
        await asyncio.sleep(0)
    assert not fourth.done() and recording._backlog_bytes == 3 * 1024 * 1024
    held.set()
    await fourth
    await recording.flush()
    urls = [e["request"]["url"] for e in await recording.entries("ep")]
    assert urls == [f"http://app.test/{index}" for index in range(4)]
