"""What a page is shifted against: the record its episode's pinned knowledge holds for it.

An episode pins the knowledge epoch it was created at. For each page, that epoch selects the
generation of the page's origin (`records.resolve`), and the generation's entry for the page
(its URL on the upstream, and which assets its markup loads) names the `PageRecord`. A page
with no entry yet is learnt first (`Learner`) and its record written as the entry, first writer
wins across processes: every process, replica and restart then shifts the page against the
same record. Nothing here depends on what this process saw before; its caches hold only
immutable things (records and references by digest, entries once written) and, for a second at
most, an origin's list of generations.

An XHR fragment is shifted against the records its page (its `Referer`) was shifted against in
the same episode: that page's scripts are the ones that insert it and look into it, and the
episode's own loads (not what other episodes learnt since) decide which they were.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from proxy.knowledge.learner import Learned, Learner, LearnFailed, LearnRequest
from proxy.knowledge.records import (
    Generation,
    GenerationDeleted,
    PageRecord,
    markup_digest,
    resolve,
)
from proxy.knowledge.store import KnowledgeStore
from proxy.recent import Recent
from shifts.references import EMPTY, AssetRefs, merge_refs, page_assets

logger = logging.getLogger(__name__)

GENERATIONS_FRESH_S = 1.0  # how long an origin's list of generations is reused
MAX_ASSETS_IN_MARKUP = 256


@dataclass(frozen=True)
class PageKnowledge:
    """What one page is shifted against, and how that was decided."""

    origin: str
    refs: AssetRefs | None  # None: no knowledge, so locator drift changes nothing
    version: int | None = None  # the generation of the origin's knowledge
    records: tuple[str, ...] = ()  # the record digests (two for a fragment of a page learnt
    # twice, signed in and out)
    learnt: Learned | None = None  # the page was learnt on this load
    error: str | None = None  # why there is no knowledge
    outdated_by: int | None = None  # a newer generation holds another record for this page
    # The records are those of the episode's pages of the origin, not of the fragment's own
    # page: its Referer is a route a router pushed (`records_on_origin`).
    of_origin: bool = False

    @property
    def digest(self) -> str | None:
        """What the page was shifted against, in one name (the shifted-page cache's key)."""
        return " ".join(self.records) if self.records else None

    def note(self) -> dict[str, Any]:
        """For the page's `page_served` event and its recording."""
        note: dict[str, Any] = {"origin": self.origin, "version": self.version}
        if self.records:
            note["records"] = list(self.records)
        if self.learnt is not None:
            note["learnt"] = {
                "by": self.learnt.record.learnt_by,
                "assets": len(self.learnt.record.assets),
                "seconds": round(self.learnt.seconds, 3),
            }
        if self.error:
            note["error"] = self.error
        if self.outdated_by is not None:
            note["outdated_by"] = self.outdated_by
        if self.of_origin:
            note["records_of"] = "origin"
        return note


class GenerationMissing(LookupError):
    """No generation of an origin is visible at an episode's epoch."""


@dataclass
class _Generations:
    fetched_at: float
    epoch: int
    generations: list[Generation] = field(default_factory=list)


class KnowledgeLookup:
    def __init__(self, store: KnowledgeStore, learner: Learner, auto_learn: bool = True) -> None:
        self.store = store
        self.learner = learner
        self.auto_learn = auto_learn
        self._generations: dict[str, _Generations] = {}
        self._entries: Recent[tuple[str, int, str], dict[str, str]] = Recent(8192)
        self._records: Recent[str, PageRecord] = Recent(4096)
        self._refs: Recent[tuple[str, ...], AssetRefs] = Recent(1024)
        self._markups: Recent[tuple[bytes, str], str] = Recent(4096)
        self._learning: dict[
            tuple[str, int, str, str], asyncio.Future[tuple[str, Learned | None]]
        ] = {}

    def forget_generations(self, origin: str | None = None) -> None:
        """Read the origin's (or every origin's) generations again on next use: a learn run or
        a deletion in this process is seen at once (in other processes, within a second)."""
        if origin is None:
            self._generations.clear()
        else:
            self._generations.pop(origin, None)

    async def generation(self, origin: str, epoch: int | None) -> Generation:
        """The generation an episode created at `epoch` uses for `origin` (None: the current
        epoch's; the first generation is made when the origin has none). Raises
        GenerationDeleted."""
        known = self._generations.get(origin)
        now = time.monotonic()
        if (
            known is None
            or (epoch is not None and known.epoch < epoch)
            or now - known.fetched_at > GENERATIONS_FRESH_S
        ):
            store_epoch, generations = await self.store.snapshot(origin)
            if not generations:
                generations = await self.store.ensure_first(origin)
            known = self._generations[origin] = _Generations(now, store_epoch, generations)
        if epoch is None:
            epoch = known.epoch
        found = resolve(known.generations, epoch)
        if found is None:  # (only before the first generation of an origin existed)
            generations = await self.store.ensure_first(origin)
            self._generations[origin] = _Generations(now, known.epoch, generations)
            found = resolve(generations, epoch)
        if found is None:
            raise GenerationMissing(f"no knowledge of {origin} is visible at epoch {epoch}")
        return found

    async def for_page(
        self,
        epoch: int | None,
        request: LearnRequest,
        raw_digest: bytes | None = None,
    ) -> PageKnowledge:
        """The knowledge the page of `request` is shifted against: its own record, learnt now
        if it has none. `raw_digest`: a digest of the markup, when the caller has one (its
        asset list is then read once per distinct page, not once per load)."""
        origin = request.upstream_origin
        try:
            generation = await self.generation(origin, epoch)
        except GenerationDeleted as error:
            return PageKnowledge(origin, None, error.generation.number, error=str(error))
        except GenerationMissing as error:
            return PageKnowledge(origin, None, error=str(error))
        number = generation.number
        markup = self._markup_of(request, raw_digest)
        url = request.upstream_page
        digest = (await self.entry(origin, number, url)).get(markup)
        learnt = None
        if digest is None:
            if not self.auto_learn:
                return PageKnowledge(
                    origin, None, number, error=f"{url} is not learnt (learning is off)"
                )
            try:
                digest, learnt = await self._learn_once(origin, number, url, markup, request)
            except LearnFailed as error:
                logger.warning("learning %s failed: %s", request.page_url, error)
                return PageKnowledge(origin, None, number, error=str(error))
        try:
            refs = await self._refs_of((digest,))
        except LookupError as error:
            return PageKnowledge(origin, None, number, (digest,), learnt, str(error))
        outdated = await self._newer_record(origin, generation, url, markup, digest)
        return PageKnowledge(origin, refs, number, (digest,), learnt, outdated_by=outdated)

    async def for_fragment(
        self, epoch: int | None, origin: str, page: str, records: Iterable[str]
    ) -> PageKnowledge:
        """An XHR fragment's knowledge: the records its page (`page`, on the upstream) was
        shifted against in this episode, as the episode's loads recorded them (`records`; two
        when the page was loaded signed out and signed in). What other episodes learnt of the
        page never enters: the fragment depends on this episode's loads alone."""
        try:
            number = (await self.generation(origin, epoch)).number
        except (GenerationDeleted, GenerationMissing) as error:
            return PageKnowledge(origin, None, error=str(error))
        digests = tuple(sorted(set(records)))
        if not digests:
            return PageKnowledge(
                origin,
                None,
                number,
                error=f"the page that fetched this fragment ({page}) was not loaded in this "
                "episode",
            )
        try:
            refs = await self._refs_of(digests)
        except LookupError as error:
            return PageKnowledge(origin, None, number, digests, error=str(error))
        return PageKnowledge(origin, refs, number, digests)

    def _markup_of(self, request: LearnRequest, raw_digest: bytes | None) -> str:
        """The digest of the assets the page's markup loads (a scan of the whole page)."""
        key = (raw_digest, request.page_url) if raw_digest is not None else None
        found = self._markups.recall(key) if key else None
        if found is None:
            assets = page_assets(request.raw or b"", request.page_url)[:MAX_ASSETS_IN_MARKUP]
            found = markup_digest(assets)
            if key:
                self._markups.keep(key, found)
        return found

    async def entry(self, origin: str, number: int, url: str) -> dict[str, str]:
        key = (origin, number, url)
        found = self._entries.recall(key)
        if found is None:
            found = await self.store.entry(origin, number, url)
            if found:  # (an entry once written never changes: keep it; an absence may end)
                self._entries.keep(key, found)
        return found

    async def _learn_once(
        self, origin: str, number: int, url: str, markup: str, request: LearnRequest
    ) -> tuple[str, Learned | None]:
        """Learn the page once in this process (concurrent first loads wait for one learn);
        the entry is whichever record was written first, across processes. The learn runs in
        a task of its own: a load that gives up waiting (its client went away) cancels
        neither the learn nor the other loads waiting for it."""
        key = (origin, number, url, markup)
        running = self._learning.get(key)
        if running is not None:  # another load's learn: it reports the page learnt, not this
            digest, _ = await asyncio.shield(running)
            return digest, None
        running = asyncio.ensure_future(self._learn_and_store(origin, number, url, markup, request))
        self._learning[key] = running

        def finished(task: asyncio.Future[tuple[str, Learned | None]]) -> None:
            self._learning.pop(key, None)
            if not task.cancelled():
                task.exception()  # (retrieved: a failure nobody waited for is not logged)

        running.add_done_callback(finished)
        return await asyncio.shield(running)

    async def _learn_and_store(
        self, origin: str, number: int, url: str, markup: str, request: LearnRequest
    ) -> tuple[str, Learned | None]:
        # Another process may have learnt the page meanwhile: its entry is the page's.
        self._entries.pop((origin, number, url), None)
        written = (await self.entry(origin, number, url)).get(markup)
        if written is not None:
            return written, None
        learned = await self.learner.learn(request)
        for refs_key, refs in learned.refs.items():
            await self.store.put_refs(refs_key, refs)
        await self.store.put_record(learned.record)
        digest = await self.store.put_entry(origin, number, url, markup, learned.record.digest)
        self._records.keep(learned.record.digest, learned.record)
        self._entries.pop((origin, number, url), None)
        # Learnt here only if this learn's record is the one written (first writer wins).
        return digest, learned if digest == learned.record.digest else None

    async def record(self, digest: str) -> PageRecord:
        found = self._records.recall(digest)
        if found is None:
            found = await self.store.record(digest)
            if found is None:
                raise LookupError(f"knowledge record {digest} is missing from the store")
            self._records.keep(digest, found)
        return found

    async def _refs_of(self, digests: tuple[str, ...]) -> AssetRefs:
        merged = self._refs.recall(digests)
        if merged is not None:
            return merged
        records = [await self.record(digest) for digest in digests]
        keys = sorted(
            {key for r in records for a in r.assets if (key := a.refs_key(r.refs_version))}
        )
        found = await self.store.refs(keys)
        missing = [key for key, refs in zip(keys, found, strict=True) if refs is None]
        if missing:
            raise LookupError(f"knowledge of {len(missing)} assets is missing ({missing[0]})")
        merged = merge_refs([EMPTY, *(refs for refs in found if refs is not None)])
        return self._refs.keep(digests, merged)

    async def _newer_record(
        self, origin: str, generation: Generation, url: str, markup: str, digest: str
    ) -> int | None:
        """The number of a newer generation whose record of this page differs (the app
        changed since the episode pinned its knowledge), if one exists."""
        known = self._generations.get(origin)
        newer = [
            g
            for g in (known.generations if known else [])
            if g.number > generation.number and g.deleted_at is None
        ]
        for candidate in sorted(newer, key=lambda g: g.epoch, reverse=True):
            other = (await self.entry(origin, candidate.number, url)).get(markup)
            if other is not None and other != digest:
                return candidate.number
        return None
