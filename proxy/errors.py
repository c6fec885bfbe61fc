"""Upstream failures: a neutral 502 page that names the upstream, instead of mitmproxy's own.

mitmproxy writes the error response for a failed upstream connection inside its HTTP/1 layer,
after the `error` hook, with a `Server: mitmproxy` header. No hook can replace that response, so
this module swaps the layer's response builder once at startup (mitmproxy is pinned to one major
version in pyproject.toml; tests/integration check the page on every run).
"""

from __future__ import annotations

import logging

from mitmproxy import http
from mitmproxy.net.http import http1
from mitmproxy.proxy.layers.http import _http1

from proxy.responses import error_response

logger = logging.getLogger(__name__)


def neutral_error_response(status_code: int, message: str = "") -> bytes:
    detail = message or "The upstream server failed."
    if status_code == 502:
        detail = f"Bad gateway: the upstream could not be reached ({detail})."
    response = error_response(status_code, detail, {"Connection": "close"})
    return http1.assemble_response(response)


def install() -> None:
    _http1.make_error_response = neutral_error_response  # type: ignore[assignment]


class UpstreamErrors:
    """Logs upstream failures with the upstream's address, so operators can see which one died."""

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.error and flow.response is None:
            logger.warning(
                "upstream %s:%s failed for %s: %s",
                flow.request.host, flow.request.port, flow.request.pretty_url, flow.error.msg,
            )
