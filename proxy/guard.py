"""Where the proxy may connect: an upstream allow-list, and never the admin API itself.

A proxy that benchmark browsers use is otherwise an open relay: a page can make the browser
fetch anything, including the admin API (and through it, every episode's token). Requests to
upstreams outside the allow-list are answered 403 before any connection (or DNS lookup) is made.
"""

from __future__ import annotations

import fnmatch

from mitmproxy import ctx, http

from proxy.responses import error_response


def _patterns(value: str) -> list[str]:
    return [item.strip().lower() for item in value.split(",") if item.strip()]


class UpstreamGuard:
    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        loader.add_option(
            "ss_upstream_allow",
            str,
            "",
            "Comma-separated upstream host or host:port globs the proxy may connect to "
            "(e.g. '127.0.0.1,localhost,*.lab:8080'); empty allows every upstream.",
        )
        loader.add_option(
            "ss_forbidden_upstreams",
            str,
            "",
            "Comma-separated host:port addresses never reachable through the proxy (the admin "
            "API's own address is always one).",
        )

    def allowed(self, host: str, port: int) -> bool:
        host = host.lower().strip("[]")
        address = f"{host}:{port}"
        if address in _patterns(ctx.options.ss_forbidden_upstreams):
            return False
        allow = _patterns(ctx.options.ss_upstream_allow)
        return not allow or any(
            fnmatch.fnmatch(host, pattern) or fnmatch.fnmatch(address, pattern) for pattern in allow
        )

    def _check(self, flow: http.HTTPFlow) -> None:
        if flow.response is None and not self.allowed(flow.request.host, flow.request.port):
            flow.response = error_response(
                403,
                f"The upstream {flow.request.host}:{flow.request.port} is not allowed "
                "through this proxy.",
            )

    def http_connect(self, flow: http.HTTPFlow) -> None:
        self._check(flow)

    def request(self, flow: http.HTTPFlow) -> None:
        # After routing: the upstream actually contacted is what must be allowed.
        self._check(flow)
