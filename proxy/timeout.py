"""Upstream timeout: an upstream that sends no response headers in time gets its connection
closed, and the client a 504 saying so, instead of waiting on it until the agent gives up.

mitmproxy's own `tcp_timeout` only closes connections idle in both directions, after ten
minutes, without a word to the client. This addon starts a timer when a request goes upstream
and stops it at the response headers; on expiry it closes the server connection through the
proxy server's connection handler (mitmproxy is pinned to one major version; an integration
test covers it), and `proxy.upstream_errors` turns the resulting "server disconnected" into the 504.
"""

from __future__ import annotations

import asyncio
import logging

from mitmproxy import ctx, http

from proxy.flowstate import state_of
from proxy.options import add_options

logger = logging.getLogger(__name__)


class UpstreamTimeout:
    def __init__(self) -> None:
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(loader, "ss_upstream_timeout")

    def request(self, flow: http.HTTPFlow) -> None:
        seconds = ctx.options.ss_upstream_timeout
        if seconds > 0 and flow.response is None and not flow.error:
            loop = asyncio.get_running_loop()
            self._timers[flow.id] = loop.call_later(seconds, self._expire, flow, seconds)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        self._cancel(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        self._cancel(flow)

    def _cancel(self, flow: http.HTTPFlow) -> None:
        timer = self._timers.pop(flow.id, None)
        if timer is not None:
            timer.cancel()

    def _expire(self, flow: http.HTTPFlow, seconds: float) -> None:
        self._timers.pop(flow.id, None)
        if flow.response is not None or not flow.live:
            return
        state_of(flow).upstream_timed_out = seconds
        logger.warning("upstream timed out after %ss: %s", seconds, flow.request.pretty_url)
        server = ctx.master.addons.get("proxyserver")
        handler = server.connections.get(flow.client_conn.id) if server else None
        transport = handler.transports.get(flow.server_conn) if handler else None
        if transport is not None and transport.handler is not None:
            transport.handler.cancel("upstream timeout")
        else:  # no live server connection to close: end the client's wait instead
            flow.kill()
