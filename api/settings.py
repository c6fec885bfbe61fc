"""Settings of one skillshift process, from command-line options and SKILLSHIFT_* variables."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


@dataclass(frozen=True)
class Listener:
    name: str  # the port, as text: how the store keys the listener's default episode
    mode: str  # mitmproxy mode spec, e.g. "regular@127.0.0.1:8080"
    kind: str  # "regular" or "reverse"
    upstream: str | None = None


@dataclass(frozen=True)
class Settings:
    proxy_host: str = "127.0.0.1"
    proxy_port: int = 8080
    api_host: str = "127.0.0.1"
    api_port: int = 8081
    redis_url: str | None = None
    key_prefix: str = "skillshift:"
    reverse: tuple[str, ...] = ()  # "http://upstream:port@listen_port"
    allow_unbound: bool = False
    api_token: str | None = None
    internal_prefix: str = "/__ss/"
    episode_header: str = "X-SkillShift-Episode"
    require_token: bool = False
    max_rewrite_bytes: int = 8 * 1024 * 1024
    offload_bytes: int = 128 * 1024
    confdir: str = "~/.mitmproxy"
    upstream_ca: str | None = None
    upstream_insecure: bool = False
    upstream_allow: str = ""
    upstream_timeout: float = 60.0
    # Deployment-wide contextual mapping (source origin -> target origin) written into every
    # new episode unless the episode maps that origin itself; the episode record shows it.
    default_targets: tuple[tuple[str, str], ...] = ()
    demo: bool = False
    demo_port: int = 8090
    log_level: str = "info"

    def listeners(self) -> list[Listener]:
        found = [
            Listener(
                str(self.proxy_port), f"regular@{self.proxy_host}:{self.proxy_port}", "regular"
            )
        ]
        for spec in self.reverse:
            upstream, _, listen = spec.rpartition("@")
            host, _, port = listen.rpartition(":")
            host = host or self.proxy_host
            found.append(Listener(port, f"reverse:{upstream}@{host}:{port}", "reverse", upstream))
        return found

    def own_addresses(self) -> list[str]:
        """host:port addresses of this process's API, never reachable through its proxy."""
        hosts = {self.api_host}
        if self.api_host in ("0.0.0.0", "::", "", "127.0.0.1", "localhost"):
            hosts |= {"127.0.0.1", "localhost", "::1"}
        return sorted(f"{host}:{self.api_port}" for host in hosts)

    @property
    def public_proxy_host(self) -> str:
        """Where local clients reach the proxy (a wildcard bind is reached on loopback)."""
        return _reachable(self.proxy_host)

    @property
    def api_url(self) -> str:
        return f"http://{_reachable(self.api_host)}:{self.api_port}"

    @property
    def proxy_server(self) -> str:
        return f"http://{self.public_proxy_host}:{self.proxy_port}"


def _reachable(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
