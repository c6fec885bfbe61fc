"""Responses the proxy answers itself. Neutral text: nothing names the product."""

from __future__ import annotations

from html import escape

from mitmproxy import http
from mitmproxy.net.http import status_codes

from proxy.flowstate import state_of

PROXY_REALM = "proxy"


def answer(flow: http.HTTPFlow, response: http.Response) -> None:
    """Answer the request from the proxy itself, instead of the upstream."""
    flow.response = response
    state_of(flow).own_response = True


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> http.Response:
    reason = status_codes.RESPONSES.get(status, "Error")
    body = (
        '<!DOCTYPE html><html><head><meta charset="utf-8">'
        f"<title>{status} {escape(reason)}</title></head>"
        f"<body><h1>{status} {escape(reason)}</h1><p>{escape(message)}</p></body></html>"
    )
    return http.Response.make(
        status,
        body.encode("utf-8"),
        {
            "Content-Type": "text/html; charset=utf-8",
            "Cache-Control": "no-store",
            **(headers or {}),
        },
    )


def auth_required(message: str) -> http.Response:
    """407 with a challenge: Chromium sends proxy credentials only after one."""
    return error_response(407, message, {"Proxy-Authenticate": f'Basic realm="{PROXY_REALM}"'})
