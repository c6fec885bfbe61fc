"""Contextual routing: in Tgt conditions, send the request to the site's target upstream.

The browser keeps using the task's URLs; only the upstream changes. Redirects that point at the
target origin are mapped back, so the browser never leaves the source origin.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mitmproxy import http

from proxy.episode import Episode
from proxy.flowstate import state_of
from shifts.contextual import route, unroute_url


def origin_of(request: http.Request) -> str:
    default_port = {"http": 80, "https": 443}.get(request.scheme)
    port = "" if request.port == default_port else f":{request.port}"
    return f"{request.scheme}://{request.host}{port}"


def browser_url(flow: http.HTTPFlow) -> str:
    """The URL the browser asked for: the source's, where the contextual shift sent the
    request to a target upstream."""
    source = state_of(flow).source_origin
    return source + flow.request.path if source else flow.request.pretty_url


class ContextualRouting:
    def _target(self, flow: http.HTTPFlow) -> str | None:
        episode: Episode | None = state_of(flow).episode
        if flow.response is not None or episode is None or episode.replay_of:
            return None  # (a replay answers from its recording, by the URL the browser asked)
        if "contextual" not in episode.shift_names():
            return None
        return route(origin_of(flow.request), episode.all_targets())

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # Routed as soon as the headers are in, once: a body over the size limit is streamed,
        # and its headers go upstream before the `request` hook runs (mitmproxy streams a body
        # that grows past the limit on the way in, whatever a hook says before).
        target = self._target(flow)
        if target is None:
            return
        source = origin_of(flow.request)
        parts = urlsplit(target)
        state_of(flow).source_origin = source
        host_header = flow.request.host_header
        flow.request.scheme = parts.scheme
        flow.request.host = parts.hostname or flow.request.host
        flow.request.port = parts.port or (443 if parts.scheme == "https" else 80)
        # The target sees the source's Host, as if it were deployed at the task's URL: apps
        # that redirect to their canonical host (WordPress) would otherwise send the browser
        # away, and apps that build links from the Host build them for the source.
        flow.request.host_header = host_header

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        episode: Episode | None = state_of(flow).episode
        if episode is None or state_of(flow).source_origin is None or flow.response is None:
            return
        location = flow.response.headers.get("location")
        if location:
            flow.response.headers["location"] = unroute_url(location, episode.all_targets())
