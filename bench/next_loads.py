"""How a real app's next loads are served: swapped into the last shift, or shifted whole.

    .venv/bin/python -m bench.next_loads --wordpress-env /tmp/wplab/env [--loads 4]

A page with per-request values (a nonce, a CSRF field, the request's time) is shifted whole at
its first load under a setting; its next loads are that shift with the new values swapped in
(`shifts.volatile`) when that is all that tells them apart, at the cost of a comparison, and
shifted whole again otherwise. On the lab's WordPress (`deploy/wordpress/wordpress.sh up --dir
/tmp/wplab`), logged in as its admin, through a service process started for the run, under
`Src-Perc`: each admin page loaded `--loads` times, each load in a new second (the admin writes
the request's time into every page), and how the service served each (its metrics: shifted
whole, swapped, or the same bytes again). Then, offline, for each page: two loads a second
apart, the second swapped into the first's shift and shifted whole (seeds 0-2): whether the
bytes are the same, and the CPU ms of each. Run it a minute or more after the lab's install:
in its first minute, the themes page counts the seconds its update check is overdue.
"""

from __future__ import annotations

import argparse
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
from tests.helpers.processes import ServiceProcess

PAGES = [
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
COUNTERS = ("shifted", "swapped", "reused")


def admin_session(env: dict[str, str]) -> dict[str, str]:
    return session_cookies(env["LAB_URL"], env["LAB_USER"], env["LAB_PASSWORD"])


def next_second() -> None:
    """Until the wall clock's second changes: the admin's pages carry the request's time."""
    now = int(time.time())
    while int(time.time()) == now:
        time.sleep(0.02)


def served(service: ServiceProcess, env: dict[str, str], loads: int) -> list[str]:
    rows = []
    episode = service.create_episode(condition="Src-Perc", seed=0)
    with httpx.Client(
        proxy=str(episode["proxy_url"]), cookies=admin_session(env), timeout=120
    ) as client:
        for page in PAGES:
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


def offline(env: dict[str, str]) -> list[str]:
    rows = []
    with httpx.Client(cookies=admin_session(env), timeout=120, trust_env=False) as client:
        for page in PAGES:
            first = client.get(env["LAB_URL"] + page).content
            next_second()
            second = client.get(env["LAB_URL"] + page).content
            same, swaps, swap_ms, whole_ms = [], 0, [], []
            for seed in range(3):
                episode = new_episode(EpisodeConfig(condition="Src-Perc", seed=seed))
                pages = ShiftedPages()
                timed_rewrite(episode, first, pages)
                ms, swapped = timed_rewrite(episode, second, pages)
                whole, fresh = timed_rewrite(episode, second)
                swaps += pages.swapped
                same.append(swapped.to_bytes() == fresh.to_bytes())
                if pages.swapped:
                    swap_ms.append(ms)
                whole_ms.append(whole)
            rows.append(
                f"{page:42} {swaps:2}/3 {'yes' if all(same) else 'NO':>9} "
                f"{statistics.median(swap_ms) if swap_ms else float('nan'):9.1f} "
                f"{statistics.median(whole_ms):9.1f}"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wordpress-env", type=Path, required=True, help="the lab's env file")
    parser.add_argument("--loads", type=int, default=4, help="loads of each page, a second apart")
    args = parser.parse_args()
    env = key_values(args.wordpress_env.read_text())
    with tempfile.TemporaryDirectory(prefix="bench-next-loads-") as workdir:
        service = ServiceProcess(Path(workdir)).start()
        try:
            rows = served(service, env, args.loads)
        finally:
            service.stop()
    lines = [
        "WordPress admin pages under Src-Perc, logged in, each load in a new second, in a",
        "service started for the run: how each load was served (the first of each page is",
        "shifted whole)",
        f"{'page':42} {'loads':>5} {'shifted':>8} {'swapped':>8} {'reused':>6}",
        *rows,
        "",
        "offline, two loads a second apart, seeds 0-2: swapped / the same bytes as a whole",
        "shift / median CPU ms swapped and whole",
        f"{'page':42} {'swap':>4} {'identical':>9} {'swap ms':>9} {'whole ms':>9}",
        *offline(env),
    ]
    print("\n".join(lines))  # noqa: T201 - a benchmark prints its table


if __name__ == "__main__":
    main()
