"""The first-load curve: what the `Src-Perc` rewrite costs on pages that differ at every request.

    .venv/bin/python -m bench.first_load [--repeat 5] [--quick]

Real apps put a per-request value in nearly every page (WordPress nonces, Django's CSRF field),
so the shifted-page cache never hits and every navigation is a first load. This bench builds
synthetic pages at 20 KB, 200 KB and 2 MB with 20 to 20,000 interactive elements (links,
buttons, inputs, each with an id, classes and a test hook), every page carrying a fresh token
(a hidden input's value, a query parameter of every link, a script variable) at each load, and
prints for each: the median CPU ms of the whole `Src-Perc` rewrite (`bench.fixtures`'s: parse,
shift, serialize) over `--repeat` loads in one episode, the rewrite under a seed not seen
before (`new seed`: nothing memoized), the median of a bare lxml parse + serialize of the same
page, their ratio (`x parse`: the target is <= 2), and the rewrite's ms per 1,000 interactive
elements and per 100 KB. Then the slopes between the sizes (extra ms per 1,000 elements, per
100 KB): a linear cost keeps them equal, so the ratio of the last two (`slope ratio`) is about
1. And the same pages with every block a child of one parent (`flat`), and with every id
mentioned once (`unique ids`: the hooks name other values), as an app's ids are. `reload ms`:
the next loads of each page in a process that shifted it once (the token fresh at each,
swapped into that shift), its `x parse`, and the share of them that were swapped (100%: none
shifted afresh); `1st next`: the first of those next loads, apart (it reads the page it is
swapped into once for them all). `coins x`: a floor, what the parse, each wrap candidate's
seeded coin (drawn as the shift draws them: in C where it can be, memoized) and the
serialization cost alone, over the bare parse: the share of the target the shift's present
semantics take before deciding anything. Then 12 pages of 200 KB loaded again in turn, as an agent
browses: a next load's median in each round (the first reads each page for its next loads).
Last, the tests' saved WordPress pages first loaded without assets (as the tests shift them)
and with the lab's WordPress's own stylesheets and scripts as their references, as the service
reads an app's (`bench.fixtures.WORDPRESS_ASSETS`, where WordPress is installed): an app's
structural rules are asked of every wrap candidate and every child of its parent.

    .venv/bin/python -m bench.first_load --against TREE [--rounds 9] [--workers 3] [--quick]
                                         [--new-seeds]

times the same first loads with another checkout's code (a worktree of an earlier commit:
`git worktree add /tmp/old REV`), worker processes of each tree asked in turn, one load at a
time, so both see the same machine: the median CPU ms of each, `new/old` (this tree's over the
other's: below 1, this tree is faster), `paired` (the median of each round's new over its old,
asked one after the other: what a shared machine's load moves less), and each one's `x parse`.
A round asks one worker of each tree, the next round the next ones, so that no tree's figure
is one process's: the same code's median moved from 17 to 28 ms between processes started one
after the other on the 200 KB page with 2,000 elements, its parse 3.4-3.8 ms. This tree against
itself (`--against .`) reads 0.85-1.20 by `new/old` and 0.89-1.11 by `paired` on a shared
machine: a difference under a tenth in one run is no finding. The WordPress pages with its
assets are timed too where both trees can (`+wp` rows). With `--new-seeds`, each round's loads
are under a seed no load asked before (the same for both trees): a new episode's first pages,
where no coin, new name or decision is memoized.
"""

from __future__ import annotations

import argparse
import itertools
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

from lxml import etree

from bench.fixtures import (
    WORDPRESS,
    WORDPRESS_ASSETS,
    parse_and_serialize_ms,
    timed_rewrite,
    wordpress_assets,
    wordpress_refs,
)
from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import ShiftedPages
from shifts.perceptual.locators import LocatorParams, _wrap_candidates
from shifts.references import EMPTY
from tests.helpers.fixtures import fixture_pages

