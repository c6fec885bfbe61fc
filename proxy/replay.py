"""Replay episodes: every request is answered from another episode's recording, never from the
upstream, so a browser sees what the agent saw after the app has changed or is gone.

Which recorded exchange answers a request is proxy/replay_match.py's: on method, URL and
canonical body. Identical requests are answered in recorded order (the first with the first
recorded answer, the second with the second, then the last again), counted in the store so
that replicas agree. A request the recording does not hold gets a 404 page (it never goes to the
upstream) and a `replay_miss` event saying how the nearest recorded request differs. Replayed
HTML documents get the recording's clock and seeded randomness (proxy/replay_determinism.py)
unless the episode opts out. The client scripts the proxy serves itself are the recorded ones
too; a recording made before they were kept gets the current ones (proxy/runtime_scripts.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from typing import Any

from mitmproxy import ctx, http

from proxy import classify
from proxy.episode import Episode
from proxy.events import event
from proxy.flowstate import state_of
from proxy.har import extension, load_of
from proxy.loads import LOADS
from proxy.recent import Recent
from proxy.recording_dir import CorruptRecording, Recording
from proxy.replay_determinism import make_deterministic, recorded_ms
from proxy.replay_match import Entry, IgnoredFields, RecordedExchanges, RequestKey, request_key
from proxy.responses import answer, error_response
from proxy.runtime_scripts import (
    current_script_response,
    is_current,
    runtime_script_asked,
    version_asked,
)
from proxy.store import EpisodeStore, StoreUnavailable
from proxy.streaming import may_stream
from shifts.runtime import script_version

logger = logging.getLogger(__name__)

# Headers of a recorded response that describe the bytes on the wire, not the body replayed.
WIRE_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})


RECENT_INDEXES = 64
RECENT_EPISODES = 4096


class ReplayResponder:
    def __init__(self, recording: Recording | None, store: EpisodeStore) -> None:
        self.recording = recording
        self.store = store
        # Per recorded episode, its index (a whole recording each: only those replayed lately).
        self._indexes: Recent[str, tuple[tuple[int, int], RecordedExchanges]] = Recent(
            RECENT_INDEXES
        )
        # replay episode -> the recorded load it shows
        self._replayed_load: Recent[str, int] = Recent(RECENT_EPISODES)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # Answered in `request`, once the body is in: a body that may be streamed (its
        # length over the size limit, or not declared: proxy/streaming.py) would reach the
        # upstream with its headers first, and a replay never does. mitmproxy cannot answer
        # a request it streams: it is cut off.
        episode: Episode | None = state_of(flow).episode
        replayed = episode is not None and episode.replay_of
        if flow.response is None and replayed and may_stream(flow.request):
            flow.kill()

    async def request(self, flow: http.HTTPFlow) -> None:
        episode: Episode | None = state_of(flow).episode
        if flow.response is not None or episode is None or not episode.replay_of:
            return
        try:
            await self._answer(flow, episode)
        except Exception as error:
            # Fail closed: a replay never falls through to the upstream.
            logger.exception("replay of %s failed", flow.request.url)
            answer(flow, error_response(502, "This request could not be replayed."))
            with contextlib.suppress(StoreUnavailable):
                await self._event(
                    episode, "replay_error", url=flow.request.pretty_url, reason=_why(error)
                )

    async def _answer(self, flow: http.HTTPFlow, episode: Episode) -> None:
        assert episode.replay_of is not None
        if self.recording is None:
            answer(flow, error_response(404, "This service records nothing: nothing to replay."))
            return
        exchanges = await self._exchanges(episode.replay_of)
        asked = request_key(flow.request)
        ignored = IgnoredFields(episode.replay_ignore).for_url(asked.url)
        navigation = classify.request_kind(flow.request) is classify.RequestKind.DOCUMENT
        if navigation:
            # Only recorded pages count as loads (a redirect on the way to one does not), as
            # they did when the episode was recorded.
            replayed = (await self.store.get_counters(episode.id)).get(LOADS, 0)
            found = exchanges.navigation(asked, ignored, (episode.from_load or 1) + replayed)
        else:
            page_load = self._replayed_load.recall(episode.id)
            found = exchanges.subresource(asked, ignored, page_load)
        if not found:
            script = runtime_script_asked(flow.request, ctx.options.ss_internal_prefix)
            if script is not None:
                await self._current_script(flow, episode, script)
                return
            difference = exchanges.nearest(asked, ignored)
            await self._miss(flow, episode, asked, **difference.fields())
            return
        entry = await self._in_recorded_order(episode, asked.without(ignored), found)
        if "body" not in extension(entry):
            await self._miss(
                flow, episode, asked, differs=[], reason="the recorded response's body was not kept"
            )
            return
        recorded = extension(entry)
        is_page = navigation and bool(load_of(entry))
        if is_page:
            self._replayed_load.keep(episode.id, load_of(entry))
        body = await self.recording.body(recorded["body"])
        headers = [
            (h["name"].encode(), h["value"].encode())
            for h in entry["response"]["headers"]
            if h["name"].lower() not in WIRE_HEADERS
        ]
        response = http.Response.make(entry["response"]["status"], body, headers)
        if episode.replay_deterministic:
            load = load_of(entry) or recorded.get("page_load") or 0
            make_deterministic(
                flow, response, episode, recorded_ms(entry.get("startedDateTime")), load
            )
        answer(flow, response)
        if is_page:
            count = await self.store.incr_counter(episode.id, LOADS, episode.expires_at)
            await self._event(
                episode,
                "page_served",
                url=asked.url,
                kind=classify.RequestKind.DOCUMENT.value,
                load_index=count,
                replayed_load=recorded.get("load"),
                shifts=recorded.get("shifts", {}),
                changed=False,
            )

    async def _current_script(self, flow: http.HTTPFlow, episode: Episode, name: str) -> None:
        """A client script the recording does not hold (it was made before they were kept):
        the current one, which has the same bytes when its version is the one asked; when it
        is not, a `replay_substituted` event says so (the popups may behave otherwise)."""
        answer(flow, current_script_response(name))
        asked = version_asked(flow.request)
        if not is_current(name, asked):
            await self._event(
                episode,
                "replay_substituted",
                url=flow.request.pretty_url,
                script=name,
                recorded_version=asked,
                served_version=script_version(name),
                why="the recording holds no copy of the client script its pages loaded",
            )

    async def _in_recorded_order(
        self, episode: Episode, asked: RequestKey, found: list[Entry]
    ) -> Entry:
        """The n-th of identical requests gets the n-th recorded answer, then the last again."""
        if len(found) == 1:
            return found[0]
        page = extension(found[0]).get("page_load") or 0
        identity = f"{asked.method} {asked.url} {asked.body} {page}".encode()
        counter = "replay_order:" + hashlib.sha256(identity).hexdigest()[:16]
        count = await self.store.incr_counter(episode.id, counter, episode.expires_at)
        return found[min(count, len(found)) - 1]

    async def _miss(
        self, flow: http.HTTPFlow, episode: Episode, asked: RequestKey, **why: Any
    ) -> None:
        answer(flow, error_response(404, "This request is not in the recording replayed."))
        await self._event(episode, "replay_miss", url=asked.url, method=asked.method, **why)

    async def _exchanges(self, episode_id: str) -> RecordedExchanges:
        """The recording's index, read again only when the recording changed (every request
        of a replay asks; reading the whole recording each time would be most of its cost)."""
        assert self.recording is not None
        version = await self.recording.version(episode_id)
        cached = self._indexes.recall(episode_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        exchanges = RecordedExchanges(await self.recording.entries(episode_id))
        self._indexes.keep(episode_id, (version, exchanges))
        return exchanges

    async def _event(self, episode: Episode, event_type: str, **data: Any) -> None:
        await self.store.append_event(
            episode.id, event(event_type, "proxy", **data), episode.expires_at
        )


def _why(error: Exception) -> str:
    """A replay error for its event: a corrupt recording (a body changed or gone too) names its
    file, relative to the recording directory."""
    if isinstance(error, CorruptRecording):
        return str(error)[:500]
    return f"{type(error).__name__}: {error}"[:500]
