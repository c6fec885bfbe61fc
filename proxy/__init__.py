"""The mitmproxy side: episode binding, internal endpoints, routing, the response pipeline."""

from __future__ import annotations

from proxy import errors
from proxy.assets import AssetIndex, AssetObserver
from proxy.binding import EPISODE, EpisodeBinding
from proxy.chain import AddonChain
from proxy.guard import UpstreamGuard
from proxy.internal import InternalEndpoints
from proxy.recorder import Recorder
from proxy.recording import Recording
from proxy.replay import ReplayResponder
from proxy.rewrite import PageRewriter
from proxy.routing import ContextualRouting
from proxy.store import EpisodeStore
from proxy.timeout import UpstreamTimeout


def build_addons(store: EpisodeStore, recording: Recording | None = None) -> list[object]:
    """The addons in hook order: bind, answer internal paths, answer replays, route, guard,
    rewrite, learn assets (after the rewriter has decided which responses stream), record
    (what the browser gets, so after every change), time: one mitmproxy addon (`AddonChain`)
    that calls them in that order."""
    errors.install()
    assets = AssetIndex()
    members = [
        EpisodeBinding(store),
        InternalEndpoints(store),
        ReplayResponder(recording, store),
        ContextualRouting(),
        UpstreamGuard(),
        PageRewriter(store, assets),
        AssetObserver(assets),
        *([Recorder(recording, store)] if recording is not None else []),
        UpstreamTimeout(),
        errors.UpstreamErrors(),
    ]
    return [AddonChain(members)]


__all__ = ["EPISODE", "build_addons"]
