"""Commands that talk to a running service through its API: `report`, `episodes`, `replay`,
`learn`, `knowledge`, and `ca`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

from api.service import replay_command
from api.service.ca import load_ca
from api.service.user_error import UserError
from skillshift_client import SkillShift
from skillshift_client.tables import format_benchmark, format_table

DEFAULT_API_URL = "http://127.0.0.1:8081"


def add_api_options(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    """`--api-url` and `--api-token`, for a command that talks to a running service; also on
    the top-level parser (`top_level`), so they may come before the command too
    (`skillshift-proxy --api-url URL report`), as global options often do. Neither parser
    holds their defaults (a command's would overwrite the value given before it):
    `with_api_defaults` fills them in after parsing."""
    where = " (before or after the command)" if top_level else ""
    parser.add_argument(
        "--api-url",
        default=None if top_level else argparse.SUPPRESS,
        help=f"the service's admin API{where} (SKILLSHIFT_API_URL, default {DEFAULT_API_URL})",
    )
    parser.add_argument(
        "--api-token",
        default=None if top_level else argparse.SUPPRESS,
        help=f"its bearer token, if it has one{where} (SKILLSHIFT_API_TOKEN)",
    )


def with_api_defaults(args: argparse.Namespace) -> argparse.Namespace:
    """`args` with the API options not given taken from their variables, or the default."""
    if args.api_url is None:
        args.api_url = os.environ.get("SKILLSHIFT_API_URL", DEFAULT_API_URL)
    if args.api_token is None:
        args.api_token = os.environ.get("SKILLSHIFT_API_TOKEN")
    return args


def key_value(text: str) -> tuple[str, str]:
    """A `KEY=VALUE` argument; anything else is a usage error (a tag with no `=` matched no
    episode, silently)."""
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key, value


def auth_headers(args: argparse.Namespace) -> dict[str, str]:
    return {"Authorization": f"Bearer {args.api_token}"} if args.api_token else {}


def add_internal_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--include-internal",
        action="store_true",
        help="count the service's own episodes too (the browser oracle's, the preview's, "
        "calibration runs), which are left out by default",
    )


def add_parsers(commands: Any) -> None:
    report = commands.add_parser(
        "report",
        help="diagnostics across episodes: SR, AS, ASC, SFR and popups per group",
        description="Aggregate the task results and skill events agents reported into success "
        "rate (SR), average steps (AS), average skill calls (ASC), skill failure rate (SFR), "
        "attributed skill failures and popup counts, one row per group; or print the "
        "benchmark's table (--format benchmark: each metric macro-averaged over (website, "
        "condition) cells, by website, by condition and overall) or one JSON line per task "
        "attempt (--format per_task).",
    )
    report.add_argument(
        "--group-by",
        default="condition",
        help="comma-separated: condition, regime, seed, site or any tag (default %(default)s)",
    )
    report.add_argument(
        "--tag",
        action="append",
        default=[],
        type=key_value,
        help="only episodes tagged KEY=VALUE (repeatable: they must have every one)",
    )
    report.add_argument(
        "--format",
        choices=["table", "csv", "json", "benchmark", "per_task"],
        default="table",
        help="table (default), csv or json: one row per group; benchmark: the benchmark's "
        "table (--group-by ignored); per_task: JSON lines, one per task attempt",
    )
    add_internal_option(report)
    add_api_options(report)
    episodes = commands.add_parser("episodes", help="list episodes or export one's event log")
    actions = episodes.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="one line per live episode")
    add_internal_option(listing)
    add_api_options(listing)
    export = actions.add_parser(
        "export", help="an episode's full event log as JSONL, or its recording as HAR"
    )
    export.add_argument("episode_id")
    export.add_argument(
        "--har",
        action="store_true",
        help="write the episode's recording as a HAR 1.2 document instead (the service must "
        "record: --record-dir)",
    )
    export.add_argument("--output", "-o", help="write to this file (default: stdout)")
    add_api_options(export)
    imported = actions.add_parser(
        "import",
        help="make a HAR (this service's export, Playwright's, DevTools', Firefox's) into a "
        'recorded episode that `replay` or POST /episodes {"replay_of": ID} replays',
    )
    imported.add_argument("har", help="the HAR 1.2 file")
    imported.add_argument("--id", dest="new_id", help="the new episode's id (default: a new one)")
    add_api_options(imported)
    replay_command.add_parser(commands, add_api_options)
    learn = commands.add_parser(
        "learn",
        help="learn pages' site knowledge afresh (what locator drift shifts them against)",
        description="Learn each page from its upstream (without cookies): its stylesheets and "
        "scripts, what they name, and what its scripts load in a headless Chromium. Where the "
        "app's code changed, a new knowledge version is published at a new epoch: episodes "
        "created from then on are shifted against it, earlier ones keep theirs. Nothing is "
        "written unless every page was learnt (exit status 2, naming why).",
    )
    learn.add_argument("urls", nargs="+", metavar="URL", help="a page to learn")
    learn.add_argument(
        "--static", action="store_true", help="without the browser pass (assets and imports)"
    )
    learn.add_argument("--json", action="store_true", help="print the API's answer as JSON")
    add_api_options(learn)
    knowledge = commands.add_parser(
        "knowledge", help="list, show or delete site knowledge versions"
    )
    verbs = knowledge.add_subparsers(dest="action", required=True)
    listing = verbs.add_parser("list", help="the epoch, and every origin's versions")
    add_api_options(listing)
    show = verbs.add_parser("show", help="one version's pages and their records")
    delete = verbs.add_parser(
        "delete", help="delete a version (episodes that pinned it get a 503 naming it)"
    )
    for verb in (show, delete):
        verb.add_argument("origin", help="e.g. http://127.0.0.1:8000")
        verb.add_argument("version", type=int)
        add_api_options(verb)
    ca = commands.add_parser(
        "ca",
        help="where the HTTPS interception CA is, its SPKI hash, and browser flags",
        description="Print where the CA that signs intercepted HTTPS is (making it, as the "
        "service would on its first start, when there is none yet), its SPKI hash, and the "
        "exact settings that make Playwright, Chromium, a desktop Chrome and Firefox use the "
        "proxy and trust it. GET /ca answers the same as JSON.",
    )
    ca.add_argument(
        "--confdir",
        default=os.environ.get("SKILLSHIFT_CONFDIR", "~/.mitmproxy"),
        help="the service's CA directory, its --confdir (SKILLSHIFT_CONFDIR, default %(default)s)",
    )
    ca.add_argument(
        "--proxy-server",
        default="http://127.0.0.1:8080",
        help="the proxy listener the printed flags point the browser at (default %(default)s; "
        "a desktop browser's is the service's --desktop-proxy)",
    )


def _report(client: SkillShift, args: argparse.Namespace, out: TextIO) -> None:
    group_by = args.group_by.split(",")
    tags = args.tag  # (every one applies: a key given twice too)

    def reports(format: str) -> Any:  # noqa: A002 - the API's name for it
        return client.reports(group_by, tags, format, include_internal=args.include_internal)

    if args.format == "csv":
        out.write(reports("csv"))
        return
    if args.format == "per_task":
        for record in reports("per_task"):
            out.write(json.dumps(record) + "\n")
        return
    if args.format == "benchmark":
        out.write(format_benchmark(reports("benchmark")) + "\n")
        return
    result = reports("json")
    if args.format == "json":
        out.write(json.dumps(result, indent=2) + "\n")
        return
    out.write(format_table(result["rows"], [*group_by, *result["columns"]]) + "\n")
    not_drifted = sum(row.get("pages_not_drifted") or 0 for row in result["rows"])
    if not_drifted:
        out.write(
            f"note: the locator drift changed nothing on {not_drifted} page load(s) "
            "(pages_not_drifted): with the benchmark's perceptual set, a -Perc condition is "
            "its base condition there\n"
        )


def _episodes(client: SkillShift, args: argparse.Namespace, out: TextIO) -> None:
    if args.action == "list":
        rows = client.list_episodes(include_internal=args.include_internal)
        columns = ["id", "condition", "regime", "seed", "site", "suspended"]
        out.write(format_table(rows, columns) + "\n")
        return
    if args.action == "import":
        _import(client, args, out)
        return
    if args.har:
        document = json.dumps(client.har(args.episode_id), indent=1, ensure_ascii=False) + "\n"
        if args.output:  # written only once the API answered: no empty file on an error
            with open(args.output, "w", encoding="utf-8") as har:
                har.write(document)
        else:
            out.write(document)
        return
    target = open(args.output, "w") if args.output else out  # noqa: SIM115 - closed below
    try:
        for event in client.iter_events(args.episode_id):
            target.write(json.dumps(event, sort_keys=True) + "\n")
    finally:
        if target is not out:
            target.close()


def _import(client: SkillShift, args: argparse.Namespace, out: TextIO) -> None:
    try:
        with open(args.har, "rb") as har:
            document = json.load(har)
    except OSError as error:
        raise UserError(f"{args.har}: cannot read it: {error.strerror or error}") from None
    except ValueError as error:  # a JSON error (or a bad encoding) is a ValueError
        raise UserError(f"{args.har}: cannot read it as JSON ({error})") from None
    name = os.path.basename(args.har)
    result = client.import_har(document, name, args.new_id)
    creator = result["creator"]
    made_by = f"{creator.get('name', '?')} {creator.get('version', '')}".strip()
    out.write(
        f"episode {result['id']}: {result['entries']} entries, {result['pages']} page loads "
        f"(from {name}, written by {made_by})\n"
    )
    for skipped in result["skipped"]:
        out.write(f"  left out entry {skipped['entry']} ({skipped['url']}): {skipped['why']}\n")
    out.write(f"replay it: skillshift-proxy replay {result['id']} --open\n")


def _learn(client: SkillShift, args: argparse.Namespace, out: TextIO) -> None:
    result = client.learn(args.urls, browser=not args.static)
    if args.json:
        out.write(json.dumps(result, indent=2) + "\n")
        return
    for origin in result["origins"]:
        verdict = "new version" if origin["new"] else "unchanged: version"
        out.write(f"{origin['origin']}: {verdict} {origin['version']}\n")
        for page in origin["pages"]:
            changed = ", changed" if page["changed"] else ""
            out.write(
                f"  {page['url']}: {page['assets']} assets ({page['learnt_by']}{changed}, "
                f"{page['seconds']} s) {page['record']}\n"
            )
    out.write(f"knowledge epoch {result['epoch']}\n")


def _knowledge(client: SkillShift, args: argparse.Namespace, out: TextIO) -> None:
    if args.action == "show":
        version = client.knowledge_version(args.origin, args.version)
        rows = [
            {"url": p["url"], "markup": p["markup"], "record": p["record"]}
            for p in version["pages"]
        ]
        out.write(format_table(rows, ["url", "markup", "record"]) + "\n")
        return
    if args.action == "delete":
        deleted = client.delete_knowledge_version(args.origin, args.version)
        out.write(f"deleted version {args.version} of {args.origin} (epoch {deleted['epoch']})\n")
        return
    listed = client.knowledge()
    out.write(f"knowledge epoch {listed['epoch']} (learning: {listed['learn']})\n")
    rows = [
        {**version, "current": version["number"] == origin["current"]}
        for origin in listed["origins"]
        for version in origin["versions"]
    ]
    columns = ["origin", "number", "epoch", "made_by", "pages", "deleted_at", "current"]
    out.write(format_table(rows, columns) + "\n")


def _ca(args: argparse.Namespace, out: TextIO) -> None:
    authority = load_ca(args.confdir, create=True)
    assert authority is not None  # created just above
    setup = authority.browser_setup(args.proxy_server)
    out.write(f"CA certificate: {authority.path}\nSPKI sha256:    {authority.spki_sha256}\n\n")
    out.write(f"Playwright:     chromium.launch(args={setup['playwright']['launch']['args']})\n")
    out.write(f"                new_context(**{setup['playwright']['new_context']})\n")
    out.write(f"Chromium:       {setup['chromium']}\n")
    out.write(f"Desktop Chrome: {setup['desktop_chrome']}\n")
    out.write(f"Firefox:        {setup['firefox']}\n")


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """`ca`, `report` or `episodes`; an API that answers an error raises SkillShiftError, one
    that cannot be reached httpx.HTTPError (the command tells either in one line)."""
    if args.command == "ca":
        _ca(args, out)
        return 0
    with SkillShift(args.api_url, args.api_token) as client:
        if args.command == "report":
            _report(client, args, out)
        elif args.command == "learn":
            _learn(client, args, out)
        elif args.command == "knowledge":
            _knowledge(client, args, out)
        elif args.command == "replay":
            return replay_command.run(client, args, out)
        else:
            _episodes(client, args, out)
    return 0
