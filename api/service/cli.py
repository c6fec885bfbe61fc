"""The `skillshift-proxy` command. Every option of `serve` has a SKILLSHIFT_* environment
variable.

Every message it writes on an error starts with `skillshift-proxy:` and fits on a line; a
user's error (a file that is not there, an API that is not running, a request the API refuses)
shows no traceback unless `--debug` asks for it. Exit status: 0 done (aligned, for `check`),
1 violations found (`check` only), 2 could not check, a usage error or any other error;
141 (quietly) when what reads its output goes away (`| head`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import httpx

from api.analysis.verdicts import (
    ALIGNED,
    EXIT_STATUS,
    HEADLINE,
    UNCHECKED,
    Unchecked,
    Verdict,
    markup_problem,
    overall,
    unchecked,
)
from api.calibration import COLUMNS, WORDPRESS_SKILLS, column_name
from api.service import commands as admin_commands
from api.service.settings import (
    ENV_PREFIX,
    Settings,
    SettingsError,
    load_settings,
    option_name,
    variable_name,
)
from api.service.user_error import UserError
from shifts.conditions import CONDITIONS
from skillshift_client import SkillShiftError, SkillShiftUnreachable

PROG = "skillshift-proxy"
NDJSON = "application/x-ndjson"
# The longest one step of a browser check may take (a load is bounded by the oracle's own
# timeouts: navigation, network idle, screenshots); the whole check has no bound.
STEP_TIMEOUT_S = 300.0
FETCH_TIMEOUT_S = 15.0


class Parser(argparse.ArgumentParser):
    """Every parser of the command, its subcommands' too: usage errors in the command's one
    error shape, and `--debug` wherever an option can go."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument(
            "--debug",
            action="store_true",
            default=argparse.SUPPRESS,
            help="on an error, print the Python traceback too",
        )

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        command = self.prog.removeprefix(PROG).strip()
        self.exit(2, f"{PROG}: {command + ': ' if command else ''}{message}\n")


class DeprecatedAlias(argparse.Action):
    """An old option name that still works, hidden from the help, with a warning."""

    def __init__(self, *args: Any, replacement: str, **kwargs: Any) -> None:
        # Nothing unless given: a subcommand's default would overwrite the value of the same
        # name given before the command (`--api-url URL calibrate`).
        super().__init__(
            *args, **{**kwargs, "help": argparse.SUPPRESS, "default": argparse.SUPPRESS}
        )
        self.replacement = replacement

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        sys.stderr.write(f"{PROG}: {option_string} is deprecated; use {self.replacement}\n")
        setattr(namespace, self.dest, values)


def say(line: str) -> None:
    """One line of output, written at once: progress is seen as it happens, even in a pipe."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def add_settings_options(parser: argparse.ArgumentParser) -> None:
    """One option per Settings field, with the field's help text; options given on the command
    line are the only values argparse keeps (the environment and defaults come from Settings)."""
    for name, field in Settings.model_fields.items():
        flag = option_name(name)
        default = field.get_default(call_default_factory=True)
        shown = "" if default in (None, "", [], ()) else f", default {_shown(default)}"
        text = f"{field.description} ({variable_name(name)}{shown})".replace("%", "%%")
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


def positive_int(text: str) -> int:
    """A count of 1 or more (`--seeds 0` checked nothing and said "could not check")."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not 1 or more")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        # Its options are matched whole: a command's own `--api` (serve's address, calibrate's
        # old name) is no abbreviation of `--api-url` or `--api-token`.
        allow_abbrev=False,
    )
    admin_commands.add_api_options(parser, top_level=True)
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
        "the number of interactive elements must be unchanged. Or, with --browser, compare "
        "what Chromium renders and runs. Exit status 0 when aligned, 1 when violations were "
        "found, 2 when the page could not be checked (it could not be read or fetched, "
        "answered a non-2xx status, is not HTML, the browser crashed) or on an error.",
    )
    check.add_argument("page", nargs="?", help="HTML file or http(s) URL")
    check.add_argument(
        "--browser",
        metavar="URL",
        help="instead: load URL in Chromium through a running service, unshifted and shifted, "
        "and compare what renders and runs (POST /checks/browser; conditions Src-Perc by "
        "default, Src, Tgt, Tgt-Perc); a line as each load and seed finishes",
    )
    check.add_argument("--url", help="the page's URL when PAGE is a file (site matching, CSP)")
    check.add_argument(
        "--condition",
        action="append",
        choices=list(CONDITIONS),
        help="condition to check (repeatable; default: all six, Src-Perc with --browser)",
    )
    check.add_argument(
        "--seeds", type=positive_int, default=1, help="check seeds 0..N-1 (default 1)"
    )
    check.add_argument("--site", help="site profile (default: matched by the page)")
    check.add_argument(
        "--perceptual",
        choices=["benchmark", "extended"],
        help="the perceptual set of -Perc conditions: benchmark (default; locator drift) or "
        "extended (also relabel, restyle, relayout, which move and rename what a task sees)",
    )
    check.add_argument(
        "--json", action="store_true", help="print one JSON object per check (per condition)"
    )
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
        "success rate, mean steps and popups shown per skill x condition. Its episodes are "
        "internal: left out of /reports.",
    )
    calibrate.add_argument("--site", choices=["wordpress"], default="wordpress")
    calibrate.add_argument(
        "--runs", type=positive_int, default=10, help="runs per cell (default 10)"
    )
    admin_commands.add_api_options(calibrate)
    calibrate.add_argument("--api", dest="api_url", action=DeprecatedAlias, replacement="--api-url")
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
    calibrate.add_argument(
        "--output", "-o", metavar="FILE", help="also write the full result to FILE, as JSON"
    )
    # Elsewhere --json is a flag that prints JSON; here it named the file.
    calibrate.add_argument("--json", dest="output", action=DeprecatedAlias, replacement="--output")
    admin_commands.add_parsers(commands)
    return parser


