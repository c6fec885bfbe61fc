"""The knowledge addon: its options, and the watch on what episodes' browsers load.

Knowledge is never learnt from traffic (what decides a page must not depend on what a process
happened to see). But an episode is told when its browser loads a stylesheet or script that
the knowledge its page was shifted against does not hold (`knowledge_gap`: code the learner
could not find, such as a chunk whose URL a script builds on a click), or holds other bytes of
(`knowledge_stale`: the app changed since it was learnt), once per asset and episode. A learn run
(`POST /knowledge/learn`) then makes knowledge that holds them.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from mitmproxy import ctx, http

from proxy import classify, metrics
from proxy.codec import UndecodableBody, decode_body
from proxy.episode import Episode
from proxy.events import event
from proxy.flowstate import state_of
from proxy.knowledge.learner import asset_kind_of
from proxy.knowledge.lookup import KnowledgeLookup
from proxy.knowledge.records import (
    body_digest,
    on_upstream,
    page_records,
    records_on_origin,
    url_origin,
)
from proxy.options import add_options
from proxy.page_shift import drifts_locators
from proxy.routing import browser_url, origin_of
from proxy.store import EpisodeStore, StoreUnavailable

logger = logging.getLogger(__name__)


class KnowledgeWatch:
    def __init__(self, store: EpisodeStore, lookup: KnowledgeLookup) -> None:
        self.store = store
        self.lookup = lookup
        self._tasks: set[asyncio.Task[None]] = set()

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(loader, "ss_learn", "ss_learn_timeout", "ss_asset_max_bytes")

    def configure(self, updated: set[str]) -> None:
        learner = self.lookup.learner
        learner.mode = "static" if ctx.options.ss_learn == "static" else "browser"
        self.lookup.auto_learn = ctx.options.ss_learn != "off"
        learner.timeout = ctx.options.ss_learn_timeout
        learner.max_bytes = ctx.options.ss_asset_max_bytes
        verify: bool | str = not ctx.options.ssl_insecure
        if verify and ctx.options.ssl_verify_upstream_trusted_ca:
            verify = ctx.options.ssl_verify_upstream_trusted_ca
        learner.verify = verify

    async def done(self) -> None:
        await self.lookup.learner.close()

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        episode: Episode | None = state_of(flow).episode
        response = flow.response
        if response is None or not drifts_locators(episode):
            return
        assert episode is not None
        if state_of(flow).rewrite == "buffer":
            # A script answer the rewriter buffers to widen its selectors (`proxy.script_answer`):
            # code a page runs once, after a click, not an asset a learn run could cover.
            return
        kind = asset_kind_of(response.headers.get("content-type", ""))
        referer = flow.request.headers.get("referer")
        # A page that sends no Referer (`Referrer-Policy: no-referrer`: phpMyAdmin's, whose
        # ajax.js adds each screen's scripts by a URL it builds) loads code its browser still
        # says is same-origin: checked against the episode's pages of that origin, as its
        # fragments are shifted against them (`proxy.page_knowledge`).
        same_origin = classify.is_same_origin_fetch(flow.request)
        if kind is None or not (referer or same_origin) or not 200 <= response.status_code < 300:
            return
        asset = browser_url(flow).split("#")[0]
        if referer and url_origin(referer) != url_origin(asset):
            return  # another origin's code: knowledge holds a page's own origin only
        limit = ctx.options.ss_asset_max_bytes
        encoding = classify.content_encoding(response)
        upstream = origin_of(flow.request)
        collected: list[bytes] = []
        size = [0]

        def tee(chunk: bytes) -> bytes:
            if size[0] <= limit:
                collected.append(chunk)
                size[0] += len(chunk)
            if chunk == b"" and size[0] <= limit:
                task = asyncio.get_running_loop().create_task(
                    self._check(
                        episode, upstream, referer, asset, b"".join(collected), encoding, kind
                    )
                )
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return chunk

        response.stream = tee

    async def _check(
        self,
        episode: Episode,
        upstream: str,
        referer: str | None,
        asset: str,
        body: bytes,
        encoding: str,
        kind: str | None = None,
    ) -> None:
        try:
            served = body_digest(decode_body(body, encoding))
        except UndecodableBody:
            return
        try:
            finding = await self._finding(episode, upstream, referer, asset, served, kind)
            if finding is None:
                return
            event_type, details = finding
            flag = f"{event_type}:{hashlib.sha256(asset.encode()).hexdigest()[:16]}"
            if await self.store.claim_flag(episode.id, flag, episode.expires_at):
                metrics.inc(f"{event_type}_total")
                page = referer or url_origin(asset)  # (no Referer: the page is unknown)
                found = event(event_type, "proxy", url=page, asset=asset, **details)
                await self.store.append_event(episode.id, found, episode.expires_at)
        except (StoreUnavailable, LookupError) as error:
            logger.warning("could not check %s against knowledge: %s", asset, error)

    async def _finding(
        self,
        episode: Episode,
        upstream: str,
        referer: str | None,
        asset: str,
        served: str,
        kind: str | None = None,
    ) -> tuple[str, dict[str, Any]] | None:
        generation = await self.lookup.generation(upstream, episode.knowledge)
        # The records this episode's loads were shifted against (not what others learnt).
        by_page = page_records(await self.store.get_flags(episode.id))
        page = on_upstream(upstream, referer.split("#")[0]) if referer else None
        digests = by_page.get(page, []) if page else []
        if not digests and page:
            # A module's own import or a stylesheet's @import: its Referer is that asset, which
            # belongs to the pages of this episode whose records hold it.
            digests = [
                digest
                for digest in sorted({d for found in by_page.values() for d in found})
                if (await self.lookup.record(digest)).asset(page) is not None
            ]
        if not digests:
            # A route its router pushed, or a page that sends no Referer.
            digests = records_on_origin(by_page, upstream)
        if not digests:
            return None  # nothing this episode loaded was shifted against knowledge
        asset_url = on_upstream(upstream, asset)
        records = [await self.lookup.record(digest) for digest in sorted(set(digests))]
        for record in records:
            found = record.asset(asset_url)
            if found is not None:
                if found.sha256 is None or found.sha256 == served:
                    return None
                return "knowledge_stale", {
                    "version": generation.number,
                    "learnt_sha256": found.sha256,
                    "served_sha256": served,
                }
        if any(
            held.sha256 == served and held.kind == kind and 200 <= held.status < 300
            for record in records
            for held in record.assets
        ):
            # The same bytes at another URL, read as the same kind of code: what they reference
            # is known (refs are keyed by kind and bytes; phpMyAdmin's screens add
            # `additional-methods.js?v=5.2.1` that a page loaded without the query). A script
            # whose bytes a stylesheet or a 404 had was never read as a script.
            return None
        return "knowledge_gap", {"version": generation.number, "records": sorted(set(digests))}
