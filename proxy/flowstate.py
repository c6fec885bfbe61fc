"""What skillshift's addons keep on a flow for each other, typed.

mitmproxy's `flow.metadata` is an untyped dict that other addons share; everything of ours lives
in one `FlowState` under one key, so each field is declared once, with its type and the addon
that sets it, and a misspelt name is a type error rather than a silent `None`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mitmproxy import http

if TYPE_CHECKING:
    from proxy.episode import Episode
    from proxy.har import PageRecord
    from proxy.knowledge import PageKnowledge
    from proxy.rewrite import PlannedLoad

KEY = "skillshift"
# What the page rewriter decided for a response (proxy/rewrite.py): buffer and shift it, stream
# it with its start shifted (an execution-only page: `proxy.shifted_start`), pass it as it is,
# refuse it as over the size limit, or it is the proxy's own answer.
Decision = Literal["buffer", "stream", "oversize", "pass", "own"]


@dataclass
class FlowState:
    # proxy/binding.py: the episode the request is bound to (None: unbound, passed through).
    episode: Episode | None = None
    # proxy/routing.py: the origin the browser asked for when a `Tgt` episode routed it on.
    source_origin: str | None = None
    # proxy/responses.py: the proxy answered the request itself (an error, a challenge).
    own_response: bool = False
    # proxy/timeout.py: the upstream timeout (s) that expired.
    upstream_timed_out: float | None = None
    # proxy/rewrite.py: its decision, the knowledge a page was shifted against, and the
    # record the recorder keeps of a page.
    rewrite: Decision | None = None
    knowledge: PageKnowledge | None = None
    page: PageRecord | None = None
    # proxy/rewrite.py: a page's load planned from its headers (its index, its popup), before
    # its body, and what its streamed start was shifted into.
    planned: PlannedLoad | None = None
    # proxy/recorder.py: the chunks of a streamed body as served, and that it is recorded.
    recorded_body: list[bytes] | None = None
    recorded: bool = False


def state_of(flow: http.HTTPFlow) -> FlowState:
    """The flow's state, created empty on first use."""
    found = flow.metadata.get(KEY)
    if not isinstance(found, FlowState):
        found = flow.metadata[KEY] = FlowState()
    return found
