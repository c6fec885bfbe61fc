"""Records what each episode's browser received: one HAR 1.2 entry per response, the body as
served (after every shift), the upstream's page it was shifted from, its change map, and the
canonical form of the request's body (proxy/request_body.py), which replay matches requests on.

Pages are recorded by default, every response with `record: "all"`; the client scripts the
proxy serves itself (proxy/runtime_scripts.py) always, since a replay serves them. Bodies that
stream through (everything the rewriter does not buffer) are teed as they pass. A recording
that cannot be written is logged and counted; the page is still served (its events still tell
what the agent saw).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from mitmproxy import ctx, http

from proxy import classify, metrics
from proxy.codec import UndecodableBody, decode_body
from proxy.episode import Episode
from proxy.events import event
from proxy.flowstate import state_of
from proxy.har import EXTENSION, SECRET_HEADERS, HarExtension
from proxy.options import add_options
from proxy.recent import Recent
from proxy.recording_dir import Recording, WriteFailure, run_of
from proxy.request_body import canonical_request_body
from proxy.rewrite import is_page
from proxy.routing import browser_url
from proxy.runtime_scripts import runtime_script_asked
from proxy.store import EpisodeStore, StoreUnavailable

logger = logging.getLogger(__name__)


RECENT_EPISODES = 4096


class Recorder:
    def __init__(self, recording: Recording, store: EpisodeStore) -> None:
        self.recording = recording
        self.store = store
        # episode id -> its latest navigation's load (the episodes this process served lately)
        self._last_load: Recent[str, int] = Recent(RECENT_EPISODES)
        # episode id -> when it expires, for the events of writes that fail after the fact
        self._expiry: Recent[str, int] = Recent(RECENT_EPISODES)
        self._reports: set[asyncio.Task[None]] = set()
        recording.on_entry_failure = self._not_written

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(loader, "ss_record_max_bytes")

    def _records(self, flow: http.HTTPFlow) -> bool:
        episode: Episode | None = state_of(flow).episode
        response = flow.response
        if episode is None or response is None or episode.replay_of or episode.record == "off":
            return False
        if state_of(flow).own_response:
            # Of the proxy's own answers only the client scripts: a replay must serve the bytes
            # the agent's browser ran, which the current service may no longer have.
            return runtime_script_asked(flow.request, ctx.options.ss_internal_prefix) is not None
        # A redirect on the way to a page is part of the page's story: a replay needs it.
        redirect = 300 <= response.status_code < 400 and classify.may_be_rewritten(flow.request)
        # (a JSON answer whose markup was shifted is served as a page's fragment is: its
        # source and change map are the episode's as much as an HTML fragment's are)
        shifted = state_of(flow).page is not None
        return episode.record == "all" or redirect or shifted or is_page(flow, response)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        response = flow.response
        if response is None or not response.stream or not self._records(flow):
            return
        if state_of(flow).own_response:
            return  # made whole by the proxy: it never streams, its body is there to record
        chunks: list[bytes] = []
        state_of(flow).recorded_body = chunks
        limit = ctx.options.ss_record_max_bytes
        upstream = response.stream if callable(response.stream) else None
        size = [0]

        def tee(chunk: bytes) -> bytes | Iterable[bytes]:
            # (a transform before it gives bytes, or the pieces to send: `ShiftedStart`)
            served = upstream(chunk) if upstream is not None else chunk
            for piece in [served] if isinstance(served, bytes) else served:
                if size[0] <= limit:
                    chunks.append(piece)
                    size[0] += len(piece)
            return served

        response.stream = tee

    async def response(self, flow: http.HTTPFlow) -> None:
        if self._records(flow):
            await self._record(flow, complete=True)

    async def error(self, flow: http.HTTPFlow) -> None:
        """A response the browser got the head of, but whose exchange then broke off: a browser
        follows a redirect as soon as it has the head, and may close the connection before the
        (empty) body is through. It was received all the same."""
        if (
            flow.response is not None
            and state_of(flow).recorded_body is not None
            and self._records(flow)
        ):
            await self._record(flow, complete=False)

    async def _record(self, flow: http.HTTPFlow, complete: bool) -> None:
        if state_of(flow).recorded:
            return
        state_of(flow).recorded = True
        episode = state_of(flow).episode
        assert episode is not None  # only a bound flow is recorded (`_records`)
        response = flow.response
        assert response is not None
        page = state_of(flow).page
        body, encoding = self._served_body(flow, response)
        if page is not None and page["load"]:
            self._last_load.keep(episode.id, page["load"])
        extra: HarExtension = {
            "page_load": self._last_load.recall(episode.id),
            "request_body": canonical_request_body(flow.request),
        }
        if page is not None:
            extra["navigation"] = bool(page["load"])
            extra["load"] = page["load"]
            extra["shifts"] = page["shifts"]
            extra["changes"] = page["changes"]
        if not complete:
            extra["incomplete"] = True
        if body is None:
            extra["body_omitted"] = "larger than the recording keeps, or never buffered whole"
        extra["run"] = run_of(episode.created_at, episode.generation)
        entry = har_entry(flow, response, body, encoding, extra)
        self._expiry.keep(episode.id, episode.expires_at)
        try:
            await self.recording.append_entry(
                episode.id, entry, body, page.get("source") if page else None
            )
        except (OSError, ValueError) as error:
            logger.error("recording of %s failed: %s", flow.request.url, error)
            metrics.inc("recording_errors_total")
            await self._report(episode.id, episode.expires_at, url=browser_url(flow), reason=error)

    def _not_written(self, failure: WriteFailure) -> None:
        """A queued write that failed (a full disk): the episode's log says which exchange its
        recording lacks, so a replay's miss on it is explained (the write itself is logged
        and counted by the recording)."""
        expires_at = self._expiry.recall(failure.episode_id)
        if expires_at is None:
            return
        report = self._report(
            failure.episode_id,
            expires_at,
            url=failure.url,
            reason=failure.reason,
            file=failure.file,
        )
        task = asyncio.ensure_future(report)
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)

    async def _report(self, episode_id: str, expires_at: int, **fields: object) -> None:
        fields["reason"] = str(fields["reason"])[:300]
        with contextlib.suppress(StoreUnavailable):
            await self.store.append_event(
                episode_id, event("recording_error", "proxy", **fields), expires_at
            )

    def _served_body(
        self, flow: http.HTTPFlow, response: http.Response
    ) -> tuple[bytes | None, str | None]:
        """The body as the browser got it, decoded; (None, _) when over the limit. The second
        value is the content-encoding kept when the body could not be decoded."""
        chunks = state_of(flow).recorded_body
        if chunks is None and response.raw_content is None:
            return None, None  # switched to streaming past the rewrite limit: never seen whole
        raw = b"".join(chunks) if chunks is not None else (response.raw_content or b"")
        if len(raw) > ctx.options.ss_record_max_bytes:
            return None, None
        encoding = classify.content_encoding(response)
        try:
            return decode_body(raw, encoding), None
        except UndecodableBody:
            return raw, encoding


def _headers(headers: http.Headers) -> list[dict[str, str]]:
    return [
        {"name": name, "value": value}
        for name, value in headers.items(multi=True)
        if name.lower() not in SECRET_HEADERS
    ]


def _ms(start: float | None, end: float | None) -> float:
    return round(max(0.0, (end - start) * 1000), 3) if start and end else 0.0


def har_entry(
    flow: http.HTTPFlow,
    response: http.Response,
    body: bytes | None,
    kept_encoding: str | None,
    extra: HarExtension,
) -> dict[str, Any]:
    """The HAR 1.2 entry of one exchange, without its body text (the recording stores the body
    by hash and puts it back when it serves the HAR)."""
    request = flow.request
    url = browser_url(flow)
    headers = _headers(response.headers)
    if kept_encoding is None and "content-encoding" in response.headers:
        # The recording holds the decoded body: its encoding and encoded length are gone.
        dropped = ("content-encoding", "content-length")
        headers = [h for h in headers if h["name"].lower() not in dropped]
    started = request.timestamp_start
    entry: dict[str, Any] = {
        "startedDateTime": datetime.fromtimestamp(started, UTC).isoformat(),
        "time": _ms(started, response.timestamp_end),
        "request": {
            "method": request.method,
            "url": url,
            "httpVersion": request.http_version,
            "cookies": [],
            "headers": _headers(request.headers),
            "queryString": [
                {"name": name, "value": value} for name, value in request.query.items(multi=True)
            ],
            "headersSize": -1,
            "bodySize": len(request.raw_content or b""),
        },
        "response": {
            "status": response.status_code,
            "statusText": response.reason,
            "httpVersion": response.http_version,
            "cookies": [],
            "headers": headers,
            "content": {
                "size": len(body) if body is not None else -1,
                "mimeType": response.headers.get("content-type", ""),
            },
            "redirectURL": response.headers.get("location", ""),
            "headersSize": -1,
            "bodySize": len(response.raw_content or b"") if response.raw_content else -1,
        },
        "cache": {},
        "timings": {
            "send": _ms(started, request.timestamp_end),
            "wait": _ms(request.timestamp_end, response.timestamp_start),
            "receive": _ms(response.timestamp_start, response.timestamp_end),
        },
        EXTENSION: extra,
    }
    if request.raw_content:
        entry["request"]["postData"] = {
            "mimeType": request.headers.get("content-type", ""),
            "text": request.get_text(strict=False) or "",
        }
    if extra.get("page_load"):
        entry["pageref"] = f"load_{extra['page_load']}"
    return entry
