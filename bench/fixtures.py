"""What each shift changes on the real saved pages, and how long the rewrite takes.

    .venv/bin/python -m bench.fixtures [--seeds 10] [--repeat 5]

For every fixture page and condition: the mean number of elements each shift changed over the
seeds, the median CPU time of the whole rewrite (parse, shift, serialize) per page (CPU time:
it holds on a shared machine where wall time does not), and that time
as a multiple of a bare lxml parse + serialize of the same page (`x parse`: what no rewrite
built on that parser can go below), and how many times faster than the BeautifulSoup peer's
work on the page it is (`x bs4`: its time over the rewrite's). Saved pages
come without their stylesheets and scripts: they are taken to reference nothing beyond the
page's inline ones (as in the tests), the most work locator drift can do on a page.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from pathlib import Path

from lxml import etree

from proxy.collector import held_off
from proxy.episode import Episode, EpisodeConfig, new_episode
from proxy.page_shift import ShiftedPages, shift_offline
from shifts.conditions import CONDITIONS
from shifts.document import HtmlDocument
from shifts.references import EMPTY, AssetRefs, css_refs, js_refs, merge_refs
from tests.helpers.fixtures import fixture_pages

WORDPRESS = Path("/usr/share/wordpress")  # (where the lab's WordPress is installed)
# What a page of the lab's WordPress loads by default, from its own install: the blocks' and
# its theme's styles, the icons and admin bar a signed-in user's pages add, and jQuery with
# what comes with it. (The saved pages' own assets are elsewhere: these stand for them.)
WORDPRESS_ASSETS = (
    "wp-includes/css/dist/block-library/style.min.css",
    "wp-includes/css/dist/block-library/theme.min.css",
    "wp-includes/css/dashicons.min.css",
    "wp-includes/css/admin-bar.min.css",
    "wp-content/themes/twentytwentyone/style.css",
    "wp-includes/js/jquery/jquery.min.js",
    "wp-includes/js/jquery/jquery-migrate.min.js",
    "wp-includes/js/comment-reply.min.js",
    "wp-includes/js/admin-bar.min.js",
    "wp-content/themes/twentytwentyone/assets/js/primary-navigation.js",
)

NOT_COUNTS = ("interactive", "locators_changed", "hue_angle")  # sizes and values, not changes


def counted(notes: dict[str, object]) -> dict[str, int]:
    """Shift -> how many elements (labels, ids, hooks, lists, rules...) it changed."""
    return {
        name: sum(
            v
            for key, v in note.items()
            if isinstance(v, int) and not isinstance(v, bool) and key not in NOT_COUNTS
        )
        for name, note in notes.items()
        if isinstance(note, dict)
    }


def wordpress_assets() -> list[Path] | None:
    """The lab's WordPress's files of `WORDPRESS_ASSETS`; None where it is not installed (or
    is another version, without one of them)."""
    paths = [WORDPRESS / name for name in WORDPRESS_ASSETS]
    return paths if all(path.is_file() for path in paths) else None


def wordpress_refs() -> AssetRefs | None:
    """What the lab's WordPress's own stylesheets and scripts reference (`wordpress_assets`),
    as the service learns them; None where it is not installed."""
    paths = wordpress_assets()
    if paths is None:
        return None
    texts = [(path, path.read_text(encoding="utf-8", errors="replace")) for path in paths]
    return merge_refs(
        css_refs(text) if path.suffix == ".css" else js_refs(text) for path, text in texts
    )


def timed_rewrite(
    episode: Episode,
    raw: bytes,
    shifted: ShiftedPages | None = None,
    url: str = "http://app.test/",
    assets: AssetRefs = EMPTY,
) -> tuple[float, HtmlDocument]:
    """The whole rewrite of a page as its first navigation in the episode (parse, shift,
    serialize; the page referencing no assets beyond its own, or `assets`), and its CPU time
    in ms.
    `shifted`: the pages a serving process shifted before (None: none, a first load). Either
    way through the shifted-page cache, as the service shifts a page: a first load also
    keeps what it made for the next (`ShiftedPages`), and that is part of its cost. Python's
    automatic collections are held off meanwhile, as the service holds them by default
    (`proxy.collector.held_off`)."""
    started = time.process_time()
    pages = ShiftedPages() if shifted is None else shifted
    with held_off():
        _, doc = shift_offline(episode, url, raw, assets=assets, shifted=pages)
        doc.to_bytes()
    return (time.process_time() - started) * 1000, doc


def parse_and_serialize_ms(raw: bytes, repeat: int) -> float:
    """The median CPU time of a bare lxml HTML parse and serialization of the page."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        root = etree.fromstring(raw, etree.HTMLParser())
        etree.tostring(root.getroottree(), method="html")
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def bs4_peer_ms(raw: bytes, repeat: int) -> float:
    """The median CPU time of what the BeautifulSoup peer (`bench/peer_bs4.py`) does to a
    page: parse it with lxml into a soup, serialize it (its relabel and popup cost next to
    nothing)."""
    from bs4 import BeautifulSoup

    times = []
    for _ in range(repeat):
        started = time.process_time()
        str(BeautifulSoup(raw.decode("utf-8", "replace"), "lxml"))
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per page and condition")
    args = parser.parse_args()
    rows = []
    for page in fixture_pages():
        raw = page.read_bytes()
        bare_ms = parse_and_serialize_ms(raw, max(args.repeat, 5))
        peer_ms = bs4_peer_ms(raw, 3)
        for condition in CONDITIONS:
            changes: dict[str, list[int]] = defaultdict(list)
            times = []
            for seed in range(args.seeds):
                episode = new_episode(EpisodeConfig(condition=condition, seed=seed))
                for _ in range(args.repeat if seed == 0 else 1):
                    ms, doc = timed_rewrite(episode, raw)
                    times.append(ms)
                for name, count in counted(doc.notes).items():
                    changes[name].append(count)
            mean = {name: statistics.fmean(values) for name, values in sorted(changes.items())}
            rows.append(
                (
                    f"{page.parent.name}/{page.name[:28]}",
                    len(raw) // 1024,
                    condition,
                    statistics.median(times),
                    statistics.median(times) / bare_ms,
                    peer_ms / statistics.median(times),
                    mean,
                )
            )
    lines = [
        f"{'page':<40}{'KB':>5} {'condition':<9}{'ms':>8}{'x parse':>8}{'x bs4':>7}"
        "  mean elements changed per shift"
    ]
    for name, size, condition, ms, ratio, peer, mean in rows:
        described = ", ".join(f"{shift} {value:.1f}" for shift, value in mean.items()) or "-"
        lines.append(
            f"{name:<40}{size:>5} {condition:<9}{ms:>8.2f}{ratio:>8.2f}{peer:>7.1f}  {described}"
        )
    print("\n".join(lines))  # noqa: T201 - a benchmark prints its table


if __name__ == "__main__":
    main()
