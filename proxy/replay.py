"""Replay episodes: every request is answered from another episode's recording, never from the
upstream, so a browser sees what the agent saw after the app has changed or is gone.

Navigations step through the recording: the replay's n-th navigation is answered with the
recorded navigation `from_load + n - 1` when it asked for that URL, else with the nearest
recorded navigation of the URL after it (or, failing that, before it). Subresources get the
response recorded for the page being replayed (the latest one recorded at or before it, else
the first). A request the recording does not hold gets a 404 page and a `replay_miss` event.
"""

from __future__ import annotations

import contextlib
import logging
from collections import defaultdict
from typing import Any

from mitmproxy import http

from proxy import classify
from proxy.episode import Episode
from proxy.events import event
from proxy.flowstate import state_of
from proxy.har import extension, load_of
from proxy.loads import LOADS
from proxy.recent import Recent
from proxy.recording_dir import Recording
from proxy.responses import answer, error_response
from proxy.store import EpisodeStore, StoreUnavailable

logger = logging.getLogger(__name__)

# Headers of a recorded response that describe the bytes on the wire, not the body replayed.
WIRE_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})


class RecordedExchanges:
    """A recording's entries by (method, URL), navigations apart."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.navigations: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self.all: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for entry in entries:
            key = (entry["request"]["method"], entry["request"]["url"])
            self.all[key].append(entry)
            if extension(entry).get("navigation"):
                self.navigations[key].append(entry)

    def navigation(self, key: tuple[str, str], expected: int) -> dict[str, Any] | None:
        found = self.navigations.get(key)
        if not found:
            return self.subresource(key, expected)
        later = [e for e in found if load_of(e) >= expected]
        if later:
            return min(later, key=load_of)
        return max(found, key=load_of)

    def subresource(self, key: tuple[str, str], page_load: int | None) -> dict[str, Any] | None:
        found = self.all.get(key)
        if not found:
            return None
        before = [e for e in found if (extension(e).get("page_load") or 0) <= (page_load or 0)]
        return before[-1] if before else found[0]


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

    async def request(self, flow: http.HTTPFlow) -> None:
        episode: Episode | None = state_of(flow).episode
        if flow.response is not None or episode is None or not episode.replay_of:
            return
        try:
            await self._answer(flow, episode)
        except Exception:
            # Fail closed: a replay never falls through to the upstream.
            logger.exception("replay of %s failed", flow.request.url)
            answer(flow, error_response(502, "This request could not be replayed."))
            with contextlib.suppress(StoreUnavailable):
                await self._event(episode, "replay_error", url=flow.request.pretty_url)

    async def _answer(self, flow: http.HTTPFlow, episode: Episode) -> None:
        assert episode.replay_of is not None
        if self.recording is None:
            answer(flow, error_response(404, "This service records nothing: nothing to replay."))
            return
        exchanges = await self._exchanges(episode.replay_of)
        key = (flow.request.method, flow.request.pretty_url)
        navigation = classify.request_kind(flow.request) is classify.RequestKind.DOCUMENT
        if navigation:
            # Only recorded pages count as loads (a redirect on the way to one does not), as
            # they did when the episode was recorded.
            replayed = (await self.store.get_counters(episode.id)).get(LOADS, 0)
            entry = exchanges.navigation(key, (episode.from_load or 1) + replayed)
        else:
            entry = exchanges.subresource(key, self._replayed_load.recall(episode.id))
        if entry is None or "body" not in extension(entry):
            answer(flow, error_response(404, "This request is not in the recording replayed."))
            await self._event(episode, "replay_miss", url=key[1], method=key[0])
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
        answer(flow, response)
        if is_page:
            count = await self.store.incr_counter(episode.id, LOADS, episode.expires_at)
            await self._event(
                episode,
                "page_served",
                url=key[1],
                kind=classify.RequestKind.DOCUMENT.value,
                load_index=count,
                replayed_load=recorded.get("load"),
                shifts=recorded.get("shifts", {}),
                changed=False,
            )

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
