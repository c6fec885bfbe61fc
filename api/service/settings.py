"""Settings of one service process: one model, read from options and SKILLSHIFT_* variables.

Every field is declared once, with its default and help text; the CLI builds its `serve`
options from these fields (api/service/cli.py) and the environment fills what the command line
leaves out (an option wins over its variable). Everything is validated once, when the process
starts, and a bad value is reported with the variable or option that carried it.
"""

from __future__ import annotations

import ipaddress
import os
import re
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from proxy.chromium import missing_playwright, playwright_installed
from proxy.guard import upstream_allowed
from proxy.options import for_setting

ENV_PREFIX = "SKILLSHIFT_"
ORIGIN = re.compile(r"^https?://[^/\s]+$")
REVERSE_SPEC = re.compile(r"^https?://[^@\s]+@(?:[^:@\s]+:)?\d{1,5}$")


def _usable_directory(
    directory: str | None, use: str = "record in", writable: bool = True
) -> str | None:
    """A directory the service can write in, or one it can create (with its parents): told at
    start, not as a recording that silently fails on the first page. `use`: what the service
    keeps there, for the message; not `writable`: a directory it may only read."""
    if directory is None:
        return None
    path = Path(directory).expanduser()
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{existing} is not a directory: cannot {use} {path}")
    if writable and not os.access(existing, os.W_OK | os.X_OK):
        cannot = "write in" if existing == path else "create"
        raise ValueError(f"cannot {cannot} {path}: {existing} is not writable")
    return str(path)


def _recordable(directory: str | None) -> str | None:
    return _usable_directory(directory)


KEEP_KNOWLEDGE = "keep site knowledge in"


