"""The benchmarks run (in seconds, to keep them from rotting). No timing is asserted here:
numbers come from full runs, side by side, reported in bench/results.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_module(module: str, *args: str) -> str:
    """`python -m module args...` from the repository; its output, once it exits cleanly."""
    result = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def run_bench(module: str, tmp_path: Path, *args: str) -> tuple[str, dict]:
    out = tmp_path / f"{module}.json"
    text = run_module(module, "--quick", "--json", str(out), *args)
    return text, json.loads(out.read_text())


def test_throughput_bench_runs(tmp_path: Path) -> None:
    text, rows = run_bench("bench.throughput", tmp_path)
    assert "300KB:" in text and "assets:" in text and "FAILURES" not in text
    assert {"direct", "mitmproxy", "ss Src", "ss Src-Perc"} <= set(rows)
    assert rows["ss Src-Perc"]["rewrite_ms"]["300KB"] > 0
    # The page with a fresh token at every request: its own rows, every request answered.
    token = next(line for line in text.splitlines() if line.startswith("token "))
    page = token.split(":")[0]
    assert "x bs4" in text and "mitmproxy token" in text and "ss Src-Perc token" in text
    for name in ("mitmproxy token", "ss Src-Perc token"):
        measured = rows[name][f"{page}@8"]
        assert measured["requests"] >= 8 and measured["failures"] == 0, measured
        assert measured["cpu_ms_per_request"] > 0
    assert rows["ss Src-Perc token"]["rewrite_ms"][page] > 0


def test_episodes_bench_runs_and_loses_nothing(tmp_path: Path) -> None:
    text, result = run_bench("bench.episodes", tmp_path)
    assert "concurrent episodes" in text and "scaling" in text and "for one episode" in text
    assert result["one_episode"]["first_document_ms"]["n"] == 6  # each condition once
    audit = result["episodes"]["audit"]
    assert audit["navigations"] > 0
    assert not {key: value for key, value in audit.items() if key != "navigations" and value}


def test_recording_bench_runs(tmp_path: Path) -> None:
    text, rows = run_bench("bench.recording", tmp_path)
    assert "entry B/nav" in text
    assert rows["Src-Perc recording"]["entry_bytes"] > 0


def test_fixtures_bench_runs() -> None:
    text = run_module("bench.fixtures", "--seeds", "1", "--repeat", "1")
    perceptual = [line.split() for line in text.splitlines() if " Src-Perc " in line]
    assert "x parse" in text and "x bs4" in text and len(perceptual) >= 9
    for row in perceptual:  # page, KB, condition, ms, x parse, x bs4, what changed...
        assert float(row[3]) > 0 and float(row[4]) > 0 and float(row[5]) > 0, row


def test_alternate_bench_runs_its_rows_in_turn() -> None:
    # (two rounds of a second each: the table's shape; no timing is asserted)
    # (and a row on a Redis store: a second service, on a redis-server of the run's own)
    names = ["mitmproxy", "Src-Exec/random", "Src@redis"]
    text = run_module(
        "bench.alternate", "--rows", ", ".join(names), "--rounds", "2", "--seconds", "1"
    )
    rows = {line.split()[0]: line.split() for line in text.splitlines()[1:]}
    assert list(rows) == names, text
    assert float(rows["mitmproxy"][-1]) == 1.0  # (the first row's x is its own)
    for name in names[1:]:
        assert rows[name][-3] == "pairs" and len(rows[name]) == 10, text
        assert all(float(cell) > 0 for cell in rows[name][1:3]), text


def test_alternate_bench_refuses_one_row_and_a_store_it_has_not() -> None:
    for rows, said in (("Src", "two rows or more"), ("Src,Src@memcached", "@redis")):
        result = subprocess.run(
            [sys.executable, "-m", "bench.alternate", "--rows", rows],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 2 and said in result.stderr, result.stderr


def test_first_load_bench_runs_side_by_side_with_another_tree() -> None:
    # (this tree against itself: the table's shape; no timing is asserted)
    text = run_module("bench.first_load", "--against", str(REPO), "--quick", "--workers", "2")
    rows = [line.split() for line in text.splitlines()[2:]]
    # the quick curve, one page of ids and two saved pages of real apps
    assert "new/old" in text and len(rows) == 7, text
    assert sum(row[1] != "KB," for row in rows) == 2, text  # (a saved page's row: its name)
    for row in rows:  # ..., old ms, new ms, new/old, paired, least, parse ms, old x, new x
        assert all(float(cell) > 0 for cell in row[-8:]), row
    # (each round under a seed not seen before: the same table)
    text = run_module(
        "bench.first_load", "--against", str(REPO), "--quick", "--workers", "2", "--new-seeds"
    )
    assert "each round under a seed not seen before" in text
    assert len([line for line in text.splitlines()[2:] if line.split()]) == 7, text


def test_first_load_bench_runs() -> None:
    text = run_module("bench.first_load", "--quick")
    rows = [line.split() for line in text.splitlines() if line[:1] == " " and line.split()]
    assert "x parse" in text and "ms/1k el" in text and "flat:" in text and "unique ids:" in text
    points = [row for row in rows if row[0].isdigit()]
    assert len(points) >= 6  # the quick curve, one flat page and one of unique ids
    # KB, elements, shift ms, new seed, parse ms, x parse, ms/1k el, ms/100KB, the first next
    # load's ms, the next loads' ms, its x parse, the share swapped, the coins' floor
    for row in points:
        assert len(row) == 13 and all(float(cell.rstrip("%")) > 0 for cell in row), row
    assert "reloads (the next loads" in text and "coins x (a floor" in text
    assert "under a new seed (one load each" in text
    assert "loaded again in turn (an agent browsing)" in text
    # the saved WordPress pages with the lab's WordPress's assets (where it is installed)
    if "no WordPress in" not in text:
        saved = [line.split() for line in text.splitlines() if ".html " in line]
        assert "saved WordPress pages, without assets and with" in text and len(saved) == 4
        # page, parse ms, none ms, its x parse, assets ms, its x parse
        assert all(len(row) == 6 and all(float(cell) > 0 for cell in row[1:]) for row in saved)


def test_memory_bench_runs(tmp_path: Path) -> None:
    out = tmp_path / "memory.json"
    small = ("--seconds", "1", "--connections", "2", "--size-kb", "20", "--elements", "60")
    text = run_module("bench.memory", *small, "--json", str(out))
    rows = json.loads(out.read_text())
    assert set(rows) == {"mitmproxy", "bs4 peer", "ss Src-Perc", "ss no collector"}
    assert all(row["failures"] == 0 and row["peak_rss_mb"] > 0 for row in rows.values())
    assert "target: skillshift's peak <= 300 MB" in text and "full GCs" in text
    assert rows["ss no collector"]["collections"] == 0  # (--collect-after-bytes 0)


def test_store_bench_runs(tmp_path: Path) -> None:
    text, rows = run_bench("bench.store", tmp_path)
    assert set(rows) == {"redis-py", "pipelined"} and "8 at once" in text
    assert all(cpu > 0 for row in rows.values() for cpu in row.values())


def test_references_bench_runs_against_another_tree(tmp_path: Path) -> None:
    # This checkout against itself: the same files read by the same code, each side's rows.
    text, table = run_bench("bench.references", tmp_path, "--against", str(REPO))
    assert set(table) == {"this tree", "against"} and "x: against's over this tree's" in text
    assert all(
        row["files"] > 0 and row["cpu_s_per_mb"] > 0 for t in table.values() for row in t.values()
    )
