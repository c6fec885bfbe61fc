"""Knowledge routes: list, read, learn and delete the site knowledge pages are shifted against."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from api.dependencies import KnowledgeDep, SettingsDep
from api.errors import ApiError
from api.fetchable import url_problem
from proxy.knowledge.records import DIGEST, is_screen_scripts_page, resolve
from proxy.knowledge.runs import LearnRunFailed, learn_run
from proxy.store import StoreUnavailable

router = APIRouter(prefix="/knowledge", tags=["knowledge"])
OriginParam = Query(..., pattern=r"^https?://[^/\s]+$", description="e.g. http://127.0.0.1:8000")


class LearnBody(BaseModel):
    """Pages to learn afresh, each from its own upstream (give a target deployment's URLs to
    learn what `Tgt` conditions are served)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    urls: list[str] = Field(
        ...,
        min_length=1,
        max_length=200,
        description="Pages to learn (http(s) URLs); each is fetched without cookies",
    )
    browser: bool = Field(
        True, description="Also load each page in a headless Chromium (what its scripts load)"
    )


@router.get("")
async def knowledge(lookup: KnowledgeDep, settings: SettingsDep) -> dict[str, Any]:
    """The knowledge epoch new episodes pin, and every origin's versions."""
    store = lookup.store
    epoch = await store.epoch()
    origins = []
    for origin in await store.origins():
        versions = []
        for generation in await store.generations(origin):
            entries = await store.entries(origin, generation.number)
            versions.append(
                {**generation.as_json(), "pages": sum(len(e) for e in entries.values())}
            )
        current = resolve(await store.generations(origin), epoch)
        origins.append(
            {
                "origin": origin,
                "current": current.number if current else None,
                "versions": versions,
            }
        )
    return {"epoch": epoch, "learn": settings.learn, "origins": origins}


@router.get("/version")
async def version(
    lookup: KnowledgeDep, origin: str = OriginParam, version: int = Query(..., ge=1)
) -> dict[str, Any]:
    """One version of an origin's knowledge: its pages and the record each is shifted against."""
    store = lookup.store
    generation = next((g for g in await store.generations(origin) if g.number == version), None)
    if generation is None:
        raise ApiError(404, f"{origin} has no knowledge version {version}")
    entries = await store.entries(origin, version)
    pages = [
        # (the scripts JSON screens brought: no page of the app, said so)
        {"url": url, "markup": markup, "record": record}
        | ({"screen_scripts": True} if is_screen_scripts_page(url) else {})
        for url, by_markup in sorted(entries.items())
        for markup, record in sorted(by_markup.items())
    ]
    return {**generation.as_json(), "pages": pages}


@router.get("/records/{digest}")
async def record(digest: str, lookup: KnowledgeDep) -> dict[str, Any]:
    """A page record: the page and every stylesheet and script it was learnt to load."""
    if not DIGEST.fullmatch(digest):  # (a file store would be asked for a name it refuses)
        raise ApiError(404, f"no knowledge record {digest[:80]!r}: a record is sha256:<hex>")
    try:
        found = await lookup.record(digest)
    except LookupError:
        raise ApiError(404, f"no knowledge record {digest!r}") from None
    return {"digest": digest, **found.as_json()}


@router.post("/learn")
async def learn(body: LearnBody, lookup: KnowledgeDep, settings: SettingsDep) -> dict[str, Any]:
    """Learn pages afresh. Where the app's code changed, a new version is published at a new
    epoch: episodes created from then on are shifted against it, earlier ones keep theirs."""
    for url in body.urls:
        problem = url_problem(url)
        if problem:
            raise ApiError(422, f"urls: {problem}")
        if is_screen_scripts_page(url):
            raise ApiError(
                422,
                f"urls: {url} is no page: it holds the scripts an app's JSON screens brought, "
                "learnt when a screen names them",
            )
        parsed = httpx.URL(url)
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        if not settings.may_reach(parsed.host, port):
            refused = f"{parsed.host}:{port} is not an upstream this service may reach"
            raise ApiError(403, f"urls: {refused}")
    try:
        return await learn_run(lookup, body.urls, body.browser)
    except LearnRunFailed as error:
        raise ApiError(502, f"nothing was learnt: {error}") from None
    except StoreUnavailable as error:
        raise ApiError(503, f"the knowledge store is unavailable: {error}") from None


@router.delete("/version")
async def delete_version(
    lookup: KnowledgeDep, origin: str = OriginParam, version: int = Query(..., ge=1)
) -> dict[str, Any]:
    """Delete a version. Episodes that pinned it get a 503 naming it on their next page (never
    a page shifted against other knowledge); episodes created from now on use the latest
    version left, or, when none is, learn the origin's pages afresh."""
    store = lookup.store
    deleted = await store.delete(origin, version)
    lookup.forget_generations(origin)
    if deleted is None:
        raise ApiError(404, f"{origin} has no live knowledge version {version}")
    return {"deleted": deleted.as_json(), "epoch": await store.epoch()}
