"""Commands that talk to a running service through its API: `report`, `episodes`, and `ca`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, TextIO

import httpx

from api.ca import load_ca
from api.client import SkillShift, SkillShiftError


def add_api_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api-url",
        default=os.environ.get("SKILLSHIFT_API_URL", "http://127.0.0.1:8081"),
        help="the service's admin API (SKILLSHIFT_API_URL, default %(default)s)",
    )
    parser.add_argument(
        "--api-token",
        default=os.environ.get("SKILLSHIFT_API_TOKEN"),
        help="its bearer token, if it has one (SKILLSHIFT_API_TOKEN)",
    )


def add_parsers(commands: Any) -> None:
    report = commands.add_parser(
        "report",
        help="diagnostics across episodes: SR, AS, ASC, SFR and popups per group",
        description="Aggregate the task results and skill events agents reported into success "
        "rate (SR), average steps (AS), average skill calls (ASC), skill failure rate (SFR) "
        "and popup counts, one row per group.",
    )
    report.add_argument(
        "--group-by",
        default="condition",
        help="comma-separated: condition, regime, seed, site or any tag (default %(default)s)",
    )
    report.add_argument(
        "--tag", action="append", default=[], help="only episodes tagged KEY=VALUE (repeatable)"
    )
    report.add_argument("--format", choices=["table", "csv", "json"], default="table")
    add_api_options(report)
    episodes = commands.add_parser("episodes", help="list episodes or export one's event log")
    actions = episodes.add_subparsers(dest="action", required=True)
    add_api_options(actions.add_parser("list", help="one line per episode"))
    export = actions.add_parser("export", help="an episode's full event log as JSONL")
    export.add_argument("episode_id")
    export.add_argument("--output", "-o", help="write to this file (default: stdout)")
    add_api_options(export)
    ca = commands.add_parser(
        "ca", help="where the HTTPS interception CA is, its SPKI hash, and browser flags"
    )
    ca.add_argument("--confdir", default=os.environ.get("SKILLSHIFT_CONFDIR", "~/.mitmproxy"))
    ca.add_argument("--proxy-server", default="http://127.0.0.1:8080")


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ("  ".join(v.rjust(w) for v, w in zip(line, widths, strict=True)) for line in cells)
    return "\n".join(["  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)), *lines])


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _report(client: SkillShift, args: argparse.Namespace, out: TextIO) -> None:
    group_by = args.group_by.split(",")
    tags = dict(tag.partition("=")[::2] for tag in args.tag)
    if args.format == "csv":
        out.write(client.reports(group_by, tags, format="csv"))
        return
    result = client.reports(group_by, tags)
    if args.format == "json":
        out.write(json.dumps(result, indent=2) + "\n")
        return
    out.write(format_table(result["rows"], [*group_by, *result["columns"]]) + "\n")


def _episodes(client: SkillShift, args: argparse.Namespace, out: TextIO) -> None:
    if args.action == "list":
        rows = client.list_episodes()
        columns = ["id", "condition", "regime", "seed", "site", "suspended"]
        out.write(format_table(rows, columns) + "\n")
        return
    target = open(args.output, "w") if args.output else out  # noqa: SIM115 - closed below
    try:
        for event in client.iter_events(args.episode_id):
            target.write(json.dumps(event, sort_keys=True) + "\n")
    finally:
        if target is not out:
            target.close()


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
    if args.command == "ca":
        _ca(args, out)
        return 0
    try:
        with SkillShift(args.api_url, args.api_token) as client:
            if args.command == "report":
                _report(client, args, out)
            else:
                _episodes(client, args, out)
    except SkillShiftError as error:
        sys.stderr.write(f"skillshift: the API answered {error}\n")
        return 1
    except httpx.HTTPError as error:
        sys.stderr.write(f"skillshift: cannot reach the API at {args.api_url}: {error}\n")
        return 1
    return 0