TOKEN = b"@@TOKEN@@"  # where each load's fresh value goes
KB = 1024
# (page size, interactive elements): 20 to 20,000 elements where they fit in the size.
CURVE = [
    (20 * KB, 20),
    (20 * KB, 200),
    (200 * KB, 20),
    (200 * KB, 200),
    (200 * KB, 2000),
    (2048 * KB, 20),
    (2048 * KB, 200),
    (2048 * KB, 2000),
    (2048 * KB, 20000),
]
# The same pages with no nesting (`fanout` None): what a parent with thousands of children costs.
FLAT_CURVE = [(20 * KB, 200), (200 * KB, 200)]
# The same pages with every id mentioned once, as an app's ids are (the test hooks name other
# values): each id is then only known to be unmentioned at the page's end.
UNIQUE_CURVE = [(200 * KB, 2000), (2048 * KB, 20000)]
QUICK_CURVE = [(20 * KB, 20), (20 * KB, 200), (200 * KB, 200), (200 * KB, 2000)]
GROUP, END = '<div class="group">', "</div>\n"
FANOUT = 10  # blocks per parent element
IN_TURN = 12  # pages an agent browses in turn (more than the few pages a process once kept)
# Text between the controls, each paragraph with a number and one of ten classes: a page of
# identical blocks would have one seeded coin decide for all of them at once (the coins read a
# text's words, not its numbers: ten coins).
FILLER = "<p class='text t{}'>{}. Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n"
FILLER_BYTES = len(FILLER) + 4  # about, with the numbers


def _filler(i: int) -> str:
    return FILLER.format(i % 10, i)


def _control(i: int, unique_ids: bool = False) -> str:
    """One interactive element, in turn a link (its href carrying the token), a button and an
    input, each with an id, classes and a test hook as app markup has (the hook the id's value,
    or with `unique_ids` another)."""
    kind = "abi"[i % 3]
    hook = f"t{i}" if unique_ids else f"{kind}{i}"
    common = f'id="{kind}{i}" class="ctl ctl-{kind}" data-testid="{hook}"'
    if kind == "a":
        return f'<a {common} href="/item/{i}?_wpnonce=@@TOKEN@@">Item {i}</a>\n'
    if kind == "b":
        return f'<button {common} type="button">Edit {i}</button>\n'
    return f'<input {common} name="f{i}" placeholder="Value {i}">\n'


