"""What an episode leaves behind, live or archived: its configuration, events, recording, pages
and their change maps. Episodes the store has deleted or expired are read from the recording
directory, so a sweep's early evidence is still there when the sweep ends."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from lxml import etree
from pydantic import ValidationError

from api.analysis.summary import all_events
from api.errors import ApiError
from api.version import version
from proxy.episode import Episode
from proxy.recording import Recording, page_at
from proxy.store import EpisodeStore
from shifts import HtmlDocument

logger = logging.getLogger(__name__)
router = APIRouter(prefix="/episodes", tags=["recordings"])


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
            raise ApiError(404, f"episode {episode_id!r} not found")
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
            raise ApiError(404, "this service records nothing (start it with --record-dir)")
        return self.recording

    async def pages(self, episode_id: str) -> list[dict[str, Any]]:
        """The recorded navigations, each as its HAR entry."""
        entries = await self.recorded().entries(episode_id)
        return [e for e in entries if e.get("_skillshift", {}).get("load")]

    async def page(self, episode_id: str, load: int) -> dict[str, Any]:
        entry = page_at(await self.recorded().entries(episode_id), load)
        if entry is None:
            raise ApiError(404, f"episode {episode_id!r} has no recorded page at load {load}")
        return entry

    async def page_body(
        self, episode_id: str, load: int, version: str
    ) -> tuple[dict[str, Any], bytes]:
        """A recorded page's entry and its HTML as served (`served`) or as the upstream sent
        it (`source`; the served one when it went out unchanged)."""
        if version not in ("served", "source"):
            raise ApiError(404, "a page's versions are 'served' and 'source'")
        await self.require(episode_id)
        entry = await self.page(episode_id, load)
        extra = entry["_skillshift"]
        digest = (extra.get("source") if version == "source" else None) or extra.get("body")
        if not digest:
            raise ApiError(404, f"load {load} was recorded without its body")
        return entry, await self.recorded().body(digest)


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


def evidence_of(request: Request) -> Evidence:
    evidence: Evidence = request.app.state.evidence
    return evidence


@router.get("/{episode_id}/har")
async def har(episode_id: str, request: Request) -> JSONResponse:
    """The episode's recording as HAR 1.2 (bodies inline), for DevTools, Firefox or
    Playwright's `route_from_har`; archived episodes too."""
    evidence = evidence_of(request)
    await evidence.require(episode_id)
    document = await evidence.recorded().har(episode_id, version())
    return JSONResponse(
        document,
        headers={"Content-Disposition": f'attachment; filename="{episode_id}.har"'},
    )


@router.get("/{episode_id}/pages")
async def pages(episode_id: str, request: Request) -> dict[str, Any]:
    """The episode's recorded pages: load index, URL, status, what each shift did."""
    evidence = evidence_of(request)
    await evidence.require(episode_id)
    return {
        "pages": [
            {
                "load": entry["_skillshift"]["load"],
                "url": entry["request"]["url"],
                "status": entry["response"]["status"],
                "started": entry["startedDateTime"],
                "shifted": "source" in entry["_skillshift"],
                "shifts": entry["_skillshift"].get("shifts", {}),
                "elements_changed": len(entry["_skillshift"]["changes"].get("elements", [])),
                "popup": entry["_skillshift"]["changes"].get("popup"),
            }
            for entry in await evidence.pages(episode_id)
        ]
    }


@router.get("/{episode_id}/pages/{load}")
async def page(episode_id: str, load: int, request: Request) -> dict[str, Any]:
    """One page's change map: each element a shift changed with its locators (id, classes,
    test hooks, element path) before and after, the labels relabelled, the popup placed."""
    evidence = evidence_of(request)
    await evidence.require(episode_id)
    entry = await evidence.page(episode_id, load)
    return {
        "load": load,
        "url": entry["request"]["url"],
        "shifts": entry["_skillshift"].get("shifts", {}),
        **entry["_skillshift"]["changes"],
    }


@router.get("/{episode_id}/pages/{load}/{version}", include_in_schema=True)
async def page_body(episode_id: str, load: int, version: str, request: Request) -> Response:
    """The page's HTML as served (`served`) or as the upstream sent it (`source`), as text:
    for reading and for the admin page's side-by-side view, never rendered by this API."""
    _, body = await evidence_of(request).page_body(episode_id, load, version)
    return Response(
        body,
        media_type="text/plain; charset=utf-8",
        headers={"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"},
    )


HIGHLIGHT = "[data-changed]{outline:3px solid #e3008c!important;outline-offset:1px}"


async def page_view(evidence: Evidence, episode_id: str, load: int, version: str) -> Response:
    """A recorded page (`served`, or its `source`) for reading in a frame: its changed elements
    outlined, links resolved against the page's URL, and no script of it ever run."""
    entry, body = await evidence.page_body(episode_id, load, version)
    root = HtmlDocument(body).tree
    extra = entry["_skillshift"]
    side = "before" if version == "source" and extra.get("source") else "after"
    for change in extra.get("changes", {}).get("elements", []):
        found = root.getroottree().xpath(change[side]["path"])
        for element in found if isinstance(found, list) else []:
            if isinstance(element, etree._Element):
                element.set("data-changed", change["shift"])
    head = root.find("head")
    if head is None:
        head = etree.SubElement(root, "head")
        root.insert(0, head)
    url = entry["request"]["url"]
    head.insert(0, etree.Element("base", href=url))
    etree.SubElement(head, "style").text = HIGHLIGHT
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    return Response(
        etree.tostring(root, method="html", encoding="utf-8"),
        media_type="text/html; charset=utf-8",
        headers={
            # Sandboxed without scripts: the page renders, its code never runs here.
            "Content-Security-Policy": f"sandbox; default-src 'none'; style-src 'unsafe-inline' "
            f"{origin}; img-src {origin} data:; font-src {origin}; frame-ancestors 'self'",
            "Cache-Control": "no-store",
        },
    )
