"""Upstream failures: a neutral 502 page that names the upstream, instead of mitmproxy's own.

mitmproxy writes the error response for a failed upstream connection inside its HTTP/1 layer,
right after the `error` hook, with a `Server: mitmproxy` header and only the socket error's
text. No hook can replace that response, so this module swaps the layer's response builder once
at startup (mitmproxy is pinned to one major version in pyproject.toml, and an integration test
checks the page on every run). The `error` hook notes which upstream a message belongs to, so
the page can name it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

from mitmproxy import http
from mitmproxy.net.http import http1
from mitmproxy.proxy.layers.http import _http1

from proxy.responses import error_response
from proxy.timeout import TIMED_OUT

logger = logging.getLogger(__name__)

# error message -> ("host:port" of the upstream it came from, seconds if it timed out);
# bounded, consumed on use.
_UPSTREAM_OF_MESSAGE: OrderedDict[str, tuple[str, float | None]] = OrderedDict()
_REMEMBERED = 256


def neutral_error_response(status_code: int, message: str = "") -> bytes:
    upstream, timed_out = _UPSTREAM_OF_MESSAGE.pop(message, (None, None))
    detail = message or "The upstream server failed."
    if timed_out is not None:
        status_code = 504
        detail = f"Gateway timeout: {upstream} sent no response within {timed_out:g} s."
    elif status_code == 502:
        name = f"upstream {upstream}" if upstream else "upstream"
        detail = f"Bad gateway: the {name} could not be reached ({detail})."
    return http1.assemble_response(error_response(status_code, detail, {"Connection": "close"}))


def install() -> None:
    _http1.make_error_response = neutral_error_response


class UpstreamErrors:
    """Logs upstream failures with the upstream's address and lends it to the error page."""

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.error is None or flow.response is not None:
            return
        upstream = f"{flow.request.host}:{flow.request.port}"
        _UPSTREAM_OF_MESSAGE[flow.error.msg] = (upstream, flow.metadata.get(TIMED_OUT))
        while len(_UPSTREAM_OF_MESSAGE) > _REMEMBERED:
            _UPSTREAM_OF_MESSAGE.popitem(last=False)
        logger.warning(
            "upstream %s failed for %s: %s", upstream, flow.request.pretty_url, flow.error.msg
        )
