"""What an episode leaves behind, live or archived: its configuration, events, recording and
pages. Episodes the store has deleted or expired are read from the recording directory, so a
sweep's early evidence is still there when the sweep ends."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from api.analysis.summary import all_events
from api.failures import Conflict, Invalid, NotFound, validation_message
from proxy.episode import Episode, EpisodeConfig, new_episode
from proxy.events import event
from proxy.har import extension
from proxy.har_import import UnreadableHar, read_har, recorded_episode
from proxy.recording_dir import Recording, page_at, run_of
from proxy.store import EpisodeStore
from proxy.store.archiving import archived_form

logger = logging.getLogger(__name__)


class Evidence:
    def __init__(self, store: EpisodeStore, recording: Recording | None) -> None:
        self.store = store
        self.recording = recording

    async def episode(self, episode_id: str) -> tuple[Episode, bool] | None:
        """The episode and whether it is live; an archived one when the store has none."""
        record = await self.store.get_episode(episode_id)
        if record is not None:
            return Episode.model_validate(record), True
        if self.recording is not None:
            try:
                archived = await self.recording.episode(episode_id)
            except ValueError:  # not an id a directory can have
                return None
            if archived is not None:
                return _archived_episode(archived)
        return None

    async def require(self, episode_id: str) -> tuple[Episode, bool]:
        found = await self.episode(episode_id)
        if found is None:
            raise NotFound(f"episode {episode_id!r} not found")
        return found

    async def events(self, episode_id: str, live: bool) -> list[dict[str, Any]]:
        if live or self.recording is None:
            return await all_events(self.store, episode_id)
        return await self.recording.events(episode_id)

    async def episodes(self) -> list[tuple[Episode, bool]]:
        """Every live episode, then every archived one the store no longer holds."""
        live = [Episode.model_validate(r) for r in await self.store.list_episodes()]
        found = [(episode, True) for episode in live]
        if self.recording is not None:
            known = {episode.id for episode in live}
            for episode_id in await self.recording.episode_ids():
                if episode_id not in known:
                    archived = await self.recording.episode(episode_id)
                    episode = _archived_episode(archived) if archived is not None else None
                    if episode is not None:
                        found.append(episode)
        return found

    async def beacon_key(self, episode_id: str) -> str:
        """The key the episode's recorded pages report with (archived ones keep no token)."""
        record = await self.store.get_episode(episode_id)
        if record is not None:
            return Episode.model_validate(record).beacon_key
        archived = await self.recorded().episode(episode_id)
        return str((archived or {}).get("beacon_key", ""))

    def recorded(self) -> Recording:
        if self.recording is None:
            raise NotFound("this service records nothing (start it with --record-dir)")
        return self.recording

    async def pages(self, episode_id: str) -> list[dict[str, Any]]:
        """The recorded navigations, each as its HAR entry, their bodies checked (a
        CorruptRecording names one that cannot be read as written)."""
        pages = _navigations(await self.recorded().entries(episode_id))
        await self.recorded().check_bodies(pages)
        return pages

    async def replayable_pages(self, episode_id: str) -> list[dict[str, Any]]:
        """The recorded navigations, every body a replay of them may answer with checked (as
        served: a replay never reads the page a body was shifted from)."""
        entries = await self.recorded().entries(episode_id)
        await self.recorded().check_bodies(entries, kinds=("body",))
        return _navigations(entries)

    async def page(self, episode_id: str, load: int) -> dict[str, Any]:
        entry = page_at(await self.recorded().entries(episode_id), load)
        if entry is None:
            raise NotFound(f"episode {episode_id!r} has no recorded page at load {load}")
        return entry

    async def page_body(
        self, episode_id: str, load: int, version: str
    ) -> tuple[dict[str, Any], bytes]:
        """A recorded page's entry and its HTML as served (`served`) or as the upstream sent
        it (`source`; the served one when it went out unchanged)."""
        if version not in ("served", "source"):
            raise NotFound("a page's versions are 'served' and 'source'")
        await self.require(episode_id)
        entry = await self.page(episode_id, load)
        extra = extension(entry)
        digest = (extra.get("source") if version == "source" else None) or extra.get("body")
        if not digest:
            raise NotFound(f"load {load} was recorded without its body")
        return entry, await self.recorded().body(digest)

    async def import_har(
        self, document: object, name: str, episode_id: str | None = None
    ) -> dict[str, Any]:
        """A HAR made into an archived episode's recording, for a replay to answer from
        (proxy/har_import.py): under the labels of the episode the service's own export names,
        else `Src`; left out of reports (`internal`: no task ran here) and tagged `imported`."""
        recording = self.recorded()
        if episode_id is not None and await self.episode(episode_id) is not None:
            raise Conflict(f"episode {episode_id!r} already exists")
        recorded = recorded_episode(document)
        try:
            config = EpisodeConfig.model_validate(
                {
                    **{key: recorded[key] for key in REPLAY_LABELS if key in recorded},
                    "tags": {"imported": name[:200]},
                    "internal": True,
                }
            )
        except ValidationError as error:
            raise Invalid(
                f"{name}: the recorded episode's settings are not valid here: "
                f"{validation_message(error)}"
            ) from None
        episode = new_episode(config, episode_id)
        try:
            imported = read_har(document, run_of(episode.created_at, episode.generation))
        except UnreadableHar as error:
            raise Invalid(f"{name}: {error}") from None
        if not imported.pages:
            raise Invalid(
                f"{name}: none of its {len(imported.entries)} entries is a page load (a document "
                "the browser navigated to): there is nothing to replay"
            )
        record = archived_form(episode.model_dump(mode="json"))
        if recorded.get("beacon_key"):  # its pages' runtime reports with the recorded key
            record["beacon_key"] = str(recorded["beacon_key"])
        try:
            await recording.import_episode(record, imported.entries)
        except FileExistsError:
            raise Conflict(f"episode {episode.id!r} already exists") from None
        summary = {
            "id": episode.id,
            "file": name,
            "creator": imported.creator,
            "entries": len(imported.entries),
            "pages": imported.pages,
            "skipped": [vars(skipped) for skipped in imported.skipped],
        }
        imported_event = event("episode_imported", "api", **summary)
        await recording.append_event(
            episode.id, {**imported_event, "id": f"{int(episode.created_at * 1000)}-0"}
        )
        return summary


def _navigations(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if extension(e).get("load")]


# What a replay shows of the episode it replays (no shift runs: for reading), and what an
# imported HAR keeps of the episode the service's own export names.
REPLAY_LABELS = ("condition", "perceptual", "execution", "regime", "regime_params", "seed", "site")


# The tags the service gave its own episodes before they were marked `internal`.
SERVICE_TAGS = ("oracle", "preview")


def _archived_episode(record: dict[str, Any]) -> tuple[Episode, bool] | None:
    """An archived episode (its token is not kept); None, logged, for a record this version
    cannot read (a site profile since removed, say), so one old record breaks no report. A
    record from before `internal` existed is internal when the service's own tags say so."""
    if "internal" not in record:
        tags = record.get("tags") or {}
        record = {**record, "internal": any(tags.get(tag) == "1" for tag in SERVICE_TAGS)}
    try:
        return Episode.model_validate({**record, "token": ""}), False
    except ValidationError as error:
        logger.warning("archived episode %s cannot be read: %s", record.get("id"), error)
        return None
