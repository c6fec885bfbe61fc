"""The mitmproxy side: episode binding, internal endpoints, routing, the response pipeline."""

from __future__ import annotations

from proxy import upstream_errors
from proxy.binding import EpisodeBinding
from proxy.chain import AddonChain
from proxy.collector import BodyCollector
from proxy.guard import UpstreamGuard
from proxy.internal import InternalEndpoints
from proxy.knowledge import KnowledgeLookup, Learner, MemoryKnowledge
from proxy.knowledge.watch import KnowledgeWatch
from proxy.recorder import Recorder
from proxy.recording_dir import Recording
from proxy.replay import ReplayResponder
from proxy.rewrite import PageRewriter
from proxy.routing import ContextualRouting
from proxy.store import EpisodeStore
from proxy.timeout import UpstreamTimeout


def build_addons(
    store: EpisodeStore,
    recording: Recording | None = None,
    knowledge: KnowledgeLookup | None = None,
) -> list[object]:
    """The addons in hook order: bind, answer internal paths, answer replays, route, guard,
    rewrite, watch assets against knowledge (after the rewriter has decided which responses
    stream), record (what the browser gets, so after every change), time, and free finished
    exchanges (last: once every member is done with the flow): one mitmproxy addon
    (`AddonChain`) that calls them in that order. `knowledge`: the site knowledge pages are
    shifted against (by default kept in this process only)."""
    upstream_errors.install()
    lookup = knowledge or KnowledgeLookup(MemoryKnowledge(), Learner())
    members = [
        EpisodeBinding(store),
        InternalEndpoints(store),
        ReplayResponder(recording, store),
        ContextualRouting(),
        UpstreamGuard(),
        PageRewriter(store, lookup, keeps_sources=recording is not None),
        KnowledgeWatch(store, lookup),
        *([Recorder(recording, store)] if recording is not None else []),
        UpstreamTimeout(),
        upstream_errors.UpstreamErrors(),
        BodyCollector(),
    ]
    return [AddonChain(members)]


__all__ = ["build_addons"]
