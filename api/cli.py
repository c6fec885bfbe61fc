"""The `skillshift` command. Every option of `serve` has a SKILLSHIFT_* environment variable."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx

from api import commands as admin_commands
from api.settings import Settings, is_loopback
from proxy.episode import ORIGIN, EpisodeConfig, new_episode
from shifts.conditions import CONDITIONS

REVERSE_SPEC = re.compile(r"^https?://[^@\s]+@(?:[^:@\s]+:)?\d{1,5}$")


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(f"SKILLSHIFT_{name}", default)


def _env_flag(name: str) -> bool:
    return (_env(name, "") or "").lower() in ("1", "true", "yes", "on")


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"{value!r} is not HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)


def _reverse(value: str) -> str:
    if not REVERSE_SPEC.match(value):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not http(s)://upstream:port@[listen_host:]listen_port"
        )
    return value


def _targets(value: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in filter(None, (part.strip() for part in value.split(","))):
        source, sep, target = item.partition("=")
        if not sep or not ORIGIN.match(source.rstrip("/")) or not ORIGIN.match(target.rstrip("/")):
            raise argparse.ArgumentTypeError(
                f"{item!r} is not http://source:port=http://target:port"
            )
        pairs.append((source.rstrip("/"), target.rstrip("/")))
    return tuple(pairs)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skillshift", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="run the proxy and the admin API in one process",
        description="Run the intercepting proxy and the admin API in one process. "
        "Each option defaults to its SKILLSHIFT_* environment variable.",
    )
    serve.add_argument(
        "--proxy",
        type=_address,
        default=_env("PROXY", "127.0.0.1:8080"),
        help="regular proxy listen address (SKILLSHIFT_PROXY, default %(default)s)",
    )
    serve.add_argument(
        "--api",
        type=_address,
        default=_env("API", "127.0.0.1:8081"),
        help="admin API listen address (SKILLSHIFT_API, default %(default)s)",
    )
    serve.add_argument(
        "--redis-url",
        default=_env("REDIS_URL"),
        help="use Redis as the episode store, e.g. redis://127.0.0.1:6379/0 "
        "(SKILLSHIFT_REDIS_URL; default: the embedded in-memory store)",
    )
    serve.add_argument(
        "--key-prefix",
        default=_env("KEY_PREFIX", "skillshift:"),
        help="prefix of every Redis key (SKILLSHIFT_KEY_PREFIX, default %(default)s)",
    )
    serve.add_argument(
        "--reverse",
        type=_reverse,
        action="append",
        default=[s for s in (_env("REVERSE") or "").split(",") if s],
        help="add a reverse-proxy listener, http://upstream:port@listen_port; "
        "repeatable (SKILLSHIFT_REVERSE, comma-separated)",
    )
    serve.add_argument(
        "--allow-unbound",
        action="store_true",
        default=_env_flag("ALLOW_UNBOUND"),
        help="pass requests bound to no episode through untouched instead of "
        "answering 407 (SKILLSHIFT_ALLOW_UNBOUND)",
    )
    serve.add_argument(
        "--api-token",
        default=_env("API_TOKEN"),
        help="bearer token for the admin API; required when --api is not "
        "loopback (SKILLSHIFT_API_TOKEN)",
    )
    serve.add_argument(
        "--internal-prefix",
        default=_env("INTERNAL_PREFIX", "/__ss/"),
        help="path prefix the proxy answers itself on every origin "
        "(SKILLSHIFT_INTERNAL_PREFIX, default %(default)s)",
    )
    serve.add_argument(
        "--episode-header",
        default=_env("EPISODE_HEADER", "X-SkillShift-Episode"),
        help="request header binding a request to an episode "
        "(SKILLSHIFT_EPISODE_HEADER, default %(default)s)",
    )
    serve.add_argument(
        "--require-token",
        action="store_true",
        default=_env_flag("REQUIRE_TOKEN"),
        help="refuse episode headers without ':TOKEN' (SKILLSHIFT_REQUIRE_TOKEN)",
    )
    serve.add_argument(
        "--max-rewrite-bytes",
        type=int,
        default=int(_env("MAX_REWRITE_BYTES", str(8 * 1024 * 1024)) or 0),
        help="larger HTML bodies stream through unshifted, with an event "
        "(SKILLSHIFT_MAX_REWRITE_BYTES, default %(default)s)",
    )
    serve.add_argument(
        "--offload-bytes",
        type=int,
        default=int(_env("OFFLOAD_BYTES", str(128 * 1024)) or 0),
        help="pages at least this large that need a parse are shifted in a worker thread, so "
        "the event loop keeps serving other requests (SKILLSHIFT_OFFLOAD_BYTES, default "
        "%(default)s; a huge value keeps every shift on the event loop)",
    )
    serve.add_argument(
        "--confdir",
        default=_env("CONFDIR", "~/.mitmproxy"),
        help="where the HTTPS interception CA lives (SKILLSHIFT_CONFDIR, default %(default)s)",
    )
    serve.add_argument(
        "--upstream-ca",
        default=_env("UPSTREAM_CA"),
        help="PEM file of a CA to trust for HTTPS upstreams, e.g. a lab's "
        "self-signed CA (SKILLSHIFT_UPSTREAM_CA)",
    )
    serve.add_argument(
        "--upstream-insecure",
        action="store_true",
        default=_env_flag("UPSTREAM_INSECURE"),
        help="do not verify HTTPS upstream certificates (SKILLSHIFT_UPSTREAM_INSECURE)",
    )
    serve.add_argument(
        "--upstream-allow",
        default=_env("UPSTREAM_ALLOW", ""),
        help="comma-separated upstream host or host:port globs the proxy may reach, e.g. "
        "'127.0.0.1,localhost' (SKILLSHIFT_UPSTREAM_ALLOW; default: any). The admin API's own "
        "address is never reachable through the proxy.",
    )
    serve.add_argument(
        "--upstream-timeout",
        type=float,
        default=float(_env("UPSTREAM_TIMEOUT", "60") or 60),
        help="seconds an upstream may take to start its response before the client gets a 504; "
        "0 waits forever (SKILLSHIFT_UPSTREAM_TIMEOUT, default %(default)s)",
    )
    serve.add_argument(
        "--targets",
        type=_targets,
        default=_targets(_env("TARGETS", "") or ""),
        help="deployment-wide source->target origins for Tgt conditions, "
        "'http://src:port=http://tgt:port,...', copied into each new episode "
        "(SKILLSHIFT_TARGETS; episodes may override)",
    )
    serve.add_argument(
        "--demo",
        action="store_true",
        default=_env_flag("DEMO"),
        help="also serve a demo shop (source and target variants) to try it on (SKILLSHIFT_DEMO)",
    )
    serve.add_argument(
        "--demo-port",
        type=int,
        default=int(_env("DEMO_PORT", "8090") or 8090),
        help="demo source port; the target variant uses the next port "
        "(SKILLSHIFT_DEMO_PORT, default %(default)s)",
    )
    serve.add_argument(
        "--log-level",
        default=_env("LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
        help="(SKILLSHIFT_LOG_LEVEL, default %(default)s)",
    )
    check = commands.add_parser(
        "check",
        help="shift a page offline and list alignment violations",
        description="Shift a page (a file, or an http(s) URL fetched directly) as an episode "
        "would, and compare it with the original: forms, link targets, protected entities and "
        "the number of interactive elements must be unchanged. Exit status 1 on any violation.",
    )
    check.add_argument("page", help="HTML file or http(s) URL")
    check.add_argument("--url", help="the page's URL when PAGE is a file (site matching, CSP)")
    check.add_argument(
        "--condition",
        action="append",
        choices=list(CONDITIONS),
        help="condition to check (repeatable; default: all six)",
    )
    check.add_argument("--seeds", type=int, default=1, help="check seeds 0..N-1 (default 1)")
    check.add_argument("--site", help="site profile (default: matched by the page)")
    check.add_argument("--json", action="store_true", help="print one JSON object per check")
    calibrate = commands.add_parser(
        "calibrate",
        help="run the reference skills under every condition and print success rates",
        description="Run every reference skill of a site N times under every condition "
        "(seeds 0..N-1) through a running skillshift service, in Debian's Chromium, and print "
        "success rate, mean steps and popups shown per skill x condition.",
    )
    calibrate.add_argument("--site", choices=["wordpress"], default="wordpress")
    calibrate.add_argument("--runs", type=int, default=10, help="runs per cell (default 10)")
    calibrate.add_argument("--api", default="http://127.0.0.1:8081", help="skillshift admin API")
    calibrate.add_argument(
        "--wordpress-env",
        required=True,
        help="the env file deploy/wordpress/wordpress.sh up wrote (DIR/env)",
    )
    calibrate.add_argument("--skill", action="append", help="only this skill (repeatable)")
    calibrate.add_argument(
        "--column",
        action="append",
        help="only this condition column, e.g. Src-Exec/once (repeatable)",
    )
    calibrate.add_argument("--json", help="also write the full result to this file")
    admin_commands.add_parsers(commands)
    return parser


def run_check(args: argparse.Namespace) -> int:
    """The `check` command: every condition x seed, one line each, violations spelled out."""
    from api.check import check_page  # late: --help must not import the shifting stack

    if args.page.startswith(("http://", "https://")):
        response = httpx.get(args.page, timeout=15, trust_env=False)
        raw, url, charset = response.content, args.page, response.charset_encoding
    else:
        raw, url, charset = Path(args.page).read_bytes(), args.url or "http://localhost/", None
    failures = 0
    for condition in args.condition or list(CONDITIONS):
        for seed in range(args.seeds):
            config = EpisodeConfig(condition=condition, seed=seed, site=args.site)
            result = check_page(new_episode(config), url, raw, charset)
            failures += bool(result["violations"])
            if args.json:
                sys.stdout.write(json.dumps(result) + "\n")
                continue
            status = "ok" if not result["violations"] else f"{len(result['violations'])} violations"
            sys.stdout.write(
                f"{condition:<9} seed {seed:<3} site {result['site']:<10} {status}  "
                f"{json.dumps(result['shifts'], sort_keys=True)}\n"
            )
            for violation in result["violations"]:
                sys.stdout.write(f"    {violation['kind']}: {violation['detail']}\n")
    return 1 if failures else 0


def settings_from(args: argparse.Namespace) -> Settings:
    proxy = args.proxy if isinstance(args.proxy, tuple) else _address(args.proxy)
    api = args.api if isinstance(args.api, tuple) else _address(args.api)
    return Settings(
        proxy_host=proxy[0],
        proxy_port=proxy[1],
        api_host=api[0],
        api_port=api[1],
        redis_url=args.redis_url,
        key_prefix=args.key_prefix,
        reverse=tuple(args.reverse),
        allow_unbound=args.allow_unbound,
        api_token=args.api_token,
        internal_prefix=args.internal_prefix,
        episode_header=args.episode_header,
        require_token=args.require_token,
        max_rewrite_bytes=args.max_rewrite_bytes,
        offload_bytes=args.offload_bytes,
        confdir=args.confdir,
        upstream_ca=args.upstream_ca,
        upstream_insecure=args.upstream_insecure,
        upstream_allow=args.upstream_allow,
        default_targets=args.targets,
        upstream_timeout=args.upstream_timeout,
        demo=args.demo,
        demo_port=args.demo_port,
        log_level=args.log_level,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "check":
        return run_check(args)
    if args.command in ("report", "episodes", "ca"):
        return admin_commands.run(args)
    if args.command == "calibrate":
        from api.calibration.run import main as calibrate_main

        return calibrate_main(args)
    settings = settings_from(args)
    if not is_loopback(settings.api_host) and not settings.api_token:
        parser.error(
            f"--api {settings.api_host} is not loopback: set --api-token "
            "(or SKILLSHIFT_API_TOKEN) so the admin API is not open to the network"
        )
    if not (settings.internal_prefix.startswith("/") and settings.internal_prefix.endswith("/")):
        parser.error("--internal-prefix must start and end with '/'")
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if settings.log_level != "debug":
        # mitmproxy logs every connection at info; that is debugging detail here.
        logging.getLogger("mitmproxy").setLevel(logging.WARNING)
    from api.server import StartupFailed, serve  # late: --help need not import mitmproxy

    try:
        asyncio.run(serve(settings))
    except (OSError, StartupFailed) as error:
        sys.stderr.write(f"skillshift: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
