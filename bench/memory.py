"""Peak memory under concurrency, on a page that differs at every request.

    .venv/bin/python -m bench.memory [--seconds 20] [--connections 32] [--size-kb 1024]
                                     [--rows mitmproxy,bs4 peer,ss Src-Perc,ss no collector]

A 1 MB page with 3,000 interactive elements and a fresh token in every response
(bench.first_load's token page, as a real app's nonces or CSRF fields make it) through plain
mitmproxy, the naive BeautifulSoup peer, skillshift under `Src-Perc` (embedded store), and the
same with no full garbage collections of its own (`--collect-after-bytes 0`: finished
exchanges wait for Python's collector, proxy/collector.py), each a process started for its row,
each driven by `--connections` clients on persistent connections for `--seconds`. Prints each
process's peak resident memory (VmHWM: the high-water mark since it started), its resident
memory before the load, requests per second, the peak as a ratio to plain mitmproxy's, and for
skillshift the full collections it ran, their mean pause and their share of its CPU time. The
target of "first loads at the speed of a parse": skillshift's peak <= 300 MB at c=32 on the
1 MB page. The service's learning Chromium is a process of its own and is not counted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.episodes import say
from bench.first_load import fresh, token_template
from bench.throughput import REPO, Row, drive, memory_mb, start_mitmdump
from tests.helpers.processes import ServiceProcess, scratch_directory
from tests.helpers.upstream import UpstreamServer

TARGET_MB = 300
SERVICE_ROWS = {"ss Src-Perc": (), "ss no collector": ("--collect-after-bytes", "0")}
ROWS = ("mitmproxy", "bs4 peer", *SERVICE_ROWS)


def measured(row: Row, url: str, connections: int, seconds: int) -> dict[str, Any]:
    assert row.pid is not None
    drive(row, url, 1, 0, "document")  # one request first: the service learns the page
    before = memory_mb(row.pid, "VmRSS")
    load = drive(row, url, connections, seconds, "document")
    return {
        "rss_before_mb": round(before, 1),
        "peak_rss_mb": round(memory_mb(row.pid), 1),
        "rps": round(load["rps"], 2),
        "requests": load["requests"],
        "failures": load["failures"],
        "p95_ms": round(load["p95_ms"], 1),
        "cpu_ms": load["cpu_ms_per_request"] * load["requests"],
    }


def collections(service: ServiceProcess) -> tuple[int, float]:
    """The full collections the service ran, and the milliseconds of CPU they took."""
    return (
        service.counter("full_collections_total"),
        service.counter("full_collection_us_total") / 1000,
    )


def service_row(name: str, workdir: Path, url: str, args: argparse.Namespace) -> dict[str, Any]:
    (workdir / name).mkdir()
    service = ServiceProcess(workdir / name, *SERVICE_ROWS[name]).start()
    try:
        assert service.process is not None
        episode = service.create_episode(condition="Src-Perc", seed=1)
        header = "X-SkillShift-Episode: " + str(
            episode["header"]["X-SkillShift-Episode"]  # type: ignore[index]
        )
        row = Row(name, service.proxy_port, service.process.pid, header)
        count_before, ms_before = collections(service)
        found = measured(row, url, args.connections, args.seconds)
        count, ms = collections(service)
        found["collections"] = count - count_before
        found["collection_ms"] = round(ms - ms_before, 1)
        return found
    finally:
        service.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--size-kb", type=int, default=1024)
    parser.add_argument("--elements", type=int, default=3000)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--rows", default=",".join(ROWS), help=f"comma-separated, of: {', '.join(ROWS)}"
    )
    args = parser.parse_args()
    rows = args.rows.split(",")
    if unknown := [name for name in rows if name not in ROWS]:
        parser.error(f"unknown rows {unknown}; rows are {', '.join(ROWS)}")

    template = token_template(args.size_kb * 1024, args.elements)
    upstream = UpstreamServer().start()
    upstream.generated["/token-page"] = ("text/html; charset=utf-8", lambda: fresh(template))
    url = f"{upstream.origin}/token-page"
    workdir = scratch_directory("bench-memory-")
    results: dict[str, dict[str, Any]] = {}
    try:
        for name in rows:
            if name in SERVICE_ROWS:
                results[name] = service_row(name, workdir, url, args)
                continue
            script = ["-s", str(REPO / "bench" / "peer_bs4.py")] if name == "bs4 peer" else []
            port, process = start_mitmdump(*script)
            try:
                results[name] = measured(
                    Row(name, port, process.pid), url, args.connections, args.seconds
                )
            finally:
                process.terminate()
                process.wait(timeout=10)
    finally:
        upstream.stop()
    report(results, args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def report(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    say(
        f"peak RSS at c={args.connections} for {args.seconds} s, a {args.size_kb} KB page with "
        f"{args.elements} interactive elements and a fresh token at every request"
    )
    say(
        f"{'row':<16}{'RSS before':>12}{'peak RSS':>10}{'x mitmproxy':>13}{'req/s':>8}"
        f"{'requests':>10}{'failed':>8}{'p95 ms':>9}{'full GCs':>10}{'ms each':>9}{'% CPU':>7}"
    )
    base = results["mitmproxy"]["peak_rss_mb"] if "mitmproxy" in results else float("nan")
    for name, found in results.items():
        line = (
            f"{name:<16}{found['rss_before_mb']:>10.1f}MB{found['peak_rss_mb']:>8.1f}MB"
            f"{found['peak_rss_mb'] / base:>12.2f}x{found['rps']:>8.2f}{found['requests']:>10}"
            f"{found['failures']:>8}{found['p95_ms']:>9.1f}"
        )
        if "collections" in found:
            each = found["collection_ms"] / max(1, found["collections"])
            share = 100 * found["collection_ms"] / max(found["cpu_ms"], 1e-9)
            line += f"{found['collections']:>10}{each:>9.1f}{share:>7.1f}"
        say(line)
    if "ss Src-Perc" in results:
        peak = results["ss Src-Perc"]["peak_rss_mb"]
        verdict = "met" if peak <= TARGET_MB else "not met"
        say(f"target: skillshift's peak <= {TARGET_MB} MB: {peak:.1f} MB, {verdict}")


if __name__ == "__main__":
    main()