def token_template(
    size: int, elements: int, fanout: int | None = FANOUT, unique_ids: bool = False
) -> bytes:
    """A page of about `size` bytes with `elements` interactive elements, the text between
    them spread evenly; `TOKEN` marks each place the per-request value goes. The blocks are
    grouped `fanout` to a `<div>`, level above level, as an app's markup nests (None: all of
    them side by side in one parent)."""
    head = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Items</title>'
        '<script>var settings = {"nonce": "@@TOKEN@@"};</script></head>\n<body>'
        '<form id="edit" method="post" action="/items">'
        '<input type="hidden" name="_wpnonce" value="@@TOKEN@@">\n'
    )
    tail = '<button type="submit" class="primary">Save</button></form></body></html>\n'
    controls = [_control(i, unique_ids) for i in range(elements - 1)]
    room = size - len(head) - len(tail) - sum(len(one) for one in controls)
    if fanout:  # the groups' own tags: about one per fanout - 1 blocks
        room -= (len(GROUP) + len(END)) * (size // FILLER_BYTES) // (fanout - 1)
    paragraphs = max(0, room // FILLER_BYTES)
    blocks = []
    written = 0
    for index, control in enumerate(controls, start=1):
        blocks.append(control)
        due = paragraphs * index // max(1, len(controls))
        blocks.extend(_filler(i) for i in range(written, due))
        written = due
    blocks.extend(_filler(i) for i in range(written, paragraphs))
    while fanout and len(blocks) > fanout:
        blocks = [
            GROUP + "".join(blocks[at : at + fanout]) + END for at in range(0, len(blocks), fanout)
        ]
    return (head + "".join(blocks) + tail).encode()


def fresh(template: bytes) -> bytes:
    """The page as one request gets it: a new token (a nonce's 10 hex digits) everywhere."""
    return template.replace(TOKEN, secrets.token_hex(5).encode())


def coins_floor_ms(raw: bytes, seed: int) -> float:
    """The CPU ms of a parse, every wrap candidate's seeded coin (as `_wrap` draws them, the
    page having no protected element: in C where it can, memoized), and a serialization:
    nothing else of the shift."""
    started = time.process_time()
    root = etree.fromstring(raw, etree.HTMLParser())
    body = root.find("body")
    _wrap_candidates(root if body is None else body, seed, set(), {}, LocatorParams().wrap_rate)
    etree.tostring(root.getroottree(), method="html")
    return (time.process_time() - started) * 1000


def measure(
    size: int,
    elements: int,
    repeat: int,
    seed: int,
    fanout: int | None = FANOUT,
    unique_ids: bool = False,
) -> dict[str, float]:
    template = token_template(size, elements, fanout, unique_ids)
    episode = new_episode(EpisodeConfig(condition="Src-Perc", seed=1))
    times = [timed_rewrite(episode, fresh(template))[0] for _ in range(repeat)]
    # The same page's next loads in a process that shifted it once: each with its fresh token,
    # swapped into that shift (proxy.page_shift.ShiftedPages).
    shifted = ShiftedPages()
    timed_rewrite(episode, fresh(template), shifted)
    # (the first of them reads the page it is swapped into once, for every next load)
    first_reload_ms = timed_rewrite(episode, fresh(template), shifted)[0]
    swapped_before = shifted.swapped
    reloads = [timed_rewrite(episode, fresh(template), shifted)[0] for _ in range(repeat)]
    unseen = new_episode(EpisodeConfig(condition="Src-Perc", seed=seed))
    new_seed_ms = timed_rewrite(unseen, fresh(template))[0]
    parse_ms = statistics.median(
        parse_and_serialize_ms(fresh(template), 1) for _ in range(max(repeat, 5))
    )
    shift_ms = statistics.median(times)
    coins_ms = statistics.median(coins_floor_ms(fresh(template), 1) for _ in range(max(repeat, 5)))
    return {
        "kb": size // KB,
        "actual_kb": len(template) / KB,
        "elements": elements,
        "shift_ms": shift_ms,
        "new_seed_ms": new_seed_ms,
        "new_seed_x_parse": new_seed_ms / parse_ms,
        "parse_ms": parse_ms,
        "x_parse": shift_ms / parse_ms,
        "reload_ms": statistics.median(reloads),
        "reload_x_parse": statistics.median(reloads) / parse_ms,
        "first_reload_ms": first_reload_ms,
        "swapped": (shifted.swapped - swapped_before) / repeat,
        "coins_x_parse": coins_ms / parse_ms,
        "ms_per_1000_elements": shift_ms * 1000 / elements,
        "ms_per_100kb": shift_ms * 100 * KB / len(template),
    }


def in_turn(pages: int, size: int, elements: int, rounds: int) -> list[float]:
    """`pages` pages of one site (one URL each), each shifted whole once, then loaded again in
    turn for `rounds` rounds, a fresh token at every load, as an agent browses: the median CPU
    ms of a next load in each round. The first round reads each page for its next loads; the
    later ones cost what one page's next loads do when what was read is kept for them all."""
    templates = [token_template(size, elements + index) for index in range(pages)]
    episode = new_episode(EpisodeConfig(condition="Src-Perc", seed=1))
    shifted = ShiftedPages()

    def load(index: int) -> float:
        url = f"http://app.test/page{index}"
        return timed_rewrite(episode, fresh(templates[index]), shifted, url)[0]

    for index in range(pages):
        load(index)
    return [statistics.median(load(index) for index in range(pages)) for _ in range(rounds)]


def slopes(points: list[dict[str, float]], axis: str, fixed: str, unit: float) -> list[str]:
    """Along one axis (the other held): the extra shift ms per `unit` between neighbouring
    points, and the last slope over the one before (about 1 when the cost is linear)."""
    lines = []
    for value in sorted({point[fixed] for point in points}):
        line = sorted((p for p in points if p[fixed] == value), key=lambda p: p[axis])
        if len(line) < 3:
            continue
        steps = []
        for low, high in zip(line, line[1:], strict=False):
            per_unit = (high["shift_ms"] - low["shift_ms"]) * unit / (high[axis] - low[axis])
            parse = (high["parse_ms"] - low["parse_ms"]) * unit / (high[axis] - low[axis])
            steps.append((low, high, per_unit, parse))
        held = f"{value:.0f} KB" if fixed == "kb" else f"{value:.0f} elements"
        name = "1,000 elements" if axis == "elements" else "100 KB"
        cells = ", ".join(
            f"{low[axis]:.0f}->{high[axis]:.0f}: {per:.2f} ms (parse {parse:.2f})"
            for low, high, per, parse in steps
        )
        # The last two steps, the widest: a small step's difference is within the noise of
        # its big page's time (20 -> 200 elements on a 2 MB page).
        ratio = steps[-1][2] / steps[-2][2] if steps[-2][2] > 0 else float("nan")
        lines.append(f"at {held}, extra ms per {name}: {cells}; slope ratio {ratio:.2f}")
    return lines


def with_wordpress_assets(repeat: int) -> list[str]:
    """The saved pages of WordPress sites, first loaded as the tests shift them (referencing
    nothing but their inline styles and scripts) and with the lab's WordPress's own
    stylesheets and scripts as their references, as the service learns an app's assets
    (`bench.fixtures.WORDPRESS_ASSETS`): the structural rules and names those add are what a
    first load asks of each element in a deployment."""
    refs = wordpress_refs()
    if refs is None:
        return [f"(no WordPress in {WORDPRESS}: its saved pages are not timed with its assets)"]
    lines = [
        f"saved WordPress pages, without assets and with the lab's WordPress's "
        f"({len(WORDPRESS_ASSETS)} stylesheets and scripts, {len(refs.structure)} structural "
        "rules): median CPU ms of a first load, x parse",
        f"{'page':>36}{'parse ms':>10}{'none ms':>9}{'x parse':>9}{'assets ms':>11}{'x parse':>9}",
    ]
    for path in fixture_pages():
        if path.parent.name != "wordpress":
            continue
        raw = path.read_bytes()
        episode = new_episode(EpisodeConfig(condition="Src-Perc", seed=4000))
        times: dict[str, list[float]] = {"none": [], "assets": []}
        for index in range(repeat + 1):  # (the first of each: a warm-up, not counted)
            for name in ("none", "assets") if index % 2 else ("assets", "none"):
                assets = refs if name == "assets" else EMPTY
                times[name].append(timed_rewrite(episode, raw, assets=assets)[0])
        parse = parse_and_serialize_ms(raw, max(repeat, 5))
        none, with_assets = (statistics.median(times[name][1:]) for name in ("none", "assets"))
        lines.append(
            f"{path.name[:36]:>36}{parse:>10.2f}{none:>9.2f}{none / parse:>9.1f}"
            f"{with_assets:>11.2f}{with_assets / parse:>9.1f}"
        )
    return lines


def row(p: dict[str, float]) -> str:
    return (
        f"{p['actual_kb']:>6.0f}{p['elements']:>10.0f}{p['shift_ms']:>10.2f}"
        f"{p['new_seed_ms']:>10.2f}{p['parse_ms']:>10.2f}{p['x_parse']:>9.1f}"
        f"{p['ms_per_1000_elements']:>10.2f}{p['ms_per_100kb']:>10.2f}"
        f"{p['first_reload_ms']:>10.2f}{p['reload_ms']:>10.2f}{p['reload_x_parse']:>9.2f}"
        f"{p['swapped']:>8.0%}"
        f"{p['coins_x_parse']:>9.1f}"
    )


REPO = Path(__file__).resolve().parents[1]
# What a worker runs in its tree: a line `KB ELEMENTS UNIQUE SEED` (or `saved NAME SEED`, a saved
# page of the tests' by its file's name; `assets NAME SEED`, one with the lab's WordPress's
# stylesheets and scripts as its references) in, the CPU ms of that first load (of a bare
# parse + serialize for a negative seed) out; its pages and episodes kept.
WORKER = """
import sys
from bench.first_load import token_template, fresh
from bench.fixtures import timed_rewrite, parse_and_serialize_ms
from proxy.episode import EpisodeConfig, new_episode
from shifts.references import EMPTY
from tests.helpers.fixtures import fixture_pages
templates, episodes, wordpress = {}, {}, None
saved = {path.name: path.read_bytes() for path in fixture_pages()}
for line in sys.stdin:
    assets = EMPTY
    if line.startswith(("saved ", "assets ")):
        kind, name, number = line.split()
        page, seed = saved[name], int(number)
        if kind == "assets":  # (a tree from before them has no `wordpress_refs`)
            from bench.fixtures import wordpress_refs
            wordpress = wordpress or wordpress_refs()
            assets = wordpress
    else:
        kb, elements, unique, seed = map(int, line.split())
        key = (kb, elements, unique)
        if key not in templates:
            templates[key] = token_template(kb * 1024, elements, unique_ids=bool(unique))
        page = fresh(templates[key])
    if seed < 0:
        print(parse_and_serialize_ms(page, 1), flush=True)
        continue
    if seed not in episodes:
        episodes[seed] = new_episode(EpisodeConfig(condition="Src-Perc", seed=seed))
    # (only with assets: a tree from before them times a page without)
    with_assets = {"assets": assets} if assets is not EMPTY else {}
    print(timed_rewrite(episodes[seed], page, **with_assets)[0], flush=True)
"""


class _Worker:
    """A process with a tree's code that times one first load per request."""

    def __init__(self, tree: Path) -> None:
        environment = {**os.environ, "PYTHONPATH": str(tree)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER],
            cwd=tree,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ms(self, page: tuple[int, int, bool] | str, seed: int) -> float:
        """A first load of a synthetic page (KB, elements, unique ids) or a saved one (its
        file's name; `assets NAME`: with the lab's WordPress's assets) under `seed`
        (negative: a bare parse + serialize of it)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if isinstance(page, str):
            saved = page if page.startswith("assets ") else f"saved {page}"
            self.process.stdin.write(f"{saved} {seed}\n")
        else:
            kb, elements, unique = page
            self.process.stdin.write(f"{kb} {elements} {int(unique)} {seed}\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise SystemExit(f"a worker stopped (exit {self.process.wait()})")
        return float(answer)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def _reads_wordpress_assets(tree: Path) -> bool:
    """Whether `tree`'s code times a saved page with the lab's WordPress's assets."""
    return "def wordpress_refs" in (tree / "bench" / "fixtures.py").read_text()


def side_by_side(
    against: Path, rounds: int, quick: bool, processes: int = 3, new_seeds: bool = False
) -> str:
    """The first loads of the curve (and of the pages of unique ids, and of the tests' saved
    pages of real apps) under this tree's code and `against`'s, in turn: each round asks both,
    the first of them alternating, each round the next of each tree's `processes` workers.
    `new_seeds`: each round's loads under a seed no load asked before (the same for both
    trees), as a new episode's first pages are, where nothing is memoized."""
    seeds = itertools.count(10**6)
    points: list[tuple[int, int, bool] | str] = [
        (kb // KB, n, False) for kb, n in (QUICK_CURVE if quick else CURVE)
    ]
    points += [(kb // KB, n, True) for kb, n in (UNIQUE_CURVE[:1] if quick else UNIQUE_CURVE)]
    points += [path.name for path in fixture_pages()][: 2 if quick else None]
    # (The WordPress pages again with the lab's WordPress's assets, where both trees read them.)
    if not quick and wordpress_assets() is not None and _reads_wordpress_assets(against):
        points += [f"assets {path.name}" for path in fixture_pages() if "wordpress" in path.parts]
    workers = {
        "old": [_Worker(against) for _ in range(processes)],
        "new": [_Worker(REPO) for _ in range(processes)],
    }
    lines = [
        "Src-Perc first loads under two trees' code, asked in turn (median CPU ms; new/old: "
        "this tree's over the other's; paired: the median of each round's new over its old, "
        "asked one after the other, which a shared machine's load moves less; least: the same "
        "of each one's fastest load; x parse: over a bare parse + serialize)"
        + (", each round under a seed not seen before" if new_seeds else ""),
        f"{'page':>30}{'old ms':>10}{'new ms':>10}{'new/old':>9}{'paired':>8}{'least':>7}"
        f"{'parse ms':>10}{'old x':>8}{'new x':>8}",
    ]
    try:
        for point in points:
            times: dict[str, list[float]] = {"old": [], "new": []}
            parse = []
            for worker in (*workers["old"], *workers["new"]):
                worker.ms(point, 1)  # (warm: the page, the episode, the coins)
            big = not isinstance(point, str) and point[0] >= 2048
            for index in range(max(3, rounds // 3) if big else rounds):
                seed = next(seeds) if new_seeds else 1
                for name in ("old", "new") if index % 2 else ("new", "old"):
                    times[name].append(workers[name][index % processes].ms(point, seed))
                parse.append(workers["new"][index % processes].ms(point, -1))
            old, new = statistics.median(times["old"]), statistics.median(times["new"])
            parse_ms = statistics.median(parse)
            if isinstance(point, str):
                label = point[:30] if not point.startswith("assets ") else f"+wp {point[7:]}"[:30]
            else:
                kb, elements, unique = point
                label = f"{kb} KB, {elements}" + (" unique ids" if unique else "")
            least = min(times["new"]) / min(times["old"])
            rounds_asked = zip(times["old"], times["new"], strict=True)
            paired = statistics.median(one_new / one_old for one_old, one_new in rounds_asked)
            lines.append(
                f"{label:>30}{old:>10.2f}{new:>10.2f}{new / old:>9.3f}{paired:>8.3f}{least:>7.3f}"
                f"{parse_ms:>10.2f}{old / parse_ms:>8.1f}{new / parse_ms:>8.1f}"
            )
    finally:
        for worker in (*workers["old"], *workers["new"]):
            worker.close()
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5, help="timed loads per page")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small pages, 1 load")
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=9, help="with --against: loads per tree")
    parser.add_argument(
        "--workers", type=int, default=3, help="with --against: worker processes per tree"
    )
    parser.add_argument(
        "--new-seeds",
        action="store_true",
        help="with --against: each round under a seed not seen before (a new episode's loads)",
    )
    args = parser.parse_args()
    if args.against is not None:
        if not (args.against / "bench" / "first_load.py").is_file():
            parser.error(f"--against {args.against}: no bench/first_load.py there")
        if args.workers < 1:
            parser.error("--workers: one or more")
        rounds = 2 if args.quick else args.rounds  # (2: two workers of each tree asked)
        table = side_by_side(args.against, rounds, args.quick, args.workers, args.new_seeds)
        print(table)  # noqa: T201
        return
    curve = QUICK_CURVE if args.quick else CURVE
    repeat = 1 if args.quick else args.repeat
    measure(20 * KB, 20, 1, seed=999)  # warm-up: imports, compiled selectors
    points = [
        measure(size, elements, repeat, seed=1000 + index)
        for index, (size, elements) in enumerate(curve)
    ]
    flat = [
        measure(size, elements, repeat, seed=2000 + index, fanout=None)
        for index, (size, elements) in enumerate(FLAT_CURVE[:1] if args.quick else FLAT_CURVE)
    ]
    unique = [
        measure(size, elements, repeat, seed=3000 + index, unique_ids=True)
        for index, (size, elements) in enumerate(UNIQUE_CURVE[:1] if args.quick else UNIQUE_CURVE)
    ]
    lines = [
        f"Src-Perc first loads, blocks nested {FANOUT} to a parent (a fresh token at every "
        "load): median CPU ms of the rewrite, of a bare lxml parse + serialize, their ratio "
        "(target <= 2)",
        f"{'KB':>6}{'elements':>10}{'shift ms':>10}{'new seed':>10}{'parse ms':>10}"
        f"{'x parse':>9}{'ms/1k el':>10}{'ms/100KB':>10}{'1st next':>10}{'reload ms':>10}"
        f"{'x parse':>9}"
        f"{'swapped':>8}{'coins x':>9}",
    ]
    lines += [row(p) for p in points]
    ratios = [p["x_parse"] for p in points]
    met = sum(ratio <= 2 for ratio in ratios)
    lines.append(
        f"x parse: {min(ratios):.1f}-{max(ratios):.1f} (target <= 2: met on {met} of {len(ratios)})"
    )
    unseen = [p["new_seed_x_parse"] for p in points]
    lines.append(
        f"under a new seed (one load each, nothing memoized, as a new episode's first pages): "
        f"x parse {min(unseen):.1f}-{max(unseen):.1f}"
    )
    again = [p["reload_x_parse"] for p in points]
    lines.append(
        f"reloads (the next loads, fresh token swapped in): x parse {min(again):.2f}-"
        f"{max(again):.2f} (<= 2 on {sum(r <= 2 for r in again)} of {len(again)})"
    )
    floors = [p["coins_x_parse"] for p in points]
    lines.append(
        f"coins x (a floor: parse, each wrap candidate's seeded coin, serialize): x parse "
        f"{min(floors):.1f}-{max(floors):.1f}"
    )
    lines.append("linearity (slopes between sizes; a linear cost has slope ratio ~1):")
    lines += slopes(points, "elements", "kb", 1000)
    lines += slopes(points, "kb", "elements", 100)
    lines.append("flat: the same pages with every block a child of one parent")
    lines += [row(p) for p in flat]
    if len(flat) > 1:
        lines.append(
            f"flat, {flat[0]['kb']:.0f} -> {flat[-1]['kb']:.0f} KB: "
            f"{flat[-1]['actual_kb'] / flat[0]['actual_kb']:.1f}x the bytes, "
            f"{flat[-1]['shift_ms'] / flat[0]['shift_ms']:.1f}x the rewrite's time "
            f"(parse {flat[-1]['parse_ms'] / flat[0]['parse_ms']:.1f}x)"
        )
    lines.append("unique ids: the same pages with every id mentioned once, as an app's ids are")
    lines += [row(p) for p in unique]
    pages, (size, elements) = (4, (20 * KB, 200)) if args.quick else (IN_TURN, (200 * KB, 200))
    rounds = in_turn(pages, size, elements, 3)
    lines.append(
        f"{pages} pages of {size // KB} KB loaded again in turn (an agent browsing), a next "
        f"load's median ms in each round: {', '.join(f'{one:.2f}' for one in rounds)} (the first "
        "round reads each page for its next loads)"
    )
    lines += with_wordpress_assets(1 if args.quick else repeat)
    print("\n".join(lines))  # noqa: T201 - a benchmark prints its table


if __name__ == "__main__":
    main()