def _address(value: Any) -> tuple[str, int]:
    if isinstance(value, tuple | list):
        return str(value[0]), int(value[1])
    host, _, port = str(value).rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{value!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def _comma_list(value: Any) -> Any:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _ports_in_range(spec: str) -> bool:
    upstream, _, listen = spec.rpartition("@")
    try:
        urlsplit(upstream).port  # noqa: B018 - (raises on a port out of range)
    except ValueError:
        return False
    return 0 < int(listen.rpartition(":")[2]) < 65536


def _reverse(specs: list[str]) -> list[str]:
    for spec in specs:
        # A port out of range is told here: mitmproxy would refuse it as it sets up its
        # servers, all of them, in a task whose error nobody reads, and the API would go on
        # with no proxy listening at all.
        if not REVERSE_SPEC.match(spec) or not _ports_in_range(spec):
            raise ValueError(f"{spec!r} is not http(s)://upstream:port@[listen_host:]listen_port")
    return specs


def _targets(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    pairs = []
    for item in _comma_list(value):
        source, sep, target = item.partition("=")
        if not sep or not ORIGIN.match(source.rstrip("/")) or not ORIGIN.match(target.rstrip("/")):
            raise ValueError(f"{item!r} is not http://source:port=http://target:port")
        pairs.append((source.rstrip("/"), target.rstrip("/")))
    return pairs


def _prefix(value: str) -> str:
    if not (value.startswith("/") and value.endswith("/")):
        raise ValueError("must start and end with '/'")
    if value == "/":  # (every path of every app would be the proxy's own)
        raise ValueError("must name a path of its own, such as /__ss/, not the root")
    return value


def _ca_file(path: str | None) -> str | None:
    """A file of PEM certificates that upstream TLS can trust, checked with the call it is
    loaded with (OpenSSL's): told at start, not as a 502 and a traceback on every HTTPS
    request."""
    if not path:  # (an empty variable, as a template leaves it: no CA of its own)
        return None
    try:
        ssl.create_default_context().load_verify_locations(cafile=path)
    except ssl.SSLError as error:
        raise ValueError(f"{path} holds no PEM certificate: {error.reason or error}") from None
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    return path


def _redis_url(url: str | None) -> str | None:
    """A URL redis-py connects with (redis://, rediss:// or unix://): told at start, not as a
    traceback from the client library."""
    if not url:  # (an empty variable, as a template leaves it: the embedded store)
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - (raises on a port out of range)
    except ValueError as error:
        raise ValueError(f"{url!r} is not a Redis URL: {error}") from None
    if parts.scheme in ("redis", "rediss"):  # (no host: redis-py's localhost)
        database = parts.path.strip("/")
        if database and not database.isdigit():  # (redis-py took any other for database 0)
            raise ValueError(f"{url!r} names database {database!r}: a database is a number")
        return url
    if parts.scheme == "unix" and parts.path:
        return url
    raise ValueError(
        f"{url!r} is not a Redis URL (redis://HOST:PORT/DB, rediss://..., or unix:///PATH)"
    )


def _optional_address(value: Any) -> tuple[str, int] | None:
    return None if value in (None, "") else _address(value)


def _carried(setting: str, **constraints: Any) -> Any:
    """The field of a setting the proxy's addons read as an option: its default and help are
    the option's (`proxy.options`, where each is declared once)."""
    option = for_setting(setting)
    return Field(option.default, description=option.help, **constraints)


Address = Annotated[tuple[str, int], NoDecode, BeforeValidator(_address)]
OptionalAddress = Annotated[tuple[str, int] | None, NoDecode, BeforeValidator(_optional_address)]
ReverseSpecs = Annotated[
    list[str], NoDecode, BeforeValidator(_comma_list), AfterValidator(_reverse)
]
Targets = Annotated[tuple[tuple[str, str], ...], NoDecode, BeforeValidator(_targets)]


@dataclass(frozen=True)
class Listener:
    name: str  # the port, as text: how the store keys the listener's default episode
    mode: str  # mitmproxy mode spec, e.g. "regular@127.0.0.1:8080"
    kind: str  # "regular" (agents), "desktop" (desktop browsers) or "reverse"
    upstream: str | None = None

    @property
    def takes_default(self) -> bool:
        """Whether unbound requests may fall back to a default episode here. Never on the
        agents' listener: Chromium sends proxy credentials only after a 407, and a default
        would answer first, so an agent's pages would be served under someone else's episode."""
        return self.kind != "regular"

    def describe(self) -> str:
        """What it is and where, for the start-up line."""
        address = f"http://{self.mode.rpartition('@')[2]}"
        if self.kind == "reverse":
            return f"reverse proxy {address} -> {self.upstream}"
        who = "agents'" if self.kind == "regular" else "desktop browsers'"
        return f"{who} proxy {address}"


def _learnable(mode: str) -> str:
    # Refused at start, not page by page: every -Perc page would be a 503 otherwise.
    if mode == "browser" and not playwright_installed():
        raise ValueError(missing_playwright("the learning browser") + ", or use static")
    return mode


class Settings(BaseSettings):
    """`serve`'s options. Each field is one option `--field-name` and one variable
    `SKILLSHIFT_FIELD_NAME`."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="forbid")

    proxy: Address = Field(
        ("127.0.0.1", 8080), description="the agents' proxy listener (HOST:PORT)"
    )
    desktop_proxy: OptionalAddress = Field(
        None,
        description="a second proxy listener for desktop browsers (HOST:PORT), the only "
        "regular listener that may have a default episode",
    )
    advertised_proxy: OptionalAddress = Field(
        None,
        description="the proxy address episodes tell agents to use (HOST:PORT), where they "
        "reach it otherwise than at --proxy: a balancer in front of replicas, a service name "
        "in a cluster (default: the --proxy listener, a wildcard host as 127.0.0.1)",
    )
    api: Address = Field(("127.0.0.1", 8081), description="admin API listener (HOST:PORT)")
    redis_url: Annotated[str | None, AfterValidator(_redis_url)] = Field(
        None,
        description="use Redis as the episode store, e.g. redis://127.0.0.1:6379/0 "
        "(default: the embedded in-memory store)",
    )
    key_prefix: str = Field("skillshift:", min_length=1, description="prefix of every Redis key")
    reverse: ReverseSpecs = Field(
        default_factory=list,
        description="reverse-proxy listener http(s)://upstream:port@[host:]listen_port; "
        "repeatable (comma-separated in the variable)",
    )
    allow_unbound: bool = _carried("allow_unbound")
    api_token: str | None = Field(
        None, description="bearer token for the admin API; required when --api is not loopback"
    )
    internal_prefix: Annotated[str, AfterValidator(_prefix)] = _carried("internal_prefix")
    episode_header: str = _carried("episode_header", pattern=r"^[A-Za-z0-9-]+$")
    require_token: bool = _carried("require_token")
    max_rewrite_bytes: int = _carried("max_rewrite_bytes", gt=0)
    offload_bytes: int = _carried("offload_bytes", ge=0)
    collect_after_bytes: int = _carried("collect_after_bytes", ge=0)
    learn: Annotated[Literal["browser", "static", "off"], AfterValidator(_learnable)] = _carried(
        "learn"
    )
    learn_timeout: float = _carried("learn_timeout", gt=0)
    asset_max_bytes: int = _carried("asset_max_bytes", gt=0)
    knowledge_dir: str | None = Field(
        None,
        description="where site knowledge is kept when episodes are in the embedded store "
        "(default: CONFDIR/knowledge); with --redis-url it is in Redis, shared by replicas",
    )
    confdir: str = Field("~/.mitmproxy", description="where the HTTPS interception CA lives")
    upstream_ca: Annotated[str | None, AfterValidator(_ca_file)] = Field(
        None, description="PEM file of a CA to trust for HTTPS upstreams (a lab's own CA)"
    )
    upstream_insecure: bool = Field(False, description="do not verify upstream certificates")
    upstream_allow: str = _carried("upstream_allow")
    upstream_timeout: float = _carried("upstream_timeout", ge=0, allow_inf_nan=False)
    targets: Targets = Field(
        (),
        description="deployment-wide source->target origins for Tgt conditions, "
        "'http://src:port=http://tgt:port,...', copied into each new episode",
    )
    record_dir: Annotated[str | None, AfterValidator(_recordable)] = Field(
        None,
        description="record what every episode's browser received (HAR, bodies by hash) and "
        "archive episodes and their events here, past their TTL; needed for replay episodes",
    )
    record_max_bytes: int = _carried("record_max_bytes", gt=0)
    import_max_bytes: int = Field(
        256 * 1024 * 1024,
        gt=0,
        description="largest HAR `episodes import` (POST /episodes/import) takes; a larger one "
        "gets a 413 (every other request body: 256 KB)",
    )
    demo: bool = Field(False, description="also serve a demo shop to try it on")
    demo_port: int = Field(
        8090, gt=0, lt=65535, description="demo shop port; its target variant uses the next"
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", description="log level; debug also shows mitmproxy's connection log"
    )

    @field_validator("knowledge_dir")
    @classmethod
    def _usable_knowledge_dir(cls, directory: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("redis_url"):
            return directory  # (the knowledge is in Redis)
        return _usable_directory(directory, KEEP_KNOWLEDGE)

    @field_validator("confdir")
    @classmethod
    def _usable_confdir(cls, confdir: str, info: ValidationInfo) -> str:
        """Without Redis and --knowledge-dir, the knowledge is kept under the confdir. The CA
        is made there when it has none (an existing one may be read-only)."""
        if "knowledge_dir" in info.data and not (
            info.data.get("redis_url") or info.data["knowledge_dir"]
        ):
            _usable_directory(str(Path(confdir) / "knowledge"), KEEP_KNOWLEDGE)
        _usable_directory(confdir, "keep the interception CA in", writable=False)
        return confdir

    @model_validator(mode="after")
    def _api_token_off_loopback(self) -> Settings:
        if not is_loopback(self.api[0]) and not self.api_token:
            raise ValueError(
                f"the API address {self.api[0]} is not loopback: set --api-token (or "
                f"{ENV_PREFIX}API_TOKEN) so the admin API is not open to the network"
            )
        return self

    # Derived views the rest of the service reads.
    @property
    def proxy_host(self) -> str:
        return self.proxy[0]

    @property
    def proxy_port(self) -> int:
        return self.proxy[1]

    @property
    def api_host(self) -> str:
        return self.api[0]

    @property
    def api_port(self) -> int:
        return self.api[1]

    def listeners(self) -> list[Listener]:
        found = [
            Listener(
                str(self.proxy_port), f"regular@{self.proxy_host}:{self.proxy_port}", "regular"
            )
        ]
        if self.desktop_proxy:
            desktop_host, desktop_port = self.desktop_proxy
            found.append(
                Listener(str(desktop_port), f"regular@{desktop_host}:{desktop_port}", "desktop")
            )
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

    def may_reach(self, host: str, port: int) -> bool:
        """Whether the service may fetch from `host:port` itself (a check, a learn run): as
        its proxy may, and never its own API."""
        forbidden = ",".join(self.own_addresses())
        return upstream_allowed(host, port, self.upstream_allow, forbidden)

    @property
    def knowledge_path(self) -> Path:
        return Path(self.knowledge_dir or Path(self.confdir) / "knowledge").expanduser()

    @property
    def knowledge_path_setting(self) -> str:
        """The setting `knowledge_path` comes from and its value, for a start error."""
        return self.setting("knowledge_dir" if self.knowledge_dir else "confdir")

    def setting(self, field: str) -> str:
        """A setting as a start error names it: its option, its variable and its value."""
        value = getattr(self, field)
        shown = str(value) if isinstance(value, os.PathLike) else value
        return f"{option_name(field)} or {variable_name(field)}={shown!r}"

    @property
    def public_proxy_host(self) -> str:
        """Where local clients reach the proxy (a wildcard bind is reached on loopback)."""
        return _reachable(self.proxy_host)

    @property
    def api_url(self) -> str:
        return f"http://{_host_port(_reachable(self.api_host), self.api_port)}"

    @property
    def proxy_server(self) -> str:
        """Where this process's own browsers (the oracle's, the preview's) reach its proxy."""
        return f"http://{_host_port(self.public_proxy_host, self.proxy_port)}"

    @property
    def agent_proxy(self) -> str:
        """HOST:PORT of the proxy as agents are told to reach it (binding answers, browser
        setups): behind a balancer, the balancer, so an episode goes on through another
        replica when one stops."""
        if self.advertised_proxy is not None:
            return _host_port(*self.advertised_proxy)
        return _host_port(self.public_proxy_host, self.proxy_port)

    @property
    def agent_proxy_server(self) -> str:
        """The proxy's URL as agents are told it (`agent_proxy`)."""
        return f"http://{self.agent_proxy}"


class SettingsError(ValueError):
    """Settings that do not validate, each problem named by its option and variable."""


def load_settings(given: dict[str, Any]) -> Settings:
    """Settings from explicit values (options) over SKILLSHIFT_* variables over defaults."""
    try:
        return Settings(**given)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            field = str(item["loc"][0]) if item["loc"] else ""
            where = (
                (option_name(field) if field in given else variable_name(field))
                if field
                else "settings"
            )
            value = given.get(field, item.get("input"))
            problems.append(f"{where}={value!r}: {item['msg']}" if field else item["msg"])
        raise SettingsError("; ".join(problems)) from None


def option_name(field: str) -> str:
    return f"--{field.replace('_', '-')}"


def variable_name(field: str) -> str:
    return f"{ENV_PREFIX}{field.upper()}"


def _host_port(host: str, port: int) -> str:
    """HOST:PORT as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _reachable(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
