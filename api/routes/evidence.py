"""Evidence routes: an episode's recording as HAR, its pages, their change maps and bodies."""

from __future__ import annotations

import json
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from lxml import etree

from api.dependencies import EvidenceDep
from api.episodes.evidence import Evidence
from api.failures import Invalid
from api.version import version
from proxy.episode import EpisodeId
from proxy.har import changes_of, extension
from shifts import HtmlDocument
from shifts.parsing import UnparsablePage

router = APIRouter(prefix="/episodes", tags=["recordings"])


@router.get("/{episode_id}/har")
async def har(episode_id: str, evidence: EvidenceDep) -> JSONResponse:
    """The episode's recording as HAR 1.2 (bodies inline), for DevTools, Firefox or
    Playwright's `route_from_har`; archived episodes too."""
    await evidence.require(episode_id)
    document = await evidence.recorded().har(episode_id, version())
    return JSONResponse(
        document,
        headers={"Content-Disposition": f'attachment; filename="{episode_id}.har"'},
    )


@router.post(
    "/import",
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object", "title": "HAR 1.2"}}},
        }
    },
)
async def import_har(
    request: Request,
    evidence: EvidenceDep,
    name: str = Query("upload.har", description="The HAR's file name, for the messages and tag"),
    episode_id: Annotated[
        EpisodeId | None,
        Query(alias="id", description="The new episode's id (as `POST /episodes` takes one)"),
    ] = None,
) -> dict[str, Any]:
    """Make a HAR 1.2 document (this service's export, or one Playwright, Chrome DevTools or
    Firefox wrote) into an archived episode's recording, which `POST /episodes {"replay_of":
    ID}` replays: the answer says how many entries and page loads it holds and which entries
    were left out (requests that failed when recorded)."""
    try:
        document = json.loads(await request.body())
    except ValueError as error:  # UnicodeDecodeError is one too
        raise Invalid(f"{name}: not JSON ({error})") from None
    return await evidence.import_har(document, name, episode_id)


@router.get("/{episode_id}/pages")
async def pages(episode_id: str, evidence: EvidenceDep) -> dict[str, Any]:
    """The episode's recorded pages: load index, URL, status, what each shift did."""
    await evidence.require(episode_id)
    return {
        "pages": [
            {
                "load": extension(entry)["load"],
                "url": entry["request"]["url"],
                "status": entry["response"]["status"],
                "started": entry["startedDateTime"],
                "shifted": "source" in extension(entry),
                "shifts": extension(entry).get("shifts", {}),
                "elements_changed": len(changes_of(entry).get("elements", [])),
                "popup": changes_of(entry).get("popup"),
            }
            for entry in await evidence.pages(episode_id)
        ]
    }


@router.get("/{episode_id}/pages/{load}")
async def page(episode_id: str, load: int, evidence: EvidenceDep) -> dict[str, Any]:
    """One page's change map: each element a shift changed with its locators (id, classes,
    test hooks, element path) before and after, the labels relabelled, the popup placed."""
    await evidence.require(episode_id)
    entry = await evidence.page(episode_id, load)
    return {
        "load": load,
        "url": entry["request"]["url"],
        "shifts": extension(entry).get("shifts", {}),
        "elements": [],  # (a page no shift ran on here has no change map)
        **changes_of(entry),
    }


@router.get("/{episode_id}/pages/{load}/{version}", include_in_schema=True)
async def page_body(episode_id: str, load: int, version: str, evidence: EvidenceDep) -> Response:
    """The page's HTML as served (`served`) or as the upstream sent it (`source`), as text:
    for reading and for the admin page's side-by-side view, never rendered by this API."""
    _, body = await evidence.page_body(episode_id, load, version)
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
    try:
        root = HtmlDocument(body).tree
    except UnparsablePage as error:  # (a page served unshifted, or imported: it is kept as is)
        raise Invalid(f"page {load} of episode {episode_id} cannot be shown: {error}") from None
    extra = extension(entry)
    side = "before" if version == "source" and extra.get("source") else "after"
    for change in changes_of(entry).get("elements", []):
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
