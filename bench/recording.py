"""What recording costs: the same pages through a service without and one with --record-dir,
side by side in one run.

    .venv/bin/python -m bench.recording [--requests 200]

Rows alternate request by request (so machine noise hits them alike). For each row: median and
p95 latency (new connection per request, connect to last body byte), CPU milliseconds per
request of its service process, and, for the recording service, the bytes its directory grew
by per navigation (HAR entry lines, and bodies: stored once by hash, so a page that does not
change between loads costs its entry only). Ratios are to the same condition without recording.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from bench.latency import NAV, fetch, percentile
from bench.throughput import cpu_seconds
from tests.helpers.processes import ServiceProcess, scratch_directory, start_all
from tests.helpers.upstream import PAGE, UpstreamServer

CONDITIONS = ("Src", "Src-Exec", "Src-Perc")


def recorded_bytes(record_dir: Path, episode_id: str) -> tuple[int, int]:
    """An episode's HAR entry bytes, and the bytes of the distinct bodies its entries name."""
    entries = record_dir / "episodes" / episode_id / "entries.jsonl"
    digests = {json.loads(line)["_skillshift"]["body"] for line in entries.read_text().splitlines()}
    bodies = sum((record_dir / "bodies" / d[:2] / d).stat().st_size for d in digests)
    return entries.stat().st_size, bodies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 requests per row")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.quick:
        args.requests = 3
    upstream = UpstreamServer().start()
    workdir = scratch_directory("bench-recording-")
    record_dir = workdir / "recordings"
    host = f"127.0.0.1:{upstream.port}"
    url = f"{upstream.origin}/page.html"
    # One service process per row, so each row's CPU time is its process's alone.
    rows: dict[tuple[str, bool], tuple[ServiceProcess, str, str]] = {}
    services: dict[tuple[str, bool], ServiceProcess] = {}
    for condition in CONDITIONS:
        for recorded in (False, True):
            directory = workdir / f"{condition}-{recorded}"
            directory.mkdir()
            extra = ("--record-dir", str(record_dir)) if recorded else ()
            services[(condition, recorded)] = ServiceProcess(directory, *extra)
    try:
        start_all(list(services.values()))  # side by side: their start-up is not measured
        for (condition, recorded), service in services.items():
            episode = service.create_episode(condition=condition, regime="multiple")
            header = f"X-SkillShift-Episode: {episode['id']}:{episode['token']}\r\n"
            rows[(condition, recorded)] = (service, header, str(episode["id"]))
        for service, header, _ in rows.values():  # warm-up (and the asset index)
            fetch(service.proxy_port, url, host, NAV + header)
        timings: dict[tuple[str, bool], list[float]] = {row: [] for row in rows}
        cpu_before = {row: cpu_seconds(pid_of(service)) for row, (service, _, _) in rows.items()}
        for _ in range(args.requests):
            for row, (service, header, _) in rows.items():
                timings[row].append(fetch(service.proxy_port, url, host, NAV + header))
        cpu = {
            row: (cpu_seconds(pid_of(service)) - cpu_before[row]) / args.requests
            for row, (service, _, _) in rows.items()
        }
        sizes = {
            condition: recorded_bytes(record_dir, rows[(condition, True)][2])
            for condition in CONDITIONS
        }
    finally:
        for service in services.values():
            if service.process is not None and service.process.poll() is None:
                service.stop()
        upstream.stop()

    loads = args.requests + 1  # the warm-up request is recorded too
    lines = [
        f"page {len(PAGE) // 1024} KB, {args.requests} requests per row",
        "",
        f"{'row':<22}{'median ms':>10}{'p95 ms':>9}{'cpu ms/req':>12}{'x off':>7}"
        f"{'entry B/nav':>13}{'bodies B/nav':>14}",
    ]
    for (condition, recorded), values in timings.items():
        entry, bodies = sizes[condition]
        lines.append(
            f"{condition + (' recording' if recorded else ''):<22}"
            f"{statistics.median(values) * 1000:>10.2f}"
            f"{percentile(values, 0.95) * 1000:>9.2f}"
            f"{cpu[(condition, recorded)] * 1000:>12.2f}"
            f"{ratio(cpu[(condition, recorded)], cpu[(condition, False)]):>7}"
            + (f"{entry / loads:>13,.0f}{bodies / loads:>14,.0f}" if recorded else "")
        )
    lines += ["", "bodies are stored once by hash: a page the same at every load costs its entry"]
    print("\n".join(lines))  # noqa: T201 - a benchmark prints its table
    if args.json:
        results = {
            f"{condition}{' recording' if recorded else ''}": {
                "median_ms": statistics.median(values) * 1000,
                "cpu_ms_per_request": cpu[(condition, recorded)] * 1000,
                **(
                    dict(zip(("entry_bytes", "body_bytes"), sizes[condition], strict=True))
                    if recorded
                    else {}
                ),
            }
            for (condition, recorded), values in timings.items()
        }
        args.json.write_text(json.dumps(results, indent=2))


def ratio(value: float, base: float) -> str:
    """value / base, or "-" when base is zero: a process's CPU time moves in clock ticks (10 ms),
    so a short run (--quick) can measure none for a row that does little."""
    return f"{value / base:.2f}" if base else "-"


def pid_of(service: ServiceProcess) -> int:
    assert service.process is not None
    return service.process.pid


if __name__ == "__main__":
    main()
