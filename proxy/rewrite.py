"""The response pipeline: decide, decode, shift, re-encode, and make the result safe to serve.

Only HTML bodies of bound, active episodes that apply document shifts are buffered; everything
else streams through untouched, but an execution-only episode's navigations, which stream with
their start shifted (`proxy.shifted_start`: the load planned from the headers). A rewritten
page gets the CSP nonce it needs, `no-store`, and no validators, so no cache can hand it to
another episode. A page that no shift changed is served with the upstream's exact bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from mitmproxy import ctx, http

from proxy import classify, collector, csp, json_markup, metrics, script_answer, script_markup
from proxy.claims import ClaimedFlags
from proxy.codec import UndecodableBody, decode_body
from proxy.episode import Episode
from proxy.events import EventBatch
from proxy.flowstate import Decision, state_of
from proxy.har import ShiftedMarkup, page_record
from proxy.knowledge import KnowledgeLookup, PageKnowledge
from proxy.knowledge.records import on_upstream, url_origin
from proxy.loads import EpisodeGone, next_load
from proxy.options import add_options
from proxy.page_knowledge import KnowledgeUnavailable, page_knowledge, screen_knowledge
from proxy.page_shift import (
    ShiftedPages,
    active_shifts,
    build_context,
    drifts_locators,
    page_digest,
    page_nonce,
    parses_document,
    shift_document,
    site_for,
)
from proxy.popup_plan import (
    in_page_unless_get,
    interstitial_for,
    is_interstitial,
    planned_popup,
)
from proxy.responses import error_response
from proxy.routing import browser_url
from proxy.shifted_start import ShiftedStart
from proxy.store import EpisodeStore, StoreUnavailable
from shifts import HtmlDocument, ShiftContext
from shifts.execution import is_eligible
from shifts.parsing import UnparsablePage
from shifts.references.discovery import page_assets
from sites import HEAD_BYTES, PROFILES

logger = logging.getLogger(__name__)


BUFFER: Decision = "buffer"
STREAM: Decision = "stream"
OVERSIZE: Decision = "oversize"
PASS: Decision = "pass"
OWN: Decision = "own"

# A streamed page's first bytes held before its start is shifted: all that the site's match
# and a <meta> policy are read in, as they are read in a buffered page's.
START_BYTES = max(HEAD_BYTES, csp.META_POLICY_BYTES)
# The clients a body of no declared length is framed for: HTTP/1.1 in chunks, HTTP/2 and 3 in
# frames (HTTP/1.0 would have to read to the connection's end: such a page is buffered).
FRAMED_VERSIONS = frozenset({"HTTP/1.1", "HTTP/2.0", "HTTP/3"})
# The upstreams a page streams from. Not HTTP/1.0: mitmproxy writes its status line as it
# came, and chunks under `HTTP/1.0 200 OK` are no chunks to a browser (Chromium reads their
# sizes into the page). Not HTTP/2: mitmproxy passes an empty DATA frame that does not end
# the stream on as an empty chunk, which is what says the body has ended (`ShiftedStart`).
STREAMED_UPSTREAMS = frozenset({"HTTP/1.1", "HTTP/3"})


@dataclasses.dataclass
class PlannedLoad:
    """A page load planned from its response's headers (`PageRewriter._plan_stream`): its
    context before the body (its load index and popup; no site by signature, no nonce), the
    events its planning logged (a `random` draw), or the error it met, answered once the
    response hook runs, as if met there."""

    context: ShiftContext | None
    events: EventBatch
    error: Exception | None = None
    stream: ShiftedStart | None = None  # (the page's transform, once it streams)
    shifted: StreamedStart | None = None  # (what its start was shifted into, once it was)


@dataclasses.dataclass
class StreamedStart:
    """What a streamed page's start was shifted into, for the response hook's log and record."""

    context: ShiftContext
    doc: HtmlDocument
    started: float  # (`time.perf_counter()` when its start was in)
    shift_cpu_ms: float


def _shift_to_bytes(
    episode: Episode,
    context: ShiftContext,
    raw: bytes,
    charset: str | None,
    shifted: ShiftedPages,
    knowledge_digest: str | None,
    digest: bytes | None,
    hold_collections: bool,
    slot: str | None = None,
) -> tuple[Any, bytes | None, float]:
    """The shifted page, and the CPU time it took (the thread's, so neither waiting for a
    worker nor for the GIL counts: what the shift costs, whatever the load).
    `hold_collections`: Python's automatic collections held off meanwhile (when full ones
    run by bytes of bodies, `proxy.collector`, which frees cycles made meanwhile)."""
    started = time.thread_time()
    with collector.held_off() if hold_collections else contextlib.nullcontext():
        doc = shift_document(
            episode, context, raw, charset, shifted, knowledge_digest, digest, slot
        )
        body = doc.to_bytes() if doc.changed else None
    return doc, body, (time.thread_time() - started) * 1000


def _shift_strings_to_bytes(
    episode: Episode,
    context: ShiftContext,
    strings: list[json_markup.MarkupString],
    shifted: ShiftedPages,
    knowledge_digest: str | None,
    hold_collections: bool,
) -> tuple[json_markup.ShiftedAnswer, list[tuple[json_markup.MarkupString, str]], float]:
    """An answer's markup strings (a JSON answer's, a script answer's literals), each shifted
    as a fragment of its page is: what the
    shifts did to them together, the strings they changed with their new values, and the CPU
    time it all took."""
    docs, replaced, cpu_ms = [], [], 0.0
    for index, string in enumerate(strings):
        try:
            markup = string.value.encode()
        except UnicodeEncodeError:
            # A lone surrogate (JSON's `\ud83d`: a script's truncated emoji), which no HTML
            # holds: the shift would make it U+FFFD, text the app never wrote. The string goes
            # out as it came (counted as found, not changed), not the whole answer as a 502.
            continue
        doc, body, ms = _shift_to_bytes(
            episode,
            context,
            markup,
            "utf-8",
            shifted,
            knowledge_digest,
            page_digest(markup),
            hold_collections,
            # (each string by its place: the next answer's is what its per-request values
            # are swapped into, not whichever string was shifted last)
            slot=f"{index}:{string.key}",
        )
        docs.append(doc)
        cpu_ms += ms
        if body is not None:
            replaced.append((string, body.decode()))
    answer = json_markup.ShiftedAnswer(
        strings=len(strings),
        changed=len(replaced),
        notes=json_markup.summed_notes([doc.notes for doc in docs]),
        changes=[change for doc in docs for change in doc.changes],
    )
    return answer, replaced, cpu_ms


class PageRewriter:
    def __init__(
        self, store: EpisodeStore, knowledge: KnowledgeLookup, keeps_sources: bool = False
    ) -> None:
        self.store = store
        self.knowledge = knowledge
        # Pages are recorded with the upstream's bytes they were shifted from: a streamed
        # page's are kept as they pass (`ShiftedStart`).
        self.keeps_sources = keeps_sources
        self.shifted = ShiftedPages()  # a page shifted again under the same settings: no parse
        # Flags claimed (`once`'s popup spent, the page records used): no store call per load.
        self.claims = ClaimedFlags(store)

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(loader, "ss_max_rewrite_bytes", "ss_offload_bytes", "ss_collect_after_bytes")

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or not active_shifts(state_of(flow).episode):
            return
        if classify.may_be_rewritten(flow.request):
            classify.strip_conditionals(flow.request)
            classify.restrict_accept_encoding(flow.request)

    async def responseheaders(self, flow: http.HTTPFlow) -> None:
        assert flow.response is not None
        decision = self._decide(flow, flow.response)
        state_of(flow).rewrite = decision
        if decision == BUFFER and _streams_with_start_shifted(flow, flow.response):
            await self._plan_stream(flow, flow.response)
        elif decision != BUFFER:
            flow.response.stream = True

    async def _plan_stream(self, flow: http.HTTPFlow, response: http.Response) -> None:
        """Plan the page's load from its headers (its index, its popup) and stream it with its
        start shifted (`ShiftedStart`). A page the plan puts an interstitial in place of, or
        shows nothing on (a path no popup is for), and one whose planning failed, is buffered,
        its plan kept for the response hook."""
        episode = state_of(flow).episode
        assert episode is not None
        events = EventBatch(self.store, episode)
        planned = state_of(flow).planned = PlannedLoad(None, events)
        try:  # (the load's context as its body would give it, of no body yet)
            planned.context = await self._context(flow, episode, response, b"", None, events)
        except Exception as error:  # noqa: BLE001 - answered by the response hook, as there
            planned.error = error
            return
        if is_interstitial(planned.context) or not is_eligible(planned.context):
            return
        state_of(flow).rewrite = STREAM
        keep = self.keeps_sources and episode.record != "off"
        charset = classify.charset(response)
        shift = functools.partial(self._shifted_start, flow, planned.context, charset)
        limit = ctx.options.ss_max_rewrite_bytes
        response.stream = planned.stream = ShiftedStart(shift, START_BYTES, limit, keep)
        # Its length is another: sent in chunks (HTTP/2's frames need no header).
        response.headers.pop("content-length", None)
        if flow.request.http_version == "HTTP/1.1":
            response.headers["transfer-encoding"] = "chunked"
        _not_cached(response)

    def _shifted_start(
        self,
        flow: http.HTTPFlow,
        planned: ShiftContext,
        charset: str | None,
        start: bytes,
        whole: bool,
    ) -> bytes | None:
        """A streamed page's start (all of it when `whole`) shifted as the buffered page would
        be (`_rewrite`: its site, its nonce and its runtime by these bytes, its load and popup
        as planned), or None while these bytes do not settle it (`HtmlDocument.
        start_is_settled`, a <meta> policy: each one in the page is given the nonce)."""
        episode = state_of(flow).episode
        assert episode is not None
        started, cpu_started = time.perf_counter(), time.thread_time()
        context = _with_its_body(episode, planned, flow, start, [])
        if context.nonce is not None and not whole:
            return None
        doc = shift_document(episode, context, start, charset)
        if not whole and not doc.start_is_settled():
            return None
        body = doc.to_bytes()
        if context.nonce:
            body = csp.add_nonce_to_meta(body, context.nonce)
        cpu_ms = (time.thread_time() - cpu_started) * 1000
        planned_load = state_of(flow).planned
        assert planned_load is not None
        planned_load.shifted = StreamedStart(context, doc, started, cpu_ms)
        return body

    def _decide(self, flow: http.HTTPFlow, response: http.Response) -> Decision:
        if state_of(flow).own_response:
            return OWN  # the proxy's own answer: no page of the episode
        episode = state_of(flow).episode
        if episode is None or not active_shifts(episode):
            return PASS
        # (markup in a JSON answer: only for the shifts that parse; a popup is for pages)
        if (
            not is_page(flow, response)
            and not (parses_document(episode) and is_markup_answer(flow, response))
            and not (parses_document(episode) and is_script_answer(flow, response))
        ):
            return PASS
        length = classify.declared_length(response)
        if length is not None and length > ctx.options.ss_max_rewrite_bytes:
            return OVERSIZE
        return BUFFER

    async def response(self, flow: http.HTTPFlow) -> None:
        episode: Episode | None = state_of(flow).episode
        response = flow.response
        if episode is None or response is None:
            return
        decision = state_of(flow).rewrite
        if decision == OWN:
            return
        planned = state_of(flow).planned
        events = planned.events if planned is not None else EventBatch(self.store, episode)
        try:
            if planned is not None and planned.error is not None:
                raise planned.error
            if decision == STREAM:
                await self._served_streamed(flow, episode, response, events)
            elif decision == BUFFER and response.stream:
                # A body of unknown length (chunked) grew past the limit on the way in, and
                # mitmproxy switched it to streaming (`stream_large_bodies`): it went out whole
                # and unshifted, which the log must say.
                _skipped(events, flow, chunked=True)
                await self._audit_navigation(flow, episode, events)
            elif decision == BUFFER:
                await self._rewrite(flow, episode, response, events)
            elif decision == OVERSIZE:
                _skipped(events, flow)
                await self._audit_navigation(flow, episode, events)
            elif is_page(flow, response) and response.stream:
                # Unshifted conditions (Src, suspended) still log navigations, so every
                # condition has the same audit trail and load indices.
                await self._audit_navigation(flow, episode, events)
            await events.write()
        except EpisodeGone:
            flow.response = error_response(
                410, "The episode ended while this page was loading; it was not served."
            )
        except KnowledgeUnavailable as error:
            flow.response = error_response(
                503, f"This page cannot be served shifted: its site knowledge is missing ({error})."
            )
        except StoreUnavailable as error:
            logger.warning("store unavailable while rewriting %s: %s", flow.request.url, error)
            flow.response = error_response(
                503, f"The {error.store} store is unavailable; this page cannot be served shifted."
            )
        except UnparsablePage as error:
            # Fail closed, saying why: a page the parser reads only in part is not served
            # shifted (it would lose the rest) nor unshifted.
            flow.response = error_response(502, f"The page could not be shifted: {error}.")
            metrics.inc("rewrite_errors_total")
            events.add("rewrite_error", url=flow.request.pretty_url, reason=str(error))
        except Exception:
            # Fail closed: a shift that breaks must not leak the unshifted page into the episode.
            logger.exception("rewrite of %s failed", flow.request.url)
            flow.response = error_response(502, "The page could not be shifted for this episode.")
            metrics.inc("rewrite_errors_total")
            events.add("rewrite_error", url=flow.request.pretty_url)
        # A page not served as shifted still leaves what happened before (a random draw).
        with contextlib.suppress(StoreUnavailable):
            await events.write()

    async def error(self, flow: http.HTTPFlow) -> None:
        """A page whose load was planned from its headers (`_plan_stream`: streamed, or then
        buffered) and whose exchange broke off before its end (the browser went on, the
        upstream failed): its load was counted, so the log says so, with what was made of its
        start (if it was)."""
        state = state_of(flow)
        planned = state.planned
        if planned is None or planned.context is None or state.page:
            return
        streamed = planned.shifted
        planned.events.add(
            "page_served",
            url=planned.context.url,
            kind=classify.RequestKind.DOCUMENT.value,
            load_index=planned.context.load_index,
            shifts=streamed.doc.notes if streamed is not None else {},
            changed=streamed is not None,
            incomplete=True,
        )
        with contextlib.suppress(StoreUnavailable):
            await planned.events.write()

    async def _served_streamed(
        self, flow: http.HTTPFlow, episode: Episode, response: http.Response, events: EventBatch
    ) -> None:
        """Log and record a page streamed with its start shifted."""
        planned = state_of(flow).planned
        assert planned is not None and planned.stream is not None
        if planned.stream.unshifted:
            # Held whole (its start did not settle) past the limit: it went out as it came.
            _skipped(events, flow, chunked=True)
            await self._audit_navigation(flow, episode, events)
            return
        streamed = planned.shifted
        if streamed is None:
            # No body went through the stream (an empty one, which mitmproxy reads whole): the
            # page is shifted as a buffered one, framed by its length, and recorded as served.
            response.headers.pop("transfer-encoding", None)
            state_of(flow).recorded_body = None
            await self._rewrite(flow, episode, response, events)
            return
        source = planned.stream.source if streamed.doc.changed else None
        _record_served(
            flow,
            events,
            streamed.context,
            streamed.doc,
            streamed.doc.changed,
            source,
            streamed.started,
            streamed.shift_cpu_ms,
        )
        _log_popup(events, streamed.context)

    async def _rewrite(
        self, flow: http.HTTPFlow, episode: Episode, response: http.Response, events: EventBatch
    ) -> None:
        try:
            raw = decode_body(response.raw_content or b"", classify.content_encoding(response))
        except UndecodableBody as error:
            flow.response = error_response(502, f"The upstream body could not be decoded: {error}")
            events.add("rewrite_error", url=flow.request.pretty_url, reason="undecodable body")
            return
        if len(raw) > ctx.options.ss_max_rewrite_bytes:
            _skipped(events, flow)
            await self._audit_navigation(flow, episode, events)
            return
        if is_markup_answer(flow, response):
            await self._rewrite_markup_answer(flow, episode, response, raw, events)
            return
        if is_script_answer(flow, response):
            await self._rewrite_script_answer(flow, episode, response, raw, events)
            return
        if not classify.body_type(response).renders_as_html(raw):
            # Of no type, and not what a browser takes for HTML (a download): a navigation
            # all the same, counted as the unshifted conditions count it.
            await self._audit_navigation(flow, episode, events)
            return
        started = time.perf_counter()
        # One digest of the page for its knowledge and the shifted-page cache (a popup alone
        # needs neither).
        digest = page_digest(raw) if parses_document(episode) else None
        planned = state_of(flow).planned
        context = await self._context(
            flow, episode, response, raw, digest, events, planned.context if planned else None
        )
        found = state_of(flow).knowledge
        is_fragment = classify.request_kind(flow.request) is classify.RequestKind.FRAGMENT
        if found is not None and found.refs is not None and is_fragment:
            # The scripts a fragment carries run in its page once it is in: learnt first, or
            # no drift.
            named = _fragment_scripts(flow, context, raw)
            context, unknown = await self._with_scripts(flow, episode, context, named)
            if unknown:
                _served_as_it_came(flow, events, context, started, unknown_scripts=unknown[:20])
                return
        knowledge: PageKnowledge | None = state_of(flow).knowledge
        work = functools.partial(
            _shift_to_bytes,
            episode,
            context,
            raw,
            classify.charset(response),
            self.shifted,
            knowledge.digest if knowledge else None,
            digest,
            ctx.options.ss_collect_after_bytes > 0,
        )
        offload = len(raw) >= ctx.options.ss_offload_bytes and parses_document(episode)
        doc, body, shift_cpu_ms = await _run(work, offload)
        if body is not None and is_interstitial(context):
            body = interstitial_for(context, doc)
            response.headers["content-type"] = "text/html; charset=utf-8"
        if body is not None:
            if context.nonce:
                body = csp.add_nonce_to_meta(body, context.nonce)
                policies = response.headers.get_all("content-security-policy")
                if policies:
                    response.headers.set_all(
                        "content-security-policy",
                        [csp.add_nonce_to_header(policy, context.nonce) for policy in policies],
                    )
            _serve_shifted(response, body)
        source = raw if body is not None else None
        _record_served(flow, events, context, doc, doc.changed, source, started, shift_cpu_ms)
        _log_popup(events, context)

    async def _rewrite_markup_answer(
        self,
        flow: http.HTTPFlow,
        episode: Episode,
        response: http.Response,
        raw: bytes,
        events: EventBatch,
    ) -> None:
        """A JSON answer to a script's fetch with markup in its strings (`proxy.json_markup`):
        each shifted as a fragment of its page, the rest of the answer as it came. An answer
        with none, or no text in its charset, goes out as it came, and is no page served."""
        answer = _AnswerText.of(response, raw)
        if answer is None:
            return
        # (a few MB of API data take a second to walk)
        read = functools.partial(json_markup.read_answer, answer.text)
        found = await _run(read, len(raw) >= ctx.options.ss_offload_bytes)
        left = {"left": json_markup.left_keys(found)} if found.left else {}
        if not found.strings:
            if left:  # (markup no rule reads: as it came, and said, for a screen it may be)
                events.add("markup_left", url=flow.request.pretty_url, keys=left["left"])
            return
        markup = await self._markup_in_context(flow, episode, response, found.strings, events)
        await self._shift_markup_strings(
            flow,
            episode,
            response,
            answer,
            markup,
            found.scripts,
            json_markup.with_strings_replaced,
            events,
            left,
        )

    async def _rewrite_script_answer(
        self,
        flow: http.HTTPFlow,
        episode: Episode,
        response: http.Response,
        raw: bytes,
        events: EventBatch,
    ) -> None:
        """A script answer (`is_script_answer`): under locator drift its selector literals
        widened to what the drift named (`proxy.script_answer`); under the shifts that parse a
        page the markup in its string literals shifted as a fragment of its page
        (`proxy.script_markup`), as it would be fetched as HTML; every other byte as it came.
        Said: `script_answer`, with how many selectors were widened and markup strings found
        and changed; one with markup is a page served too."""
        answer = _AnswerText.of(response, raw)
        if answer is None:
            return
        widened = 0
        if drifts_locators(episode):
            text, widened = script_answer.widen(answer.text, episode.seed)
            answer = answer.with_text(text)
        read = functools.partial(script_markup.read_answer, answer.text)
        found = await _run(read, len(raw) >= ctx.options.ss_offload_bytes)
        counts: dict[str, Any] = {"found": len(found.strings), "changed": 0}
        # A library fetched to run (jQuery's for the `<script src>` of markup it inserts,
        # `$.getScript()`) is code, whose markup is its own: a big script of little markup, or
        # one its page's knowledge holds as a file.
        library = bool(found.strings) and script_markup.reads_as_library(answer.text, found.strings)
        if found.strings and not library:
            markup = await self._markup_in_context(flow, episode, response, found.strings, events)
            library = await self._a_known_script(flow)
            if not library:
                named = _fragment_scripts(flow, markup.context, markup.joined)
                write = script_markup.with_strings_replaced
                counts = await self._shift_markup_strings(
                    flow, episode, response, answer, markup, named, write, events
                )
        if library:
            counts["library"] = True
        if not found.strings or library:
            _serve_if_changed(response, answer)
        events.add(
            "script_answer",
            url=flow.request.pretty_url,
            selectors_widened=widened,
            markup_strings=counts,
        )

    async def _markup_in_context(
        self,
        flow: http.HTTPFlow,
        episode: Episode,
        response: http.Response,
        strings: list[json_markup.MarkupString],
        events: EventBatch,
    ) -> _AnswerMarkup:
        """An answer's markup strings with the context they are shifted in (the page's, its
        knowledge asked for: `state_of(flow).knowledge`)."""
        started = time.perf_counter()
        # The site's profile is matched on the markup, as it is on the same markup fetched as
        # HTML (the answer's escapes, `<\/a>` and `\"`, hide the signatures it looks for).
        joined = "".join(string.value for string in strings).encode("utf-8", "replace")
        context = await self._context(flow, episode, response, joined, None, events)
        return _AnswerMarkup(strings, joined, context, started)

    async def _shift_markup_strings(
        self,
        flow: http.HTTPFlow,
        episode: Episode,
        response: http.Response,
        answer: _AnswerText,
        markup: _AnswerMarkup,
        named: list[str],
        write: Callable[[str, list[tuple[json_markup.MarkupString, str]], bool], str],
        events: EventBatch,
        left: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """An answer's markup strings, each shifted as a fragment of its page and put back by
        `write`: served if any changed or the answer's text is not the one that came
        (`answer.changed`), and recorded as a page served. `named`: the scripts the shift must
        know first (those a JSON screen names, those a script answer's markup carries). The
        counts of the strings found and changed."""
        strings, context, started = markup.strings, markup.context, markup.started
        left = left or {}
        context, unknown = await self._with_scripts(flow, episode, context, named)
        if unknown:
            # The screen brings code its knowledge does not hold and could not learn (a script
            # placed by nothing it names beside it, or its upstream's 404): drifted, the names
            # only that code uses would be renamed (phpMyAdmin's `#sqlqueryform`: the SQL
            # form posted as a whole page). Its markup goes out as it came, and says why.
            counts = {"found": len(strings), "changed": 0, "unknown_scripts": unknown[:20], **left}
            source = _serve_if_changed(response, answer)
            _served_as_it_came(flow, events, context, started, source=source, markup_strings=counts)
            return counts
        knowledge = state_of(flow).knowledge
        work = functools.partial(
            _shift_strings_to_bytes,
            episode,
            context,
            strings,
            self.shifted,
            knowledge.digest if knowledge else None,
            ctx.options.ss_collect_after_bytes > 0,
        )
        offload = len(markup.joined) >= ctx.options.ss_offload_bytes
        shifted, replaced, shift_cpu_ms = await _run(work, offload)
        if replaced:
            try:
                body = answer.encoded(write(answer.text, replaced, False))
            except UnicodeEncodeError:
                # A string written raw whose escapes held what the charset cannot (or a lone
                # surrogate): written back escaped to ASCII, which every charset holds.
                body = answer.encoded(write(answer.text, replaced, True))
            _serve_shifted(response, body)
            source = answer.raw
        else:
            source = _serve_if_changed(response, answer)  # (its widened selectors alone)
        counts = {"found": shifted.strings, "changed": shifted.changed, **left}
        _record_served(
            flow,
            events,
            context,
            shifted,
            bool(replaced),
            source,
            started,
            shift_cpu_ms,
            markup_strings=counts,
        )
        return counts

    async def _with_scripts(
        self, flow: http.HTTPFlow, episode: Episode, context: ShiftContext, named: list[str]
    ) -> tuple[ShiftContext, list[str]]:
        """The context of a fragment (HTML, or a JSON answer's markup) that brings the `named`
        scripts, and those its knowledge still lacks: its page's, with the named scripts its
        page's records do not hold, placed by those they do and learnt (`screen_knowledge`).
        Without knowledge, as it was (no drift then)."""
        knowledge = state_of(flow).knowledge
        if knowledge is None or knowledge.refs is None or not named:
            return context, []
        gaps = json_markup.script_gaps(named, await self._served_scripts(knowledge))
        located = gaps.located
        if not located or len(located) > json_markup.MAX_NAMED_SCRIPTS:
            return context, gaps.unknown  # (past the cap, no screen's list: nothing is fetched)
        knowledge = await screen_knowledge(
            self.store, self.claims, self.knowledge, flow, episode, knowledge, located
        )
        state_of(flow).knowledge = knowledge
        unknown = json_markup.unknown_scripts(named, await self._served_scripts(knowledge))
        return dataclasses.replace(context, assets=knowledge.refs), unknown

    async def _a_known_script(self, flow: http.HTTPFlow) -> bool:
        """Whether what the flow fetched is a script its page's knowledge holds as a file."""
        knowledge = state_of(flow).knowledge
        if knowledge is None or knowledge.refs is None:
            return False
        url = on_upstream(knowledge.origin, script_markup.without_cache_buster(browser_url(flow)))
        return url in await self._served_scripts(knowledge)

    async def _served_scripts(self, knowledge: PageKnowledge) -> list[str]:
        """The URLs of the scripts the knowledge's records hold as their upstream served them
        (a 404, or an HTML page where a script was asked for, references nothing: such a
        script is not known)."""
        try:
            records = [await self.knowledge.record(digest) for digest in knowledge.records]
        except LookupError:
            return []  # (a record gone from the store: no script is known, none is trusted)
        return [
            asset.url
            for record in records
            for asset in record.assets
            if asset.kind == "js" and 200 <= asset.status < 300 and asset.sha256 is not None
        ]

    async def _context(
        self,
        flow: http.HTTPFlow,
        episode: Episode,
        response: http.Response,
        raw: bytes,
        digest: bytes | None,
        events: EventBatch,
        planned: ShiftContext | None = None,
    ) -> ShiftContext:
        """The load's context. `planned`: its load index and popup, planned from its headers
        (`_plan_stream`)."""
        url = browser_url(flow)
        is_navigation = classify.request_kind(flow.request) is classify.RequestKind.DOCUMENT
        policies = response.headers.get_all("content-security-policy")
        assets = None
        if drifts_locators(episode):
            # Before the load is counted: a page answered 503 for want of its knowledge (the
            # store down mid-learn, a version deleted) is no load of the episode, so the loads
            # after it have the indices (and popups) a run without the outage gives them.
            knowledge = await page_knowledge(
                self.store, self.claims, self.knowledge, flow, episode, url, raw, digest
            )
            state_of(flow).knowledge = knowledge
            assets = knowledge.refs
        if planned is not None:  # (an execution-only page's: no knowledge)
            return _with_its_body(episode, planned, flow, raw, policies)
        load_index = await next_load(self.store, episode) if is_navigation else None
        context = build_context(
            episode,
            url=url,
            hostport=f"{flow.request.host}:{flow.request.port}",
            raw=raw,
            nonce=page_nonce(episode, policies, raw, url),
            is_navigation=is_navigation,
            load_index=load_index,
            internal_prefix=ctx.options.ss_internal_prefix,
            assets=assets,
        )
        return await self._with_popup(flow, episode, response, context, events)

    async def _with_popup(
        self,
        flow: http.HTTPFlow,
        episode: Episode,
        response: http.Response,
        context: ShiftContext,
        events: EventBatch,
    ) -> ShiftContext:
        """The context with the popup its load shows, if any."""
        # Error pages are shifted like any page, but a popup (and a `once` spent) belongs on a
        # page where a skill runs.
        if "popup" in active_shifts(episode) and 200 <= response.status_code < 300:
            context = await planned_popup(self.store, episode, context, events, self.claims)
            context = in_page_unless_get(context, flow.request.method)
        return context

    async def _audit_navigation(
        self, flow: http.HTTPFlow, episode: Episode, events: EventBatch
    ) -> None:
        if classify.request_kind(flow.request) is not classify.RequestKind.DOCUMENT:
            return
        planned = state_of(flow).planned  # (counted from its headers: `_plan_stream`)
        if planned is not None and planned.context is not None:
            load_index = planned.context.load_index
        else:
            load_index = await next_load(self.store, episode)
        state_of(flow).page = {"load": load_index, "shifts": {}, "changes": {}, "source": None}
        events.add(
            "page_served",
            url=flow.request.pretty_url,
            kind=classify.RequestKind.DOCUMENT.value,
            load_index=load_index,
            shifts={},
            changed=False,
            suspended=episode.suspended,
        )


async def _run[T](work: Callable[[], T], offload: bool) -> T:
    """What `work` returns, made in a worker thread when `offload` (a body big enough to hold
    up every other connection the event loop serves meanwhile), else here (below that size a
    thread hop costs more than the work)."""
    return await asyncio.to_thread(work) if offload else work()


def _serve_shifted(response: http.Response, body: bytes) -> None:
    """Serve the shifted body (`_not_cached`)."""
    response.set_content(body)
    _not_cached(response)


def _with_its_body(
    episode: Episode, planned: ShiftContext, flow: http.HTTPFlow, raw: bytes, policies: list[str]
) -> ShiftContext:
    """A load's context planned from its headers (`PageRewriter._plan_stream`, before any of
    its body) with what its body says: its site, by the signatures its head holds, and its
    nonce. One home for the two ways a planned load meets its body (its start streamed,
    `_shifted_start`; the whole of it buffered, `_context`), so that they cannot differ."""
    return dataclasses.replace(
        planned,
        site=site_for(episode, f"{flow.request.host}:{flow.request.port}", raw),
        nonce=page_nonce(episode, policies, raw, planned.url),
    )


def _not_cached(response: http.Response) -> None:
    """No cache may keep a shifted page (it is this episode's), nor revalidate it against the
    upstream's."""
    response.headers["cache-control"] = "no-store"
    for name in ("etag", "last-modified"):
        response.headers.pop(name, None)


def _streams_with_start_shifted(flow: http.HTTPFlow, response: http.Response) -> bool:
    """Whether a page's shift is all in its start, so that it may stream (`ShiftedStart`): an
    execution-only episode's navigation (a deferred script at the start of its head), of a
    declared HTML type, uncompressed, with no policy header (its nonce would go in headers
    sent before the body), to a client that takes a body of no declared length, from an
    upstream it can be streamed from (`STREAMED_UPSTREAMS`), and whose
    popup its headers decide (no site's popup paths could: the site is matched on the body)."""
    episode = state_of(flow).episode
    assert episode is not None
    return (
        not parses_document(episode)
        and classify.request_kind(flow.request) is classify.RequestKind.DOCUMENT
        and classify.body_type(response).is_html
        and classify.content_encoding(response) == "identity"
        and not response.headers.get_all("content-security-policy")
        and flow.request.http_version in FRAMED_VERSIONS
        and response.http_version in STREAMED_UPSTREAMS
        and not _site_may_decide_popup(episode)
    )


def _site_may_decide_popup(episode: Episode) -> bool:
    """Whether the site a page's body matches may decide which paths show popups: the episode
    names none, its popup's options no paths, and some site profile has its own."""
    if episode.site or episode.shift_params.get("popup", {}).get("paths"):
        return False
    return any(profile.popup_paths for profile in PROFILES.values())


def _log_popup(events: EventBatch, context: ShiftContext) -> None:
    """Log the popup a page was served with, if any."""
    if context.popup is None:
        return
    metrics.inc("popups_injected_total")
    events.add(
        "popup_injected",
        url=context.url,
        load_index=context.load_index,
        kind=context.popup.kind,
        delay_ms=context.popup.delay_ms,
        regime=context.regime,
        **(placed.placement() if (placed := context.popup.interruption) else {}),
    )


def _fragment_scripts(flow: http.HTTPFlow, context: ShiftContext, markup: bytes) -> list[str]:
    """The scripts an HTML fragment carries, on its upstream: they run in its page once it is
    in (jQuery's `.html()` runs them), as a JSON screen's named scripts do. Inserted into its
    page, a fragment's relative `src` is resolved against the page's URL (the document's), not
    the fragment's: its Referer, when it has one. None without the page's knowledge."""
    found = state_of(flow).knowledge
    if found is None or found.refs is None:
        return []
    referer = flow.request.headers.get("referer", "").split("#")[0]
    document = referer if url_origin(referer) == url_origin(context.url) else context.url
    assets = page_assets(markup, document)
    return [on_upstream(found.origin, asset.url) for asset in assets if asset.kind == "js"]


def _serve_if_changed(response: http.Response, answer: _AnswerText) -> bytes | None:
    """Serve the answer's text if it is no longer what came (a script answer's widened
    selectors); the upstream's bytes then (a page record's source), else None."""
    if not answer.changed:
        return None
    _serve_shifted(response, answer.encoded(answer.text))
    return answer.raw


@dataclasses.dataclass(frozen=True)
class _AnswerMarkup:
    """An answer's markup strings, joined (what the site's profile is matched on), the context
    they are shifted in, and when the answer's rewrite started."""

    strings: list[json_markup.MarkupString]
    joined: bytes
    context: ShiftContext
    started: float


@dataclasses.dataclass(frozen=True)
class _AnswerText:
    """The text of an answer to a script's fetch as its charset decodes it (a byte-order mark
    aside, put back when it is encoded again), and whether it is no longer what came."""

    raw: bytes
    text: str
    charset: str
    bom: str
    changed: bool = False

    @classmethod
    def of(cls, response: http.Response, raw: bytes) -> _AnswerText | None:
        """None for a body that is no text in its charset: it goes out as it came."""
        charset = classify.charset(response) or "utf-8"
        try:
            text = raw.decode(charset)
        except (LookupError, UnicodeDecodeError):
            return None
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        return cls(raw, text[len(bom) :], charset, bom)

    def with_text(self, text: str) -> _AnswerText:
        return dataclasses.replace(self, text=text, changed=self.changed or text != self.text)

    def encoded(self, text: str) -> bytes:
        return (self.bom + text).encode(self.charset)


def _served_as_it_came(
    flow: http.HTTPFlow,
    events: EventBatch,
    context: ShiftContext,
    started: float,
    source: bytes | None = None,
    **details: Any,
) -> None:
    """Record a fragment served as the upstream wrote it, for want of the code it brings
    (`details` say which); `source`, the upstream's bytes if a script answer's selectors were
    widened all the same."""
    untouched = json_markup.ShiftedAnswer(0, 0, {}, [])
    _record_served(flow, events, context, untouched, False, source, started, 0.0, **details)


def _record_served(
    flow: http.HTTPFlow,
    events: EventBatch,
    context: ShiftContext,
    shifted: ShiftedMarkup,
    changed: bool,
    source: bytes | None,
    started: float,
    shift_cpu_ms: float,
    **details: Any,
) -> None:
    """What was served, for the recorder (its page record) and the episode's log (its
    `page_served`): what each shift did, the knowledge it was shifted against, its cost."""
    knowledge: PageKnowledge | None = state_of(flow).knowledge
    metrics.inc("pages_rewritten_total" if changed else "pages_unchanged_total")
    state_of(flow).page = page_record(context, shifted, source, knowledge)
    events.add(
        "page_served",
        url=context.url,
        kind=classify.request_kind(flow.request).value,
        load_index=context.load_index,
        shifts=shifted.notes,
        changed=changed,
        **({"knowledge": knowledge.note()} if knowledge else {}),
        **details,
        rewrite_ms=round((time.perf_counter() - started) * 1000, 3),
        shift_cpu_ms=round(shift_cpu_ms, 3),
    )


def _skipped(events: EventBatch, flow: http.HTTPFlow, chunked: bool = False) -> None:
    """Log a body over `ss_max_rewrite_bytes` that went out unshifted: a page, or a JSON answer
    not read for markup (an app's data, as a rule: said apart, not counted as a page)."""
    answer = flow.response is not None and is_markup_answer(flow, flow.response)
    what = "JSON answer (not read for markup)" if answer else "body"
    reason = f"{what} over ss_max_rewrite_bytes{' (chunked)' if chunked else ''}"
    events.add("rewrite_skipped", url=flow.request.pretty_url, reason=reason)


# What a browser renders by sniffing a body of no type: not what a script fetched (it reads
# the text as the script says).
RENDERED_BY_SNIFFING = (classify.RequestKind.DOCUMENT, classify.RequestKind.FRAME)


def is_markup_answer(flow: http.HTTPFlow, response: http.Response) -> bool:
    """A JSON answer to a script's fetch, which may carry markup the page inserts
    (`proxy.json_markup`): shifted where it does, under the shifts that parse a page."""
    return (
        classify.may_be_rewritten(flow.request)
        and classify.request_kind(flow.request) is classify.RequestKind.FRAGMENT
        and _shown(response.status_code)
        and json_markup.is_json_type(classify.mime_type(response))
    )


def is_script_answer(flow: http.HTTPFlow, response: http.Response) -> bool:
    """A JavaScript answer a script asked for to run it (rails-ujs' `remote: true`, jQuery's
    `dataType: "script"`): its selectors are widened to what locator drift named
    (`proxy.script_answer`), the markup in its string literals shifted
    (`proxy.script_markup`)."""
    return (
        classify.may_be_rewritten(flow.request)
        and classify.request_kind(flow.request) is classify.RequestKind.FRAGMENT
        and 200 <= response.status_code < 300
        and script_answer.is_script_type(classify.mime_type(response))
        and script_answer.asks_for_script(
            flow.request.headers.get("accept", ""),
            flow.request.headers.get("x-requested-with", "").lower() == "xmlhttprequest",
        )
    )


def _shown(status: int) -> bool:
    """Whether a response of this status has a body the browser or the page uses: a 2xx, or
    an error's page (not a redirect's, nor a 1xx or 304's)."""
    return 200 <= status < 300 or 400 <= status < 600


def is_page(flow: http.HTTPFlow, response: http.Response) -> bool:
    """An HTML response with a body a browser renders (2xx, or a 4xx/5xx error page) to a
    request that may be a page or fragment (not a subresource). Error pages are pages the agent
    sees, so a shifted episode gets them shifted too. A page or frame of no type the browser
    reads is one too, until its body says otherwise (`_rewrite`): the browser renders it as
    HTML if it sniffs as HTML."""
    if not classify.may_be_rewritten(flow.request) or not _shown(response.status_code):
        return False
    body_type = classify.body_type(response)  # (its headers read once)
    return body_type.is_html or (
        body_type.is_sniffed and classify.request_kind(flow.request) in RENDERED_BY_SNIFFING
    )
