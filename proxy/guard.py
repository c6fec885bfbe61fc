"""Where the proxy may connect: an upstream allow-list, and never the admin API itself.

A proxy that benchmark browsers use is otherwise an open relay: a page can make the browser
fetch anything, including the admin API (and through it, every episode's token). Requests to
upstreams outside the allow-list are answered 403 before any connection (or DNS lookup) is made.

A process knows its own API's address, not its siblings' behind a balancer, nor the balancer's:
so every request it forwards carries `THROUGH_PROXY_HEADER`, and every process's API refuses a
request that carries it (api/app.py). Set after the browser's headers, it cannot be left out.
"""

from __future__ import annotations

import fnmatch
import functools
import ipaddress
import socket

from mitmproxy import ctx, http

from proxy.options import add_options
from proxy.responses import answer, error_response
from proxy.streaming import may_stream

# Marks a request this proxy forwarded; the admin API of any skillshift process refuses it.
THROUGH_PROXY_HEADER = "x-skillshift-proxied"  # (lower case: HTTP/2 names are)


def _patterns(value: str) -> list[str]:
    return [item.strip().lower() for item in value.split(",") if item.strip()]


@functools.lru_cache(maxsize=1024)  # (asked at every request, of a few upstreams)
def upstream_allowed(host: str, port: int, allow: str, forbidden: str) -> bool:
    """Whether `host:port` may be contacted: not forbidden, and in the allow-list (globs over
    the host or host:port; an empty list allows every upstream). Decided on the name alone, so
    a refused name is never looked up in DNS.

    A forbidden address is refused however it is spelled: `127.1`, `2130706433`, `0.0.0.0`,
    `::ffff:127.0.0.1` and `localhost.` all connect to this machine, so on a forbidden
    loopback address's port every spelling of this machine is refused."""
    host = _canonical(host)
    address = f"{host}:{port}"
    for entry in _patterns(forbidden):
        forbidden_host, _, forbidden_port = entry.rpartition(":")
        if forbidden_port != str(port):
            continue
        forbidden_host = _canonical(forbidden_host)
        if host == forbidden_host or (_is_this_machine(forbidden_host) and _is_this_machine(host)):
            return False
    patterns = [_canonical_pattern(pattern) for pattern in _patterns(allow)]
    return not patterns or any(
        fnmatch.fnmatchcase(host, pattern) or fnmatch.fnmatchcase(address, pattern)
        for pattern in patterns
    )


def _canonical(host: str) -> str:
    """An IP address in its one standard spelling (IPv4 shorthand and integer forms, IPv4
    mapped in IPv6, brackets); names in lower case without a trailing dot."""
    host = host.strip().strip("[]").lower().rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        try:  # inet_aton reads the forms a URL host may use: 127.1, 2130706433, 0x7f.1
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return str(address.ipv4_mapped)
    return str(address)


def _canonical_pattern(pattern: str) -> str:
    """An allow-list glob with its host part canonical (`[::1]:8081` -> `::1:8081`)."""
    if pattern.startswith("["):
        host, _, rest = pattern[1:].partition("]")
        return _canonical(host) + rest
    return pattern if any(c in pattern for c in "*?[") else _canonical_host_port(pattern)


def _canonical_host_port(entry: str) -> str:
    host, sep, port = entry.rpartition(":")
    if sep and port.isdigit() and host and ":" not in host:
        return f"{_canonical(host)}:{port}"
    return _canonical(entry)


def _is_this_machine(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


class UpstreamGuard:
    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(loader, "ss_upstream_allow", "ss_forbidden_upstreams")

    def allowed(self, host: str, port: int) -> bool:
        return upstream_allowed(
            host, port, ctx.options.ss_upstream_allow, ctx.options.ss_forbidden_upstreams
        )

    def _check(self, flow: http.HTTPFlow) -> None:
        if flow.response is None and not self.allowed(flow.request.host, flow.request.port):
            answer(flow, refused(flow.request.host, flow.request.port))

    def http_connect(self, flow: http.HTTPFlow) -> None:
        self._check(flow)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # A request that may be streamed (proxy/streaming.py) goes upstream with these
        # headers before the `request` hook runs: it is marked and checked now (every admin
        # API refuses the mark); mitmproxy cannot answer a request it streams, so a refused
        # one is cut off.
        if flow.response is not None:
            return
        flow.request.headers[THROUGH_PROXY_HEADER] = "1"
        if may_stream(flow.request) and not self.allowed(flow.request.host, flow.request.port):
            flow.kill()

    def request(self, flow: http.HTTPFlow) -> None:
        # After routing: the upstream actually contacted is what must be allowed (the mark
        # is on it since its headers arrived).
        self._check(flow)


def refused(host: str, port: int) -> http.Response:
    return error_response(403, f"The upstream {host}:{port} is not allowed through this proxy.")
