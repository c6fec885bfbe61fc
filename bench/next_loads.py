"""How a real app's next loads are served: swapped into the last shift, or shifted whole.

    .venv/bin/python -m bench.next_loads --app wordpress --env /tmp/wplab/env [--loads 4]
    .venv/bin/python -m bench.next_loads --app mediawiki --env /tmp/mwlab/env
    .venv/bin/python -m bench.next_loads --app wagtail --env /tmp/wtlab/env

A page with per-request values (a nonce, a CSRF field, the request's time, a response time) is
shifted whole at its first load under a setting; its next loads are that shift with the new
values swapped in (`shifts.volatile`) when that is all that tells them apart, at the cost of a
comparison, and shifted whole again otherwise. On a lab app, logged in as its admin, through a
service process started for the run, under `Src-Perc`: each page loaded `--loads` times, each
load in a new second (WordPress's admin writes the request's time into every page), and how
the service served each (its metrics: shifted whole, swapped, or the same bytes again). Then,
offline, for each page: three loads a second apart, the second swapped into the first's shift
and shifted whole (seeds 0-2): whether the bytes are the same, and the CPU ms of each, and of
the third swapped (the second read the first page for all its next loads).

The apps: the WordPress admin (`deploy/wordpress/wordpress.sh up --dir /tmp/wplab`; run it a
minute or more after the install: in its first minute, the themes page counts the seconds its
update check is overdue), and MediaWiki's pages, its editor and special pages
(`deploy/lab/mediawiki.sh up --dir /tmp/mwlab`), which carry a request id and the response
time in every page's script.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from api.calibration.run import session_cookies
from bench.fixtures import timed_rewrite
from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import ShiftedPages
from tests.helpers.lab import key_values
from tests.helpers.lab_wagtail import admin_session, hidden_fields
from tests.helpers.processes import ServiceProcess

WORDPRESS_PAGES = [
    "/wp-admin/",
    "/wp-admin/edit.php",
    "/wp-admin/edit.php?post_type=page",
    "/wp-admin/upload.php",
    "/wp-admin/edit-comments.php",
    "/wp-admin/themes.php",
    "/wp-admin/plugins.php",
    "/wp-admin/users.php",
    "/wp-admin/profile.php",
    "/wp-admin/tools.php",
    "/wp-admin/options-general.php",
    "/wp-admin/post.php?post=1&action=edit",
]
MEDIAWIKI_PAGES = [
    "/index.php/Main_Page",
    "/index.php/Lab_Table",
    "/index.php/Lab_Notes",
    "/index.php?title=Lab_Notes&action=edit",
    "/index.php?title=Lab_Table&action=history",
    "/index.php?title=Special:RecentChanges",
    "/index.php?title=Special:Preferences",
    "/index.php?title=Special:SpecialPages",
]
WAGTAIL_PAGES = [
    "/",
    "/news/",
    "/news/library-reopens/",
    "/admin/",
    "/admin/pages/",
    "/admin/pages/3/",
    "/admin/pages/4/edit/",
    "/admin/images/",
    "/admin/documents/",
    "/admin/users/",
    "/admin/reports/site-history/",
]
COUNTERS = ("shifted", "swapped", "reused")


def wordpress_session(env: dict[str, str]) -> dict[str, str]:
    return session_cookies(env["LAB_URL"], env["LAB_USER"], env["LAB_PASSWORD"])


def mediawiki_session(env: dict[str, str]) -> dict[str, str]:
    """The cookies of a MediaWiki session logged in through its login form (the form's hidden
    fields, the login token among them, sent back with the name and password)."""
    with httpx.Client(base_url=env["LAB_URL"], timeout=60, trust_env=False) as client:
        page = client.get("/index.php?title=Special:UserLogin").text
        login = re.search(r'<form[^>]*name="userlogin".*?</form>', page, re.DOTALL)
        form = login[0] if login else ""
        fields = hidden_fields(form)
        fields.update(wpName=env["LAB_USER"], wpPassword=env["LAB_PASSWORD"])
        client.post("/index.php/Special:UserLogin", data=fields)
        cookies = dict(client.cookies.items())
    if not any(name.endswith("UserID") for name in cookies):
        raise SystemExit("MediaWiki's login did not log in")
    return cookies


# Each app's pages and how to log in.
APPS = {
    "wordpress": (WORDPRESS_PAGES, wordpress_session),
    "mediawiki": (MEDIAWIKI_PAGES, mediawiki_session),
    "wagtail": (WAGTAIL_PAGES, admin_session),
}


def next_second() -> None:
    """Until the wall clock's second changes: WordPress's admin pages carry the request's
    time."""
    now = int(time.time())
    while int(time.time()) == now:
        time.sleep(0.02)


def served(service: ServiceProcess, app: str, env: dict[str, str], loads: int) -> list[str]:
    pages, session = APPS[app]
    rows = []
    episode = service.create_episode(condition="Src-Perc", seed=0)
    with httpx.Client(proxy=str(episode["proxy_url"]), cookies=session(env), timeout=120) as client:
        for page in pages:
            counts = dict.fromkeys(COUNTERS, 0)
            for _ in range(loads):
                next_second()
                before = {name: service.counter(f"shifted_pages_{name}_total") for name in COUNTERS}
                client.get(env["LAB_URL"] + page)
                for name in COUNTERS:
                    counts[name] += service.counter(f"shifted_pages_{name}_total") - before[name]
            rows.append(
                f"{page:42} {loads:5} {counts['shifted']:8} {counts['swapped']:8}"
                f" {counts['reused']:6}"
            )
    return rows


def offline(app: str, env: dict[str, str]) -> list[str]:
    pages, session = APPS[app]
    rows = []
    with httpx.Client(cookies=session(env), timeout=120, trust_env=False) as client:
        for page in pages:
            first = client.get(env["LAB_URL"] + page).content
            next_second()
            second = client.get(env["LAB_URL"] + page).content
            next_second()
            third = client.get(env["LAB_URL"] + page).content
            same, swaps, swap_ms, later_ms, whole_ms = [], 0, [], [], []
            for seed in range(3):
                episode = new_episode(EpisodeConfig(condition="Src-Perc", seed=seed))
                shifted = ShiftedPages()
                timed_rewrite(episode, first, shifted)
                ms, swapped = timed_rewrite(episode, second, shifted)
                whole, fresh = timed_rewrite(episode, second)
                swaps += shifted.swapped
                same.append(swapped.to_bytes() == fresh.to_bytes())
                if shifted.swapped:
                    swap_ms.append(ms)
                    # (a later next load: the first one read the page for them all)
                    ms, _ = timed_rewrite(episode, third, shifted)
                    if shifted.swapped == 2:
                        later_ms.append(ms)
                whole_ms.append(whole)
            rows.append(
                f"{page:42} {swaps:2}/3 {'yes' if all(same) else 'NO':>9} "
                f"{statistics.median(swap_ms) if swap_ms else float('nan'):9.1f} "
                f"{statistics.median(later_ms) if later_ms else float('nan'):9.1f} "
                f"{statistics.median(whole_ms):9.1f}"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--app", choices=sorted(APPS), required=True, help="the lab app")
    parser.add_argument("--env", type=Path, required=True, help="the lab app's env file")
    parser.add_argument("--loads", type=int, default=4, help="loads of each page, a second apart")
    args = parser.parse_args()
    env = key_values(args.env.read_text())
    with tempfile.TemporaryDirectory(prefix="bench-next-loads-") as workdir:
        service = ServiceProcess(Path(workdir)).start()
        try:
            rows = served(service, args.app, env, args.loads)
        finally:
            service.stop()
    lines = [
        f"{args.app} pages under Src-Perc, logged in, each load in a new second, in a",
        "service started for the run: how each load was served (the first of each page is",
        "shifted whole)",
        f"{'page':42} {'loads':>5} {'shifted':>8} {'swapped':>8} {'reused':>6}",
        *rows,
        "",
        "offline, three loads a second apart, seeds 0-2: the second swapped / the same bytes",
        "as a whole shift / median CPU ms of the second swapped (it reads the first for every",
        "next load), of the third swapped, and of the second shifted whole",
        f"{'page':42} {'swap':>4} {'identical':>9} {'1st next':>9} {'next ms':>9} {'whole ms':>9}",
        *offline(args.app, env),
    ]
    print("\n".join(lines))  # noqa: T201 - a benchmark prints its table


if __name__ == "__main__":
    main()
