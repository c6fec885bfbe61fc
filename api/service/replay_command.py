"""`skillshift-proxy replay ID`: a recorded episode opened in a desktop browser, for looking at
by hand. It makes a replay episode, binds the service's desktop listener (`--desktop-proxy`) to
it and opens the recording's first page (or `--from-load N`) in a browser pointed at that
listener; when the browser is closed, the listener is unbound again. `skillshift-proxy
episodes import run.har` first makes a HAR (this service's, or another tool's) replayable."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
from typing import Any, TextIO

from api.service.user_error import UserError
from skillshift_client import SkillShift, SkillShiftError

# Tried in this order when --browser is not given.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def add_parser(commands: Any, add_api_options: Any) -> None:
    replay = commands.add_parser(
        "replay",
        help="open a recorded episode's replay in a desktop browser, through the desktop listener",
        description="Make a replay episode of ID (answered from its recording, never from the "
        "upstream), make it the default of the service's desktop listener (--desktop-proxy) "
        "and print the browser settings; with --open, start the browser on the recording's "
        "first page (or --from-load N) and, once it is closed, unbind the listener again.",
    )
    replay.add_argument("episode_id", help="the recorded episode (or an imported HAR's id)")
    replay.add_argument(
        "--from-load", type=int, default=None, help="start at this recorded page load (from 1)"
    )
    replay.add_argument(
        "--listener",
        default=None,
        help="the listener to bind (default: the service's desktop listener)",
    )
    replay.add_argument(
        "--open", action="store_true", help="start the browser and wait until it is closed"
    )
    replay.add_argument(
        "--browser",
        default=None,
        help="the browser's command line, proxy flags and URL added (default: the first of "
        f"{', '.join(BROWSERS)} on PATH); e.g. 'chromium --incognito'",
    )
    add_api_options(replay)


def run(client: SkillShift, args: argparse.Namespace, out: TextIO) -> int:
    listener = _desktop_listener(client, args.listener)
    pages = client.pages(args.episode_id)
    first = args.from_load or 1
    page = next((p for p in pages if p["load"] == first), None)
    if page is None:
        loads = ", ".join(str(p["load"]) for p in pages) or "none"
        raise UserError(
            f"episode {args.episode_id!r} has no recorded load {first} (its loads: {loads})"
        )
    # Everything that can fail before anything is made: no episode or binding is left behind.
    browser = _browser(args.browser)
    proxy = _proxy_server(listener)
    spki = _spki(client)
    config: dict[str, Any] = {"replay_of": args.episode_id, "tags": {"replay": "desktop"}}
    if args.from_load:
        config["from_load"] = args.from_load
    episode = client.create_episode(**config)
    client.set_listener_default(listener["name"], episode.id)
    profile = tempfile.mkdtemp(prefix="skillshift-replay-") if args.open else "$(mktemp -d)"
    command = _browser_command(browser, proxy, spki, profile, page["url"])
    shown = " ".join(a if a.startswith("--user-data-dir") else shlex.quote(a) for a in command)
    out.write(
        f"replay episode {episode.id} of {args.episode_id}, bound to listener "
        f"{listener['name']} ({proxy})\n"
        f"first page: {page['url']} (load {first} of {len(pages)})\n"
        f"browser: {shown}\n"
    )
    if not args.open:
        # A command to paste as it is; the token by its variable, never printed.
        token = ' -H "Authorization: Bearer $SKILLSHIFT_API_TOKEN"' if args.api_token else ""
        unset = args.api_token and os.environ.get("SKILLSHIFT_API_TOKEN") != args.api_token
        url = f"{args.api_url.rstrip('/')}/listeners/{listener['name']}"
        out.write(
            f"unbind when done: curl -X PUT{token} -H 'Content-Type: application/json' "
            f"{shlex.quote(url)} -d '{{\"default_episode\": null}}'\n"
            + ("(with SKILLSHIFT_API_TOKEN set to the API's token)\n" if unset else "")
        )
        return 0
    out.flush()
    try:
        finished = subprocess.run(command, check=False)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
        with contextlib.suppress(SkillShiftError):
            client.set_listener_default(listener["name"], None)
            client.delete_episode(episode.id)
    out.write(
        f"browser closed (status {finished.returncode}); listener {listener['name']} unbound\n"
    )
    return 0


def _desktop_listener(client: SkillShift, name: str | None) -> dict[str, Any]:
    listeners = client.listeners()
    for listener in listeners:
        if (name is None and listener["kind"] == "desktop") or listener["name"] == name:
            if not listener["takes_default"]:
                raise UserError(
                    f"listener {listener['name']} takes no default "
                    "episode (it is the agents' listener): use the desktop one",
                )
            return listener
    if name is not None:
        raise UserError(f"the service has no listener {name!r}")
    raise UserError(
        "the service has no desktop listener: start it with --desktop-proxy 127.0.0.1:8082 "
        "(a listener whose default episode binds a browser that sends no credentials)",
    )


def _proxy_server(listener: dict[str, Any]) -> str:
    """The listener's address as a browser's proxy (`regular@HOST:PORT`; a wildcard bind is
    reached on loopback)."""
    host, _, port = str(listener["mode"]).partition("@")[2].rpartition(":")
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def _spki(client: SkillShift) -> str | None:
    """The interception CA's SPKI hash, for HTTPS pages (None while the service has no CA)."""
    try:
        return str(client.ca()["spki_sha256"])
    except SkillShiftError:
        return None


def _browser(given: str | None) -> list[str]:
    """The browser's command line: the one given, or the first browser on the PATH."""
    if given:
        return shlex.split(given)
    found = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if found is None:
        raise UserError(f"no browser found on PATH (tried {', '.join(BROWSERS)}): give --browser")
    return [found]


def _browser_command(
    browser: list[str], proxy: str, spki: str | None, profile: str, url: str
) -> list[str]:
    # Chromium never sends loopback addresses to a proxy without the bypass-list rule.
    command = [*browser, f"--proxy-server={proxy}", "--proxy-bypass-list=<-loopback>"]
    command.append("--no-first-run")
    # A fresh profile: no cookie, cache or service worker of another session answers in place
    # of the recording.
    command.append(f"--user-data-dir={profile}")
    if spki:
        command.append(f"--ignore-certificate-errors-spki-list={spki}")
    return [*command, url]
