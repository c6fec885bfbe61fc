"""The mitmproxy side: episode binding, internal endpoints, routing, the response pipeline."""

from __future__ import annotations

from proxy import errors
from proxy.assets import AssetIndex, AssetObserver
from proxy.binding import EPISODE, EpisodeBinding
from proxy.guard import UpstreamGuard
from proxy.internal import InternalEndpoints
from proxy.rewrite import PageRewriter
from proxy.routing import ContextualRouting
from proxy.store import EpisodeStore
from proxy.timeout import UpstreamTimeout


def build_addons(store: EpisodeStore) -> list[object]:
    """The addons in hook order: bind, answer internal paths, route, guard, rewrite, learn
    assets (after the rewriter has decided which responses stream), time."""
    errors.install()
    assets = AssetIndex()
    return [
        EpisodeBinding(store),
        InternalEndpoints(store),
        ContextualRouting(),
        UpstreamGuard(),
        PageRewriter(store, assets),
        AssetObserver(assets),
        UpstreamTimeout(),
        errors.UpstreamErrors(),
    ]


__all__ = ["EPISODE", "build_addons"]
