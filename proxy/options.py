"""Every option of the proxy's addons, declared once.

Each `Option` is a mitmproxy option (`ss_*`, registered by the addon that reads it: `add_to`)
and, where a user sets it, a setting of the service process (`setting`: the field of
`api.service.settings.Settings` whose `--flag` and `SKILLSHIFT_*` variable carry it, with this
default and help). The service copies every setting into its option (`api.service.server`);
options with no setting are derived by the service from other settings. Change a default or a
help text here and the addon, the settings, the CLI and the table of docs/configuration.md (a
test checks it) follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shifts.shift_context import DEFAULT_INTERNAL_PREFIX

EPISODE_HEADER = "X-SkillShift-Episode"
# The largest HTML body shifted, and the largest stylesheet or script a learn reads.
MAX_REWRITE_BYTES = 8 * 1024 * 1024
ASSET_MAX_BYTES = 8 * 1024 * 1024
LEARN_MODES = ("browser", "static", "off")


@dataclass(frozen=True)
class Option:
    name: str  # mitmproxy's
    type: type
    default: Any
    help: str
    setting: str | None  # the service setting that carries it (None: derived by the service)
    choices: tuple[str, ...] | None = None

    def add_to(self, loader: Any) -> None:
        """Register it with mitmproxy (an addon's `load`)."""
        extra = {"choices": list(self.choices)} if self.choices else {}
        loader.add_option(self.name, self.type, self.default, self.help, **extra)


def _declared(*options: Option) -> dict[str, Option]:
    return {option.name: option for option in options}


OPTIONS = _declared(
    Option(
        "ss_episode_header",
        str,
        EPISODE_HEADER,
        "request header binding a request to an episode ('ID' or 'ID:TOKEN')",
        "episode_header",
    ),
    Option(
        "ss_require_token",
        bool,
        False,
        "refuse episode headers without ':TOKEN'",
        "require_token",
    ),
    Option(
        "ss_allow_unbound",
        bool,
        False,
        "pass requests bound to no episode through untouched instead of 407",
        "allow_unbound",
    ),
    Option(
        "ss_default_listeners",
        str,
        "",
        "comma-separated listener names (ports) where unbound requests fall back to the "
        "listener's default episode; never the agents' listener",
        None,
    ),
    Option(
        "ss_upstream_allow",
        str,
        "",
        "comma-separated upstream host or host:port globs the proxy may reach, e.g. "
        "'127.0.0.1,localhost' (default: any); the admin API is never reachable",
        "upstream_allow",
    ),
    Option(
        "ss_forbidden_upstreams",
        str,
        "",
        "comma-separated host:port addresses never reachable through the proxy (the admin "
        "API's own)",
        None,
    ),
    Option(
        "ss_internal_prefix",
        str,
        DEFAULT_INTERNAL_PREFIX,
        "path prefix the proxy answers itself on every origin (runtime script, beacon); keep "
        "it neutral: pages show it to agents",
        "internal_prefix",
    ),
    Option(
        "ss_max_rewrite_bytes",
        int,
        MAX_REWRITE_BYTES,
        "larger pages and JSON or script answers (decoded) stream through unshifted, with an event",
        "max_rewrite_bytes",
    ),
    # Below 128 KiB a page shifts in a millisecond or two: a thread hop would cost more than it
    # frees. lxml releases the GIL while it parses and serializes, so big pages overlap.
    Option(
        "ss_offload_bytes",
        int,
        128 * 1024,
        "pages at least this large that need a parse are shifted in a worker thread, so the "
        "event loop keeps serving other requests",
        "offload_bytes",
    ),
    # mitmproxy's finished exchanges wait in reference cycles for a full garbage collection
    # (proxy/collector.py): 32 MiB of their bodies is about 32 loads of a 1 MB page.
    Option(
        "ss_collect_after_bytes",
        int,
        32 * 1024 * 1024,
        "run a full garbage collection once finished exchanges have held this many bytes of "
        "bodies since the last one, so their memory is freed while traffic flows (and hold "
        "Python's own collections off while a page is shifted); 0 leaves it to Python's own "
        "collector",
        "collect_after_bytes",
    ),
    Option(
        "ss_upstream_timeout",
        float,
        60.0,
        "seconds an upstream may take to start its response before a 504; 0 waits forever",
        "upstream_timeout",
    ),
    Option(
        "ss_record_max_bytes",
        int,
        32 * 1024 * 1024,
        "largest body a recording keeps; a larger one is recorded without its body",
        "record_max_bytes",
    ),
    Option(
        "ss_learn",
        str,
        "browser",
        "how a page with no site knowledge yet is learnt before locator drift shifts it: "
        "'browser' (its stylesheets and scripts, what they name, and what its scripts load "
        "in a headless Chromium), 'static' (no browser), 'off' (not learnt: such a page gets "
        "a 503 until a learn run covers it)",
        "learn",
        LEARN_MODES,
    ),
    Option(
        "ss_learn_timeout",
        float,
        30.0,
        "seconds a page's first learn may take; past it, that load gets a 503 and the page "
        "is learnt again on its next load",
        "learn_timeout",
    ),
    Option(
        "ss_asset_max_bytes",
        int,
        ASSET_MAX_BYTES,
        "largest stylesheet or script a learn reads; a page loading a bigger one cannot be "
        "learnt (503)",
        "asset_max_bytes",
    ),
)


def add_options(loader: Any, *names: str) -> None:
    """Register these options with mitmproxy (an addon's `load`)."""
    for name in names:
        OPTIONS[name].add_to(loader)


def for_setting(setting: str) -> Option:
    """The option a service setting carries."""
    return next(option for option in OPTIONS.values() if option.setting == setting)
