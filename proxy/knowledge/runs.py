"""A learn run: learn pages afresh and make what was learnt the knowledge new episodes pin.

Each page is learnt from its upstream (its markup fetched without cookies, then both passes).
Nothing is written unless every page was learnt whole. Per origin, the records are compared
with the ones the current generation holds: when every page learnt is either new to it or the
same, they are added to it (no episode can have been shifted otherwise); when some page's record
differs (the app's code changed), a new generation holds the run's records and is published at
a new epoch, so episodes created from then on use it and earlier ones keep theirs (and are told
they are outdated when they load such a page).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from proxy.knowledge.learner import Learned, LearnFailed, LearnRequest
from proxy.knowledge.lookup import KnowledgeLookup
from proxy.knowledge.records import PageRecord, resolve
from proxy.knowledge.store import KnowledgeStore


class LearnRunFailed(RuntimeError):
    """Some page of a learn run could not be learnt; nothing was written."""

    def __init__(self, failures: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{url}: {reason}" for url, reason in failures))
        self.failures = failures


@dataclass(frozen=True)
class _Page:
    url: str
    origin: str
    learned: Learned


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def learn_run(
    lookup: KnowledgeLookup, urls: list[str], browser: bool = True
) -> dict[str, Any]:
    """Learn `urls` (each on its own origin's upstream) and publish what changed."""
    learner, store = lookup.learner, lookup.store
    gate = asyncio.Semaphore(2)

    async def learn(url: str) -> _Page | tuple[str, str]:
        async with gate:
            request = LearnRequest(url, _origin(url), None, browser=browser)
            try:
                return _Page(url, _origin(url), await learner.learn(request))
            except LearnFailed as error:
                return url, str(error)

    results = await asyncio.gather(*(learn(url) for url in dict.fromkeys(urls)))
    failures = [result for result in results if isinstance(result, tuple)]
    if failures:
        raise LearnRunFailed(failures)
    pages = [result for result in results if isinstance(result, _Page)]
    for page in pages:
        for key, refs in page.learned.refs.items():
            await store.put_refs(key, refs)
        await store.put_record(page.learned.record)
    epoch = await store.epoch()
    report: list[dict[str, Any]] = []
    new_generations: list[tuple[str, int, str]] = []
    for origin in dict.fromkeys(page.origin for page in pages):
        mine = [page for page in pages if page.origin == origin]
        generations = await store.generations(origin) or await store.ensure_first(origin)
        current = resolve(generations, epoch)
        changed = []
        if current is not None:
            for page in mine:
                record = page.learned.record
                held = (await store.entry(origin, current.number, record.page)).get(record.markup)
                if held is not None and not await _same_code(store, held, record):
                    changed.append(page)
        number = current.number if current is not None and not changed else None
        kept: dict[str, str] = {}  # page URL -> the record the version holds for it
        if number is not None:
            for page in mine:
                record = page.learned.record
                held = await store.put_entry(
                    origin, number, record.page, record.markup, record.digest
                )
                if not await _same_code(store, held, record):  # learnt meanwhile, otherwise
                    number = None
                    break
                kept[page.url] = held
        if number is None:
            kept = {}
            number = await store.allocate(origin)
            for page in mine:
                record = page.learned.record
                await store.put_entry(origin, number, record.page, record.markup, record.digest)
            new_generations.append((origin, number, "learn run"))
        report.append(
            {
                "origin": origin,
                "version": number,
                "new": (origin, number, "learn run") in new_generations,
                "pages": [
                    {
                        "url": page.url,
                        # (the version's own when it held this code already)
                        "record": kept.get(page.url, page.learned.record.digest),
                        "learnt_by": page.learned.record.learnt_by,
                        "assets": len(page.learned.record.assets),
                        "changed": page in changed,
                        "seconds": round(page.learned.seconds, 3),
                    }
                    for page in mine
                ],
            }
        )
    if new_generations:
        epoch = await store.publish(new_generations)
    lookup.forget_generations()
    return {"epoch": epoch, "origins": report}


async def _same_code(store: KnowledgeStore, held: str, record: PageRecord) -> bool:
    """Whether the record a version holds for the page names the same code as `record` (the
    same assets, statuses and bytes), however each was found: a browser learn of what a static
    learn found is no change of the app. A static learn cannot see what scripts load at run
    time, so against a browser's record it is compared with what a static pass can see: the
    same there is no change either (and the version keeps the browser's record, which knows
    more)."""
    if held == record.digest:
        return True
    old = await store.record(held)
    if old is None:
        return False
    statically = record.learnt_by == "static" and old.learnt_by == "browser"
    return _code(old, statically) == _code(record)


def _code(record: PageRecord, statically: bool = False) -> set[tuple[str, str, int, str | None]]:
    """The code a record names; `statically`: only what a static pass finds too (not the
    assets only the browser pass saw loading)."""
    return {
        (asset.url, asset.kind, asset.status, asset.sha256)
        for asset in record.assets
        if not (statically and asset.found_by == "browser")
    }
