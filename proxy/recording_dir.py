"""Recordings on disk: what an episode's browser received, and its configuration and events,
kept past the store's TTL.

  <dir>/bodies/ab/abcdef...          every body once, by SHA-256 (shared by all episodes)
  <dir>/episodes/<id>/episode.json   the episode's configuration (rewritten on every change)
  <dir>/episodes/<id>/events.jsonl   its events, with the ids the store gave them
  <dir>/episodes/<id>/entries.jsonl  its HAR 1.2 entries, bodies by hash (`_skillshift.body`)

Writes are queued on one worker thread and not waited for: neither the event loop nor the
response being recorded waits for the disk, and a read (queued on the same worker) still sees
every write queued before it. A write that fails (a full disk) is logged and counted in
`recording_errors_total`. Several processes may share a directory: each line is appended with a
single write() under O_APPEND, and readers order events by id.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from proxy import metrics
from proxy.har import EXTENSION, extension
from proxy.har_import import ImportedEntry
from proxy.recent import Recent
from proxy.store.base import parse_event_id

logger = logging.getLogger(__name__)

T = TypeVar("T")
# An episode id as a directory name: the API's id alphabet, never "." or "..".
SAFE_ID = re.compile(r"^(?!\.+$)[A-Za-z0-9_.-]{1,64}$")
TEXT_TYPES = re.compile(r"^(text/|application/(json|javascript|xml|xhtml\+xml|ld\+json)|image/svg)")
# Where an episode's current log starts: a reset forgets what came before. (An id the directory
# holds is not given to a new episode, `ArchivingStore`; a directory written before that rule
# may hold more than one creation under an id: the last is the current one.)
LOG_STARTS = frozenset({"episode_created", "episode_reset"})
# Bodies whose last check is remembered (`Recording._check_body`): about 300 bytes each.
CHECKED_BODIES = 50_000
# A file changed this recently may change again within one tick of its times (`_check_body`).
RECENTLY_CHANGED_NS = 100_000_000


class CorruptRecording(ValueError):
    """A record file that cannot be read as written: a line that is no JSON record (a disk
    that filled up mid-write, a file cut short or edited), a body whose bytes are not the ones
    its name hashes. The message names the file, relative to the recording directory."""


@dataclass(frozen=True)
class WriteFailure:
    """A recorded exchange that did not reach the disk: the episode, the URL, the file it
    was going to, and why."""

    episode_id: str
    url: str
    file: str
    reason: str


class Recording:
    # The bodies queued for the disk at most: a page recorded while earlier ones still wait
    # for the writer waits for room (its response with it). One writer thread keeps up with
    # a few pages a second; 60 pages of 1 MB a second queued half a gigabyte in ten seconds.
    max_backlog_bytes = 64 * 1024 * 1024

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.root = Path(directory)
        (self.root / "bodies").mkdir(parents=True, exist_ok=True)
        (self.root / "episodes").mkdir(parents=True, exist_ok=True)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recording")
        # The entries queued and not known to be written, oldest first, with their bodies'
        # bytes (the writer takes them in that order).
        self._backlog: deque[tuple[Future[None], int]] = deque()
        self._backlog_bytes = 0
        # Who hears of an entry that could not be written (the recorder: an event on the
        # episode), called on the event loop that queued the write.
        self.on_entry_failure: Callable[[WriteFailure], None] | None = None
        # Body digest -> the file's identity when its bytes were last found to be the ones its
        # name hashes (`check_bodies`); used on the writer thread only.
        self._checked: Recent[str, tuple[int, int, int, int]] = Recent(CHECKED_BODIES)

    async def _run(self, work: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._worker, work, *args)

    def _queue(self, work: Callable[..., None], *args: Any) -> None:
        self._worker.submit(work, *args).add_done_callback(_report_failure)

    async def flush(self) -> None:
        """Wait for every write queued so far."""
        await self._run(lambda: None)

    def close(self) -> None:
        self._worker.shutdown(wait=True)

    # -- writes ---------------------------------------------------------------------------

    async def save_episode(self, record: dict[str, Any]) -> None:
        self._directory(str(record["id"]))  # a bad id is the caller's error, now
        self._queue(self._write_episode, record)

    async def append_event(self, episode_id: str, event: dict[str, Any]) -> None:
        self._directory(episode_id)
        self._queue(self._append, episode_id, "events.jsonl", event)

    async def append_entry(
        self, episode_id: str, entry: dict[str, Any], body: bytes | None, source: bytes | None
    ) -> None:
        """One HAR entry; `body` as served (decoded; None when it was not kept), `source` the
        upstream's page it was shifted from (None when it went out as the upstream sent it)."""
        self._directory(episode_id)
        loop = asyncio.get_running_loop()
        url = str(entry.get("request", {}).get("url", ""))

        def reported(done: Future[None]) -> None:
            error = done.exception()
            if error is None:
                return
            _report_failure(done)
            file = self._relative(getattr(error, "filename", None))
            failure = WriteFailure(
                episode_id, url, file, getattr(error, "strerror", None) or str(error)
            )
            if self.on_entry_failure is not None:
                loop.call_soon_threadsafe(self.on_entry_failure, failure)

        weight = len(body or b"") + len(source or b"")
        await self._room_for(weight)
        written = self._worker.submit(self._write_entry, episode_id, entry, body, source)
        written.add_done_callback(reported)
        self._backlog.append((written, weight))
        self._backlog_bytes += weight

    async def _room_for(self, weight: int) -> None:
        """Wait until the entries queued before, with `weight` more bytes, fit the backlog's
        budget (an entry alone over it waits for the queue to empty, then goes)."""
        while self._backlog:
            oldest, size = self._backlog[0]
            if oldest.done():
                self._backlog.popleft()
                self._backlog_bytes -= size
                continue
            if self._backlog_bytes + weight <= self.max_backlog_bytes:
                return
            # (another waiter may take it off the queue meanwhile: the loop reads it again)
            await asyncio.wait([asyncio.wrap_future(oldest)])

    def _write_entry(
        self, episode_id: str, entry: dict[str, Any], body: bytes | None, source: bytes | None
    ) -> None:
        extra = entry.setdefault(EXTENSION, {})
        if body is not None:
            extra["body"] = self._put_body(body)
        if source is not None:
            extra["source"] = self._put_body(source)
        self._append(episode_id, "entries.jsonl", entry)

    def _put_body(self, body: bytes) -> str:
        digest = hashlib.sha256(body).hexdigest()
        path = self.root / "bodies" / digest[:2] / digest
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.part")
            try:
                partial.write_bytes(body)
                partial.replace(path)  # atomic: a reader never sees half a body
            except OSError:
                partial.unlink(missing_ok=True)  # a full disk leaves no half body behind
                raise
        return digest

    async def import_episode(self, record: dict[str, Any], entries: list[ImportedEntry]) -> None:
        """A new episode's recording, whole (an imported HAR): its configuration and its
        entries with their bodies, written before this returns. A FileExistsError when the
        directory already has the episode (its id is taken)."""
        self._directory(str(record["id"]))
        await self._run(self._write_imported, record, entries)

    def _write_imported(self, record: dict[str, Any], entries: list[ImportedEntry]) -> None:
        directory = self._directory(str(record["id"]))
        directory.mkdir()  # FileExistsError: never mixed into another episode's recording
        for item in entries:
            self._write_entry(str(record["id"]), item.entry, item.body, None)
        # Last: an episode is listed (and replayable) only once its entries are all there.
        self._write_episode(record)

    def _write_episode(self, record: dict[str, Any]) -> None:
        # Never the token (it binds a browser to a live episode); the beacon key derived from
        # it is all a replay of the episode needs.
        record = {key: value for key, value in record.items() if key != "token"}
        directory = self._directory(str(record["id"]))
        directory.mkdir(exist_ok=True)
        if _older_run(record, self._archived_record(str(record["id"]))):
            return  # an earlier reset's record, written after a later one's: the later stays
        partial = directory / f"episode.json.{os.getpid()}.part"
        partial.write_text(json.dumps(record, sort_keys=True))
        partial.replace(directory / "episode.json")

    def _append(self, episode_id: str, name: str, item: dict[str, Any]) -> None:
        directory = self._directory(episode_id)
        directory.mkdir(exist_ok=True)
        line = (json.dumps(item, separators=(",", ":")) + "\n").encode()
        path = directory / name
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            written = os.write(descriptor, line)
            if written < len(line):
                # A full disk takes part of the line: end it, so the next line stays whole (a
                # reader names the torn one), and say so.
                with contextlib.suppress(OSError):
                    os.write(descriptor, b"\n")
                raise OSError(errno.ENOSPC, "only part of the record was written", str(path))
        finally:
            os.close(descriptor)

    def _relative(self, filename: object) -> str:
        """A file of the recording as its errors name it: relative to the directory."""
        if not filename:
            return ""
        path = Path(str(filename))
        return str(path.relative_to(self.root)) if path.is_relative_to(self.root) else str(path)

    def _directory(self, episode_id: str) -> Path:
        if not SAFE_ID.match(episode_id):
            raise ValueError(f"{episode_id!r} is not an episode id")
        return self.root / "episodes" / episode_id

    # -- reads ----------------------------------------------------------------------------

    def claim(self, episode_id: str) -> bool:
        """Take the id for a new episode, once across every process sharing the directory:
        the first to make the episode's directory has it (`mkdir` is atomic), as an import
        does; an id whose directory exists (an episode live, deleted, expired or imported, or
        one another process is creating) is taken. Made at once, not queued behind the
        writes: two processes creating one id at once each saw no record yet, and both runs
        went into one directory, one hiding the other."""
        directory = self._directory(episode_id)
        try:
            directory.mkdir()
        except FileExistsError:
            if directory.is_dir():
                return False
            return self._unwritable(directory)
        except OSError:
            return self._unwritable(directory)
        return True

    def release(self, episode_id: str) -> None:
        """Give back a claim whose episode was not created after all (a store that failed):
        its directory, still empty."""
        with contextlib.suppress(OSError):
            self._directory(episode_id).rmdir()

    def _unwritable(self, directory: Path) -> bool:
        """An archive that cannot be written fails nothing else: the id goes to the store
        alone (the failure is logged and counted, as a failed write is)."""
        logger.error("the recording cannot claim %s: it is not a writable directory", directory)
        metrics.inc("recording_errors_total")
        return True

    async def episode(self, episode_id: str) -> dict[str, Any] | None:
        """The archived configuration, or None if this directory never saw the episode."""
        return await self._run(self._read_episode, episode_id)

    async def episode_ids(self) -> list[str]:
        return await self._run(
            lambda: sorted(p.parent.name for p in (self.root / "episodes").glob("*/episode.json"))
        )

    async def events(self, episode_id: str) -> list[dict[str, Any]]:
        """The archived log since the episode was (re)created or last reset, oldest first."""
        events = await self._run(self._read_lines, episode_id, "events.jsonl")
        events.sort(key=lambda event: parse_event_id(str(event.get("id", "0-0"))))
        starts = [i for i, event in enumerate(events) if event.get("type") in LOG_STARTS]
        return events[starts[-1] :] if starts else events

    async def entries(self, episode_id: str) -> list[dict[str, Any]]:
        """The recorded HAR entries of the episode's current run (since it was created, or
        last reset), in the order responses completed."""
        return await self._run(self._current_entries, episode_id)

    async def version(self, episode_id: str) -> tuple[int, int]:
        """Changes whenever `entries` would: the entries file's size and the episode record's
        modification time (a reset starts a new run). Stat calls, not a read."""
        return await self._run(self._version, episode_id)

    def _version(self, episode_id: str) -> tuple[int, int]:
        directory = self._directory(episode_id)
        found = []
        for name in ("entries.jsonl", "episode.json"):
            try:
                stat = (directory / name).stat()
            except FileNotFoundError:
                found.append(-1)
                continue
            found.append(stat.st_size if name == "entries.jsonl" else stat.st_mtime_ns)
        return found[0], found[1]

    def _current_entries(self, episode_id: str) -> list[dict[str, Any]]:
        entries = self._read_lines(episode_id, "entries.jsonl", strict=True)
        record = self._read_episode(episode_id)
        if record is None:
            return entries
        run = run_of(record.get("created_at", 0), record.get("generation", 0))
        return [e for e in entries if extension(e).get("run", run) == run]

    async def body(self, digest: str) -> bytes:
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ValueError(f"{digest!r} is not a body digest")
        return await self._run(self._read_body, digest)

    def _read_body(self, digest: str) -> bytes:
        path = self.root / "bodies" / digest[:2] / digest
        try:
            body = path.read_bytes()
        except FileNotFoundError:
            raise CorruptRecording(
                f"{path.relative_to(self.root)}: the body is missing (deleted since it was written)"
            ) from None
        if hashlib.sha256(body).hexdigest() != digest:
            raise CorruptRecording(
                f"{path.relative_to(self.root)}: the body's bytes are not the ones its name "
                "hashes (cut short or changed since it was written)"
            )
        return body

    async def check_bodies(
        self, entries: list[dict[str, Any]], kinds: tuple[str, ...] = ("body", "source")
    ) -> None:
        """Read every body the entries name (`kinds`: as served, and the page each was
        shifted from) as a read of it would: a CorruptRecording names the first that is
        missing or not the bytes its name hashes. For what answers from them later (a replay
        serves the bodies as served; the pages' view reads both), so a bad recording is told
        when it is asked for, not by a 502 mid-replay. One body in memory at a time."""
        digests = {
            str(digest)
            for entry in entries
            for kind in kinds
            if (digest := extension(entry).get(kind))
        }

        def check() -> None:
            for digest in sorted(digests):
                self._check_body(digest)

        await self._run(check)

    def _check_body(self, digest: str) -> None:
        """Whether the body is the bytes its name hashes, read and hashed only if its file
        changed since it last was: `/pages` and a replay ask of every body of a recording, at
        every call, and a recording polled while it grows would hash it all each time. The
        file's inode, size and times say it is the same file, unwritten since (its change time
        moves at any write, whatever the modification time is set back to)."""
        path = self.root / "bodies" / digest[:2] / digest
        try:
            stat = path.stat()
        except FileNotFoundError:
            stat = None
        identity = (
            None
            if stat is None
            else (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        )
        if identity is not None and self._checked.recall(digest) == identity:
            return
        self._read_body(digest)  # (its bytes dropped as soon as they are hashed)
        # Verified after the stat: a later write moves its change time, unless it falls in the
        # same tick of the file system's clock, so a file changed that recently is not trusted.
        if identity is not None and time.time_ns() - identity[3] > RECENTLY_CHANGED_NS:
            self._checked.keep(digest, identity)

    async def har(self, episode_id: str, creator_version: str) -> dict[str, Any]:
        """The episode's recording as one HAR 1.2 log, bodies inline (as text, or base64)."""
        entries = await self.entries(episode_id)
        for entry in entries:
            content = entry["response"]["content"]
            digest = extension(entry).get("body")
            if digest:
                content.update(har_text(await self.body(digest), content.get("mimeType", "")))
        log: dict[str, Any] = {
            "version": "1.2",
            "creator": {"name": "skillshift", "version": creator_version},
            "pages": har_pages(entries),
            "entries": entries,
        }
        record = await self.episode(episode_id)
        if record is not None:
            # What the recording was made under (no token: its beacon key), so that a HAR
            # imported elsewhere replays under the same labels, its popups reported alike.
            log[EXTENSION] = {"episode": record}
        return {"log": log}

    def _archived_record(self, episode_id: str) -> dict[str, Any] | None:
        """The record archived now, or None (none, or unreadable: a new one replaces it)."""
        try:
            return self._read_episode(episode_id)
        except (OSError, ValueError):
            return None

    def _read_episode(self, episode_id: str) -> dict[str, Any] | None:
        path = self._directory(episode_id) / "episode.json"
        try:
            record: dict[str, Any] = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        return record

    def _read_lines(self, episode_id: str, name: str, strict: bool = False) -> list[dict[str, Any]]:
        """The file's records. A line that is no JSON record is skipped, or with `strict` (the
        entries a replay answers from: one missing would be a request answered otherwise than
        recorded) a CorruptRecording naming the file and the line."""
        path = self._directory(episode_id) / name
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return []
        items = []
        for number, line in enumerate(raw.splitlines(), start=1):
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise ValueError("not a JSON object")
            except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
                if strict:
                    where = path.relative_to(self.root)
                    raise CorruptRecording(
                        f"{where}, line {number}: not a JSON record ({error}); the recording was "
                        "cut short (a full disk, a killed process) or changed since"
                    ) from None
                continue
            items.append(item)
        return items


def _report_failure(done: Future[None]) -> None:
    error = done.exception()
    if error is not None:
        logger.error("recording write failed: %s", error)
        metrics.inc("recording_errors_total")


def page_at(entries: list[dict[str, Any]], load: int) -> dict[str, Any] | None:
    """The entry of a run's navigation `load` (one per load in a run)."""
    return next((e for e in entries if extension(e).get("load") == load), None)


def _older_run(record: dict[str, Any], archived: object) -> bool:
    """Whether `record` is older than `archived`, of the same creation of the episode: of an
    earlier run (a lower generation) or an earlier change in the same run (a lower revision).
    Two resets at once, or two replicas' changes, finish their writes in either order."""
    if not isinstance(archived, dict) or archived.get("created_at") != record.get("created_at"):
        return False
    archived_order = (archived.get("generation", 0), archived.get("revision", 0))
    # (An archived record of another shape, a hand-edited one, is replaced, not obeyed.)
    return all(isinstance(part, int) for part in archived_order) and archived_order > (
        int(record.get("generation", 0)),
        int(record.get("revision", 0)),
    )


def run_of(created_at: float, generation: int) -> str:
    """Which run of an episode an entry belongs to: its creation and its resets."""
    return f"{created_at:.6f}/{generation}"


def har_text(body: bytes, mime_type: str) -> dict[str, Any]:
    """A HAR `content`'s text: the body itself when it is text, else base64."""
    if TEXT_TYPES.match(mime_type.lower()):
        try:
            return {"text": body.decode("utf-8")}
        except UnicodeDecodeError:
            pass
    return {"text": base64.b64encode(body).decode("ascii"), "encoding": "base64"}


def har_pages(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One HAR page per recorded navigation (its load index is the page id)."""
    pages = []
    for entry in entries:
        extra = extension(entry)
        if extra.get("navigation"):
            pages.append(
                {
                    "startedDateTime": entry["startedDateTime"],
                    "id": entry["pageref"],
                    "title": entry["request"]["url"],
                    "pageTimings": {},
                }
            )
    return pages
