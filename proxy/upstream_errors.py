"""Upstream failures: a neutral 502 page that names the upstream, instead of mitmproxy's own.

mitmproxy writes the error response for a failed upstream connection (refused, reset, a TLS
certificate it cannot verify) inside its HTTP/1, HTTP/2 and HTTP/3 layers, right after the
`error` hook, with a `Server: mitmproxy` header and only the socket error's text. No hook can
replace that response, so this module swaps the layers' page builders (and the name they put
in `Server`) once at startup (mitmproxy is pinned to one major version in pyproject.toml, and
integration tests check the page over HTTP/1 and HTTP/2 on every run). The `error` hook notes
which upstream a message belongs to, so the page can name it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from types import SimpleNamespace

from mitmproxy import http
from mitmproxy.net.http import http1
from mitmproxy.proxy.layers.http import _http1, _http2, _http3

from proxy.flowstate import state_of
from proxy.responses import error_response

logger = logging.getLogger(__name__)

# error message -> ("host:port" of the upstream it came from, seconds if it timed out);
# bounded, consumed on use.
_UPSTREAM_OF_MESSAGE: OrderedDict[str, tuple[str, float | None]] = OrderedDict()
_REMEMBERED = 256


def neutral_error(status_code: int, message: str = "") -> http.Response:
    upstream, timed_out = _UPSTREAM_OF_MESSAGE.pop(message, (None, None))
    detail = message or "The upstream server failed."
    if timed_out is not None:
        status_code = 504
        detail = f"Gateway timeout: {upstream} sent no response within {timed_out:g} s."
    elif status_code == 502:
        name = f"upstream {upstream}" if upstream else "upstream"
        detail = f"Bad gateway: the {name} could not be reached ({detail})."
    return error_response(status_code, detail, {"Connection": "close"})


def neutral_error_response(status_code: int, message: str = "") -> bytes:
    """HTTP/1: the whole response."""
    return bytes(http1.assemble_response(neutral_error(status_code, message)))


def neutral_error_body(status_code: int, message: str) -> bytes:
    """HTTP/2 and HTTP/3 send their own status line; only the page is ours."""
    return neutral_error(status_code, message).content or b""


def install() -> None:
    _http1.make_error_response = neutral_error_response
    for layer in (_http2, _http3):
        layer.format_error = neutral_error_body  # type: ignore[attr-defined]
        layer.version = SimpleNamespace(MITMPROXY="proxy")  # type: ignore[attr-defined]


class UpstreamErrors:
    """Logs upstream failures with the upstream's address and lends it to the error page."""

    def error(self, flow: http.HTTPFlow) -> None:
        if flow.error is None or flow.response is not None:
            return
        upstream = f"{flow.request.host}:{flow.request.port}"
        _UPSTREAM_OF_MESSAGE[flow.error.msg] = (upstream, state_of(flow).upstream_timed_out)
        while len(_UPSTREAM_OF_MESSAGE) > _REMEMBERED:
            _UPSTREAM_OF_MESSAGE.popitem(last=False)
        logger.warning(
            "upstream %s failed for %s: %s", upstream, flow.request.pretty_url, flow.error.msg
        )
