"""What reading an app's stylesheets and scripts costs: the CPU time of `css_refs` and
`js_refs` (what the service does to every asset it learns, `proxy/knowledge`) per MB.

    .venv/bin/python -m bench.references [DIR ...] [--against TREE] [--rounds 3] [--json F]
                                         [--quick]

DIR: where the assets are (every `.css` and `.js` under it, largest first, up to `--files`
of each kind); by default the WordPress the lab runs (Debian's /usr/share/wordpress) when it is
installed, else this repository's own. A process that has not seen an app reads each of its
assets once, on the first page that names it: on the lab's WordPress, a few MB for the admin's
editor alone. `--against TREE` reads the same files with another checkout's code (a worktree
of an earlier commit), in rounds that alternate with this one's, and prints `x`: its CPU per MB
over this tree's (above 1: this tree reads faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORDPRESS = Path("/usr/share/wordpress")
KINDS = ("css", "js")


def assets(directories: list[Path], per_kind: int) -> dict[str, list[Path]]:
    """The largest `per_kind` stylesheets and scripts under the directories (not in a hidden
    directory, a virtualenv's or a cache's, nor in node_modules: not the app's own)."""
    found: dict[str, set[Path]] = {kind: set() for kind in KINDS}
    for directory in directories:
        for root, subdirectories, names in os.walk(directory):
            subdirectories[:] = [
                name
                for name in subdirectories
                if not name.startswith(".") and name != "node_modules"
            ]
            for name in names:
                kind = name.rsplit(".", 1)[-1]
                if kind in found:
                    found[kind].add(Path(root, name))
    return {
        kind: sorted(paths, key=lambda p: (-p.stat().st_size, str(p)))[:per_kind]
        for kind, paths in found.items()
    }


# Run in a fresh interpreter in the tree being measured (its `shifts`, its imports): the
# tree may predate this module. Reads {kind: [path, ...]} on stdin; prints, per kind, the CPU
# seconds to read every file once and the megabytes of text.
_READ = """
import json, sys, time
from shifts.references.css import css_refs
from shifts.references.js import js_refs
readers = {"css": css_refs, "js": js_refs}
result = {}
for kind, paths in json.loads(sys.stdin.read()).items():
    texts = [open(path, encoding="utf-8", errors="replace").read() for path in paths]
    started = time.process_time()
    for text in texts:
        readers[kind](text)
    cpu = time.process_time() - started
    result[kind] = {"cpu_s": cpu, "mb": sum(map(len, texts)) / 1e6, "files": len(texts)}
print(json.dumps(result))
"""


def read_in(tree: Path, files: dict[str, list[Path]]) -> dict[str, dict[str, float]]:
    """Every file read once with `tree`'s code: each kind's CPU seconds, MB and files."""
    listing = json.dumps({kind: [str(path) for path in paths] for kind, paths in files.items()})
    done = subprocess.run(
        [sys.executable, "-c", _READ],
        input=listing,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
    )
    if done.returncode != 0:
        raise SystemExit(f"reading with {tree}'s code failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    parser.add_argument("--files", type=int, default=200, help="of each kind, largest first")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: this repo's own assets, one round"
    )
    args = parser.parse_args()
    if args.quick:
        directories, args.rounds, args.files = [REPO], 1, 20
    else:
        directories = args.dirs or ([WORDPRESS] if WORDPRESS.is_dir() else [REPO])
    for directory in directories:
        if not directory.is_dir():
            parser.error(f"{directory} is not a directory")
    if args.against is not None and not (args.against / "shifts").is_dir():
        parser.error(f"--against {args.against}: no shifts/ there (not a checkout)")
    files = assets(directories, args.files)
    trees = {"this tree": REPO, **({"against": args.against} if args.against else {})}
    rounds: dict[str, list[dict[str, dict[str, float]]]] = {name: [] for name in trees}
    for _ in range(args.rounds):  # alternating, so the machine's noise hits both alike
        for name, tree in trees.items():
            rounds[name].append(read_in(tree, files))
    table = {
        name: {
            kind: {
                "files": runs[0][kind]["files"],
                "mb": round(runs[0][kind]["mb"], 3),
                "cpu_s_per_mb": round(
                    statistics.median(run[kind]["cpu_s"] for run in runs)
                    / max(runs[0][kind]["mb"], 1e-9),
                    4,
                ),
            }
            for kind in KINDS
        }
        for name, runs in rounds.items()
    }
    lines = [
        f"reading stylesheets and scripts under {', '.join(map(str, directories))}: CPU s per MB "
        f"(median of {args.rounds} rounds)"
        + ("; x: against's over this tree's" if args.against else ""),
        f"{'tree':<12}{'kind':<6}{'files':>6}{'MB':>8}{'s / MB':>9}{'x':>7}",
    ]
    for name, kinds in table.items():
        for kind, row in kinds.items():
            against = table.get("against", {}).get(kind, {}).get("cpu_s_per_mb")
            ratio = (
                f"{against / row['cpu_s_per_mb']:>7.2f}"
                if name != "against" and against and row["cpu_s_per_mb"]
                else f"{'-':>7}"
            )
            lines.append(
                f"{name:<12}{kind:<6}{row['files']:>6}{row['mb']:>8.2f}{row['cpu_s_per_mb']:>9.3f}"
                + ratio
            )
    print("\n".join(lines))  # noqa: T201 - a benchmark prints its table
    if args.json:
        args.json.write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