def run_check(args: argparse.Namespace) -> int:
    """The `check` command: every condition x seed, one line each, violations spelled out, and
    a last line with the verdict."""
    if args.browser:
        if args.page:
            raise UserError("check: give PAGE or --browser URL, not both")
        conditions = args.condition or ["Src-Perc"]
        verdicts = [check_in_browser(args, condition) for condition in conditions]
    elif args.page:
        verdicts = [check_offline(args)]
    else:
        raise UserError("check: give PAGE (a file or URL) or --browser URL")
    return EXIT_STATUS[overall(verdicts)]


def _unchecked(args: argparse.Namespace, error: Unchecked) -> Verdict:
    say(
        json.dumps(unchecked(str(error), url=args.page))
        if args.json
        else _headline(UNCHECKED, str(error))
    )
    return UNCHECKED


def check_offline(args: argparse.Namespace) -> Verdict:
    # Late: --help and the API-client commands need no episode model (pydantic validation).
    from pydantic import ValidationError

    from api.analysis.page_check import check_page
    from api.failures import validation_message
    from proxy.episode import EpisodeConfig, new_episode

    try:
        configs = [
            EpisodeConfig.model_validate(
                {"condition": condition, "seed": seed, "site": args.site, **_perceptual(args)}
            )
            for condition in args.condition or list(CONDITIONS)
            for seed in range(args.seeds)
        ]
    except ValidationError as error:  # (an unknown --site, say: before the page is read)
        raise UserError(f"check: {validation_message(error)}") from None
    try:
        raw, url, charset, assets = read_page(args)
    except Unchecked as error:
        return _unchecked(args, error)
    verdicts: list[Verdict] = []
    for config in configs:
        try:
            result = check_page(new_episode(config), url, raw, charset, assets=assets)
        except Unchecked as error:  # (a page the parser reads only in part: under any shift)
            return _unchecked(args, error)
        verdicts.append(result["status"])
        if args.json:
            say(json.dumps(result))
            continue
        found = len(result["violations"])
        status = f"{found} violations" if found else "ok"
        say(
            f"{config.condition:<9} seed {config.seed:<3} site {result['site']:<10} {status}  "
            f"{json.dumps(result['shifts'], sort_keys=True)}"
        )
        for violation in result["violations"]:
            say(f"    {violation['kind']}: {violation['detail']}")
    verdict = overall(verdicts)
    if not args.json:
        failed = sum(each != ALIGNED for each in verdicts)
        say(_headline(verdict, _tally(failed, len(verdicts), "check")))
    return verdict


def _perceptual(args: argparse.Namespace) -> dict[str, str]:
    return {"perceptual": args.perceptual} if args.perceptual else {}


def read_page(args: argparse.Namespace) -> tuple[bytes, str, str | None, Any]:
    """The page to check (its bytes, URL, charset) and what its assets reference (None:
    unknown). `Unchecked` when it cannot be read or fetched, or is no HTML page."""
    from api.analysis.page_check import fetch_page, page_assets
    from shifts.references import EMPTY

    assets = EMPTY if args.assume_no_assets else None
    if not args.page.startswith(("http://", "https://")):
        try:
            raw = Path(args.page).read_bytes()
        except OSError as error:
            raise Unchecked(f"could not read {args.page}: {error.strerror or error}") from None
        problem = markup_problem(raw)
        if problem:
            raise Unchecked(f"{args.page}: {problem}")
        return raw, args.url or "http://localhost/", None, assets

    async def fetch() -> tuple[bytes, str | None, Any]:
        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_S, trust_env=False) as client:
            response = await fetch_page(client, args.page)
        found = assets
        if found is None:
            found = await page_assets(response.content, args.page, str(response.url))
        return response.content, response.charset, found

    raw, charset, assets = asyncio.run(fetch())
    return raw, args.page, charset, assets


