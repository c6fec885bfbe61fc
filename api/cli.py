"""The `skillshift` command. Every option of `serve` has a SKILLSHIFT_* environment variable."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import httpx

from api import commands as admin_commands
from api.calibration import COLUMNS, WORDPRESS_SKILLS, column_name
from api.settings import ENV_PREFIX, Settings, SettingsError, load_settings
from shifts.conditions import CONDITIONS


def add_settings_options(parser: argparse.ArgumentParser) -> None:
    """One option per Settings field, with the field's help text; options given on the command
    line are the only values argparse keeps (the environment and defaults come from Settings)."""
    for name, field in Settings.model_fields.items():
        flag = "--" + name.replace("_", "-")
        default = field.get_default(call_default_factory=True)
        shown = "" if default in (None, "", [], ()) else f", default {_shown(default)}"
        text = f"{field.description} ({ENV_PREFIX}{name.upper()}{shown})".replace("%", "%%")
        if field.annotation is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=text
            )
        elif name == "reverse":
            parser.add_argument(flag, action="append", default=argparse.SUPPRESS, help=text)
        else:
            parser.add_argument(flag, default=argparse.SUPPRESS, help=text, metavar="VALUE")


def _shown(default: object) -> str:
    if isinstance(default, tuple) and len(default) == 2 and isinstance(default[1], int):
        return f"{default[0]}:{default[1]}"
    return str(default)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skillshift-proxy", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser(
        "serve",
        help="run the proxy and the admin API in one process",
        description="Run the intercepting proxy and the admin API in one process. "
        f"Each option defaults to its {ENV_PREFIX}* environment variable.",
    )
    add_settings_options(serve)
    check = commands.add_parser(
        "check",
        help="shift a page offline and list alignment violations",
        description="Shift a page (a file, or an http(s) URL fetched directly) as an episode "
        "would, and compare it with the original: forms, link targets, protected entities and "
        "the number of interactive elements must be unchanged. Exit status 1 on any violation.",
    )
    check.add_argument("page", nargs="?", help="HTML file or http(s) URL")
    check.add_argument(
        "--browser",
        metavar="URL",
        help="instead: load URL in Chromium through a running service, unshifted and shifted, "
        "and compare what renders and runs (POST /checks/browser; conditions Src-Perc by "
        "default, Src, Tgt, Tgt-Perc)",
    )
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
    check.add_argument(
        "--assume-no-assets",
        action="store_true",
        help="for a saved page whose stylesheets and scripts are not at hand: take them to "
        "reference nothing beyond the page's inline ones (the strongest drift the page allows); "
        "without this, a file's locators do not drift (nothing is known to be unreferenced)",
    )
    admin_commands.add_api_options(check)
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
    calibrate.add_argument(
        "--skill", action="append", choices=WORDPRESS_SKILLS, help="only this skill (repeatable)"
    )
    calibrate.add_argument(
        "--column",
        action="append",
        choices=[column_name(*column) for column in COLUMNS],
        help="only this condition column (repeatable)",
    )
    calibrate.add_argument("--json", help="also write the full result to this file")
    admin_commands.add_parsers(commands)
    return parser


def run_check(args: argparse.Namespace) -> int:
    """The `check` command: every condition x seed, one line each, violations spelled out."""
    # Late: --help and the API-client commands need no episode model (pydantic validation).
    from api.check import check_page, page_assets
    from proxy.episode import EpisodeConfig, new_episode
    from shifts.references import EMPTY, AssetRefs

    if args.browser:
        if args.page:
            sys.stderr.write("skillshift-proxy check: give PAGE or --browser URL, not both\n")
            return 2
        failures = 0
        headers = {"Authorization": f"Bearer {args.api_token}"} if args.api_token else {}
        for condition in args.condition or ["Src-Perc"]:
            body = {"url": args.browser, "condition": condition, "seeds": list(range(args.seeds))}
            if args.site:
                body["site"] = args.site
            try:
                response = httpx.post(
                    f"{args.api_url.rstrip('/')}/checks/browser",
                    json=body,
                    headers=headers,
                    timeout=120 + 60 * args.seeds,
                    trust_env=False,
                )
            except httpx.HTTPError as error:
                sys.stderr.write(f"skillshift-proxy check: {args.api_url}: {error}\n")
                return 2
            if response.status_code != 200:
                sys.stderr.write(f"skillshift-proxy check: {condition}: {response.text}\n")
                return 2
            result = response.json()
            failures += result["violations"]
            if args.json:
                sys.stdout.write(json.dumps(result) + "\n")
                continue
            for run in result["runs"]:
                count = len(run["violations"])
                status = f"{count} violations" if count else "ok"
                sys.stdout.write(f"{condition:<9} seed {run['seed']:<3} browser  {status}\n")
                for violation in run["violations"]:
                    sys.stdout.write(
                        f"    {violation['kind']}: {violation['element']}: {violation['detail']}\n"
                    )
        return 1 if failures else 0
    if not args.page:
        sys.stderr.write("skillshift-proxy check: give PAGE (a file or URL) or --browser URL\n")
        return 2
    assets: AssetRefs | None = EMPTY if args.assume_no_assets else None
    if args.page.startswith(("http://", "https://")):
        response = httpx.get(args.page, timeout=15, trust_env=False)
        raw, url, charset = response.content, args.page, response.charset_encoding
        if assets is None:
            assets = asyncio.run(page_assets(raw, url, str(response.url)))
    else:
        raw, url, charset = Path(args.page).read_bytes(), args.url or "http://localhost/", None
    failures = 0
    for condition in args.condition or list(CONDITIONS):
        for seed in range(args.seeds):
            config = EpisodeConfig(condition=condition, seed=seed, site=args.site)
            result = check_page(new_episode(config), url, raw, charset, assets=assets)
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
    given = {key: value for key, value in vars(args).items() if key in Settings.model_fields}
    try:
        settings = load_settings(given)
    except SettingsError as error:
        parser.error(str(error))
    from api.logs import configure_logging
    from api.server import StartupFailed, serve  # late: --help need not import mitmproxy

    configure_logging(settings.log_level)

    try:
        asyncio.run(serve(settings))
    except (OSError, StartupFailed) as error:
        sys.stderr.write(f"skillshift: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
