"""Internal endpoints under a neutral path prefix, answered on any origin, never forwarded.

  {prefix}r.js   the client runtime script
  {prefix}i.js   the extended execution set's runtime
                 (a replay episode's are its recording's: proxy/replay.py)
  {prefix}b      the event beacon: POST JSON {"k": beacon key, "type": ..., ...}
The beacon is authenticated twice: the request must be bound to the episode (its credentials
carry the token) and carry the page's beacon key, which is derived from the token.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mitmproxy import ctx, http

from proxy import metrics
from proxy.episode import Episode
from proxy.events import ENVELOPE
from proxy.events import event as new_event
from proxy.flowstate import state_of
from proxy.options import add_options
from proxy.responses import answer
from proxy.runtime_scripts import current_script_response, runtime_script_asked
from proxy.store import EpisodeStore, StoreUnavailable
from proxy.streaming import may_stream
from shifts.runtime import BEACON_NAME

logger = logging.getLogger(__name__)

BEACON_EVENTS = frozenset(
    {"popup_shown", "popup_dismissed", "popup_suppressed", "blocked_interaction", "runtime_error"}
)
MAX_BEACON_BYTES = 8192
MAX_FIELD_CHARS = 2048


def _json(status: int, payload: dict[str, Any]) -> http.Response:
    return http.Response.make(
        status,
        json.dumps(payload).encode(),
        {"Content-Type": "application/json", "Cache-Control": "no-store"},
    )


class InternalEndpoints:
    def __init__(self, store: EpisodeStore) -> None:
        self.store = store

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(loader, "ss_internal_prefix")

    def is_internal(self, flow: http.HTTPFlow) -> bool:
        return flow.request.path.startswith(ctx.options.ss_internal_prefix)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # Answered in `request`, once the body is in. A body that may be streamed (over the
        # size limit, or of no declared length: proxy/streaming.py) would reach the app's
        # upstream before that, and no endpoint here takes one: it is cut off.
        if flow.response is None and self.is_internal(flow) and may_stream(flow.request):
            flow.kill()

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or not self.is_internal(flow):
            return
        prefix = ctx.options.ss_internal_prefix
        name = flow.request.path[len(prefix) :].split("?")[0]
        script = runtime_script_asked(flow.request, prefix)
        if script is not None:
            episode = state_of(flow).episode
            if episode is not None and episode.replay_of:
                # A replay serves the script its recording's pages ran (proxy/replay.py).
                return
            answer(flow, current_script_response(script))
        elif name == BEACON_NAME and flow.request.method == "POST":
            answer(flow, await self._beacon(flow))
        else:
            answer(flow, _json(404, {"error": f"no internal endpoint {name!r}", "status": 404}))

    async def _beacon(self, flow: http.HTTPFlow) -> http.Response:
        episode: Episode | None = state_of(flow).episode
        if episode is None:
            return _json(403, {"error": "beacon request bound to no episode", "status": 403})
        body = flow.request.raw_content or b""
        if len(body) > MAX_BEACON_BYTES:
            return _json(413, {"error": "beacon body too large", "status": 413})
        try:
            event = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _json(400, {"error": "beacon body is not JSON", "status": 400})
        if not isinstance(event, dict) or not episode.check_beacon_key(str(event.pop("k", ""))):
            return _json(403, {"error": "wrong beacon key", "status": 403})
        event_type = event.pop("type", None)
        if event_type not in BEACON_EVENTS:
            return _json(422, {"error": f"unknown beacon event {event_type!r}", "status": 422})
        fields = {key: _bounded(value) for key, value in event.items() if key not in ENVELOPE}
        record = new_event(event_type, "client", **fields)
        try:
            await self.store.append_event(episode.id, record, episode.expires_at)
        except StoreUnavailable as error:
            logger.warning("beacon event lost: %s", error)
            return _json(503, {"error": "episode store unavailable", "status": 503})
        metrics.inc("beacon_events_total")
        return _json(202, {"status": 202})


def _bounded(value: Any) -> Any:
    """Client-supplied values are data, not structure: scalars only, strings cut short."""
    if isinstance(value, str):
        return value[:MAX_FIELD_CHARS]
    if isinstance(value, bool | int | float) or value is None:
        return value
    return str(value)[:MAX_FIELD_CHARS]