def check_in_browser(args: argparse.Namespace, condition: str) -> Verdict:
    """One condition through POST /checks/browser, streamed: a line as each unshifted load and
    each seed finishes, then the verdict (with --json: the result alone)."""
    body: dict[str, Any] = {
        "url": args.browser,
        "condition": condition,
        "seeds": list(range(args.seeds)),
    }
    if args.site:
        body["site"] = args.site
    body.update(_perceptual(args))
    headers = {"Accept": NDJSON, **admin_commands.auth_headers(args)}
    result = None
    with httpx.stream(
        "POST",
        f"{args.api_url.rstrip('/')}/checks/browser",
        json=body,
        headers=headers,
        timeout=httpx.Timeout(FETCH_TIMEOUT_S, read=STEP_TIMEOUT_S),
        trust_env=False,
    ) as response:
        if response.status_code != 200:
            response.read()
            raise SkillShiftError.from_response(response)
        for line in response.iter_lines():
            if not line.strip():
                continue
            step = json.loads(line)
            kind = step.pop("type")
            if kind == "result":
                result = step
            elif not args.json:
                _progress(condition, kind, step)
    if result is None:
        raise UserError(f"the service ended the check of {condition} without a result")
    verdict: Verdict = result["status"]
    if args.json:
        say(json.dumps(result))
    elif verdict == UNCHECKED:
        say(f"{condition:<9} " + _headline(verdict, result["reason"]))
    else:
        failed = sum(bool(run["violations"]) for run in result["runs"])
        say(f"{condition:<9} " + _headline(verdict, _tally(failed, len(result["runs"]), "seed")))
    return verdict


def _progress(condition: str, kind: str, step: dict[str, Any]) -> None:
    """One line per step of the browser check (`started`, `baseline`, `run`)."""
    if kind == "started":
        say(f"{condition:<9} checking {step['url']} in Chromium")
    elif kind == "baseline":
        say(
            f"{condition:<9} unshifted load {step['load']}/{step['of']}  "
            f"{step['status']}  {step['load_ms']:.0f} ms"
        )
    elif kind == "run":
        found = len(step["violations"])
        status = f"{found} violations" if found else "ok"
        share = step.get("locator_share")
        shown = f"  (locator share {share:.2f})" if isinstance(share, int | float) else ""
        say(f"{condition:<9} seed {step['seed']:<3} browser  {status}{shown}")
        for violation in step["violations"]:
            say(f"    {violation['kind']}: {violation['element']}: {violation['detail']}")


def _headline(verdict: Verdict, detail: str) -> str:
    return f"{HEADLINE[verdict]}: {detail}"


def _tally(failed: int, total: int, noun: str) -> str:
    """How many of the checks found violations: "1 of 6 checks", "2 seeds, no violation"."""
    nouns = noun if total == 1 else f"{noun}s"
    return f"{failed} of {total} {nouns}" if failed else f"{total} {nouns}, no violation"


def user_error(error: Exception, args: argparse.Namespace) -> str | None:
    """The one line a user's error is told in; None for an error that is a bug."""
    if isinstance(error, UserError | SettingsError):
        return str(error)
    if isinstance(error, SkillShiftUnreachable):
        return f"cannot reach the API at {error.base_url}: {error.reason}"
    if isinstance(error, SkillShiftError):
        return f"the API answered {error.status}: {error.message}"
    if isinstance(error, httpx.HTTPError):
        where = getattr(args, "api_url", None)
        place = f"the API at {where}" if where else "the server"
        return f"cannot reach {place}: {error or type(error).__name__}"
    if isinstance(error, OSError):
        return f"{error.filename}: {error.strerror}" if error.filename else str(error)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "serve":
        admin_commands.with_api_defaults(args)
    elif args.api_url is not None:
        parser.error(
            "--api-url names a running service's API, for the commands that talk to one "
            "(report, episodes, ...); serve's own API listens on --api HOST:PORT"
        )
    try:
        status = run(parser, args)
        sys.stdout.flush()  # (a reader gone is found here, not as Python exits)
        return status
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): it has what it wanted. Python would complain about
        # the pipe again flushing stdout at exit, so it flushes into nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # (as a command a SIGPIPE ended)
    except Exception as error:  # noqa: BLE001 - every error ends in one line and status 2
        message = user_error(error, args)
        if message is None or getattr(args, "debug", False):
            traceback.print_exc()  # a bug always shows where it is
        if message is None:
            message = f"internal error: {type(error).__name__}: {error}"
        sys.stderr.write(f"{PROG}: {message}\n")
        return 2


def given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings `serve` was given on its command line (the variables and defaults fill in
    the rest). The top-level `--api-token` not given is None: not a setting given."""
    return {
        key: value
        for key, value in vars(args).items()
        if key in Settings.model_fields and value is not None
    }


def run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "check":
        return run_check(args)
    if args.command in ("report", "episodes", "replay", "learn", "knowledge", "ca"):
        return admin_commands.run(args)
    if args.command == "calibrate":
        from api.calibration.run import main as calibrate_main

        return calibrate_main(args)
    try:
        settings = load_settings(given_settings(args))
    except SettingsError as error:
        parser.error(str(error))
    from api.service.logs import configure_logging
    from api.service.server import StartupFailed, serve  # late: --help need not import mitmproxy

    configure_logging(settings.log_level)
    try:
        asyncio.run(serve(settings))
    except StartupFailed as error:  # a port in use, say
        raise UserError(str(error)) from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
