"""The knowledge a page is shifted against, for one response: its record in the episode's pinned
knowledge (learnt first if it has none), or, for an XHR fragment, its page's; what was learnt,
what is outdated and why there is none are logged to the episode."""

from __future__ import annotations

import dataclasses
import html

from mitmproxy import http

from proxy import classify, metrics
from proxy.claims import ClaimedFlags
from proxy.episode import Episode
from proxy.events import record_event
from proxy.knowledge import KnowledgeLookup, LearnRequest, PageKnowledge
from proxy.knowledge.records import (
    SCREEN_SCRIPTS_PAGE,
    is_screen_scripts_page,
    page_record_flag,
    page_records,
    records_on_origin,
    url_origin,
)
from proxy.routing import browser_url, origin_of
from proxy.store import EpisodeStore


class KnowledgeUnavailable(RuntimeError):
    """A page under locator drift has no knowledge to be shifted against (it could not be
    learnt, learning is off, its pinned version was deleted): it is not served unshifted."""


async def page_knowledge(
    store: EpisodeStore,
    claims: ClaimedFlags,
    lookup: KnowledgeLookup,
    flow: http.HTTPFlow,
    episode: Episode,
    url: str,
    raw: bytes,
    digest: bytes | None,
) -> PageKnowledge:
    """What the page is shifted against (`proxy.knowledge`): its record in the episode's
    pinned knowledge, learnt first if it has none; an XHR fragment's is its page's. What
    was learnt, and why there is no knowledge when there is none, are logged."""
    kind = classify.request_kind(flow.request)
    referer = flow.request.headers.get("referer")
    request = LearnRequest(
        page_url=url,
        upstream_origin=origin_of(flow.request),
        raw=raw,
        headers=dict(flow.request.headers.items()),
        # Scripts run in a frame as in a page; a fragment is only markup.
        browser=kind is not classify.RequestKind.FRAGMENT,
    )
    is_fragment = kind is classify.RequestKind.FRAGMENT
    if not is_fragment:
        found = await lookup.for_page(episode.knowledge, request, digest)
        for record_digest in found.records:  # what this episode's fragments of it use
            flag = page_record_flag(request.upstream_page, record_digest)
            await claims.claim(episode, flag)
    else:
        found = await _fragment_knowledge(store, lookup, flow, episode, request, url, referer)
    await _logged(store, claims, episode, url, found)
    if found.error is not None and not is_fragment:
        # A page without knowledge would go out without the benchmark's perceptual shift
        # inside a shifted episode; a fragment without drift is still its page's.
        raise KnowledgeUnavailable(found.error)
    return found


async def screen_knowledge(
    store: EpisodeStore,
    claims: ClaimedFlags,
    lookup: KnowledgeLookup,
    flow: http.HTTPFlow,
    episode: Episode,
    found: PageKnowledge,
    scripts: list[str],
) -> PageKnowledge:
    """A JSON screen's knowledge (`proxy.json_markup`) with the scripts it names that `found`
    (its page's) lacks, at their URLs on the upstream: phpMyAdmin's SQL screen brings `sql.js`,
    which looks up names only it knows. They are learnt as one page of their own
    (`SCREEN_SCRIPTS_PAGE` on the origin the browser sees, so they are fetched as a page's
    scripts are, its `Host`; a record per set of scripts, stored and found by every process as
    a page's is), which this episode's later fragments and knowledge watch count among its
    pages' records."""
    seen = url_origin(browser_url(flow))
    upstream = found.origin
    markup = "".join(
        f'<script src="{html.escape(seen + url.removeprefix(upstream))}"></script>'
        for url in scripts
        if url.startswith(upstream + "/")
    )
    request = LearnRequest(
        page_url=seen + SCREEN_SCRIPTS_PAGE,
        upstream_origin=upstream,
        raw=markup.encode(),
        headers=dict(flow.request.headers.items()),
        browser=False,  # (scripts a screen adds run in its page: read, not run alone)
    )
    page = request.upstream_page
    learnt = await lookup.for_page(episode.knowledge, request)
    await _logged(store, claims, episode, page, learnt)
    if learnt.refs is None:
        return found
    for digest in learnt.records:
        await claims.claim(episode, page_record_flag(page, digest))
    records = [*found.records, *learnt.records]
    both = await lookup.for_fragment(episode.knowledge, upstream, page, records)
    return dataclasses.replace(both, of_origin=found.of_origin)


async def _logged(
    store: EpisodeStore,
    claims: ClaimedFlags,
    episode: Episode,
    url: str,
    found: PageKnowledge,
) -> None:
    """Log what was learnt for the page, why it has no knowledge if it has none, and (once
    per episode and version) that a newer version holds another record of it."""
    if found.learnt is not None:
        record = found.learnt.record
        await record_event(
            store,
            episode,
            "knowledge_learnt",
            url=url,
            origin=found.origin,
            version=found.version,
            record=record.digest,
            learnt_by=record.learnt_by,
            assets=len(record.assets),
            seconds=round(found.learnt.seconds, 3),
        )
    if found.error is not None:
        metrics.inc("knowledge_errors_total")
        await record_event(
            store, episode, "knowledge_error", url=url, origin=found.origin, reason=found.error
        )
    if found.outdated_by is not None and await claims.claim(
        episode, f"outdated:{found.origin}:{found.version}"
    ):
        await record_event(
            store,
            episode,
            "knowledge_outdated",
            url=url,
            origin=found.origin,
            version=found.version,
            newer=found.outdated_by,
        )


async def _fragment_knowledge(
    store: EpisodeStore,
    lookup: KnowledgeLookup,
    flow: http.HTTPFlow,
    episode: Episode,
    request: LearnRequest,
    url: str,
    referer: str | None,
) -> PageKnowledge:
    """An XHR fragment's knowledge: the records its page (its Referer) was shifted against in
    this episode. Where the episode never loaded that page, yet it is of the fragment's own
    origin, those of the episode's pages of that origin, together: a route a single-page app's
    router pushed, or a page that sends no Referer (`Referrer-Policy: no-referrer`:
    phpMyAdmin's), whose browser still says the request is same-origin. A page of another
    origin, which fetched it by CORS, holds code none of those hold: no records."""
    by_page = page_records(await store.get_flags(episode.id))
    if referer is not None:
        page = request.upstream_url(referer.split("#")[0])
        records = by_page.get(page, [])
        same_origin = url_origin(referer) == url_origin(url)
    else:
        page, records = request.upstream_page, []
        same_origin = classify.is_same_origin_fetch(flow.request)
    of_origin = not records and same_origin
    if of_origin:
        records = records_on_origin(by_page, page)
    elif records:
        # The scripts the origin's JSON screens brought (`screen_knowledge`) run in the page
        # that loaded them: an app names each once (Drupal's `add_js`, for a library its page
        # state does not list yet), and the markup its later answers insert is theirs too.
        origin = url_origin(page)
        records = [
            *records,
            *(
                digest
                for held, digests in by_page.items()
                if is_screen_scripts_page(held) and url_origin(held) == origin
                for digest in digests
            ),
        ]
    if referer is None and not records:
        reason = "a fragment without a Referer: the page it belongs to is unknown"
        return PageKnowledge(request.upstream_origin, None, error=reason)
    found = await lookup.for_fragment(episode.knowledge, request.upstream_origin, page, records)
    # (said in its page_served: `knowledge.records_of`)
    return dataclasses.replace(found, of_origin=True) if of_origin and found.records else found
