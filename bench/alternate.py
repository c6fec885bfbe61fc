"""Two or more rows taking turns on one page, round after round.

    .venv/bin/python -m bench.alternate [--page assets] [--rows Src,Src-Perc] [--rounds 6]
        [--seconds 2] [--connections 8]

`bench.throughput` measures its rows one after the other, a few seconds each: on a shared
machine, a neighbour's load that comes and goes moves one row's figure and not the next one's
(its assets' `Src-Perc` over `Src` moved from 1.0x to 1.45x between two runs of the same code).
Here the rows (episodes of one service process) are each driven by wrk for `--seconds` in turn,
`--rounds` times, so what the machine does falls on each of them alike: each round's CPU ms per
request of the row's process, each row's median, and each row's median over the first row's with
the ratio of every round's pair (their spread says how far to trust the median's ratio).

A row is a condition, with a regime after a slash (`Src-Exec/random`), or `mitmproxy`: plain
mitmdump, a process of its own, what the issue's targets are ratios to. A condition that ends in
`@redis` (`Src-Exec/once@redis`) is an episode of a second service process whose store is a
`redis-server` started for the run, as `bench.throughput`'s `redis` rows are. The page is one of
`bench.throughput`'s: `300KB`, `1MB`, or `assets` (its stylesheet, script and image in turn,
each requested with the 300 KB page's `Referer`, that page served first through every row, as
a browser's would be).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess

from bench.throughput import PAGES, Row, add_synthetic_pages, episode_row, start_mitmdump, wrk
from tests.helpers.processes import RedisProcess, ServiceProcess, scratch_directory
from tests.helpers.upstream import UpstreamServer

REDIS_SUFFIX = "@redis"  # a row's episode on the service process whose store is Redis


def alternate(
    rows: list[Row], url: str, dest: str, referer: str, rounds: int, seconds: int, connections: int
) -> dict[str, list[float]]:
    """Each row's CPU ms per request in each round, the rows in turn within a round (the
    first of them alternating, so no row always follows the same one)."""
    cpu: dict[str, list[float]] = {row.name: [] for row in rows}
    for index in range(rounds):
        for row in rows if index % 2 == 0 else rows[::-1]:
            result = wrk(row, url, connections, seconds, dest, referer)
            if result["failures"]:  # (a request that failed cost what a served one does not)
                raise SystemExit(f"{row.name}: {result['failures']:.0f} requests failed")
            cpu[row.name].append(result["cpu_ms_per_request"])
    return cpu


def report(cpu: dict[str, list[float]], page: str, connections: int) -> str:
    names = list(cpu)
    first = names[0]
    lines = [
        f"{page}: CPU ms per request of the service, wrk c={connections}, the rows in turn "
        f"each round; x: the row's median over {first}'s, and each round's pair",
    ]
    for name in names:
        cells = " ".join(f"{value:6.2f}" for value in cpu[name])
        ratio = statistics.median(cpu[name]) / statistics.median(cpu[first])
        pairs = " ".join(f"{b / a:.2f}" for a, b in zip(cpu[first], cpu[name], strict=True))
        lines.append(
            f"{name:18} {cells}  median {statistics.median(cpu[name]):6.2f}  x {ratio:.3f}"
            + (f"  pairs {pairs}" if name != first else "")
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--page", choices=sorted(PAGES), default="assets")
    parser.add_argument("--rows", default="Src,Src-Perc", help="conditions, comma-separated")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=int, default=2, help="per row and round (whole)")
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
    specs = [spec.strip() for spec in args.rows.split(",") if spec.strip()]
    if len(specs) < 2 or args.rounds < 1 or args.seconds < 1:
        parser.error("two rows or more, one round or more, one second or more")
    for spec in specs:
        if "@" in spec and not spec.endswith(REDIS_SUFFIX):
            parser.error(f"{spec}: the one store a row can name is {REDIS_SUFFIX}")

    upstream = UpstreamServer().start()
    add_synthetic_pages(upstream)
    workdir = scratch_directory("bench-alternate-")
    service = ServiceProcess(workdir).start()
    plain: list[subprocess.Popen[bytes]] = []
    redis: RedisProcess | None = None
    on_redis: ServiceProcess | None = None
    try:
        rows = []
        for spec in specs:
            condition, at, _ = spec.partition("@")
            if spec == "mitmproxy":
                port, process = start_mitmdump()
                plain.append(process)
                rows.append(Row(spec, port, process.pid))
            elif at:
                if on_redis is None:
                    redis = RedisProcess(workdir).start()
                    (workdir / "redis").mkdir()
                    on_redis = ServiceProcess(workdir / "redis", "--redis-url", redis.url).start()
                rows.append(episode_row(on_redis, condition, spec))
            else:
                rows.append(episode_row(service, spec, spec))
        url = ",".join(f"{upstream.origin}{one}" for one in PAGES[args.page].split(","))
        assets = args.page == "assets"
        page_url = f"{upstream.origin}/page-300kb"
        for row in rows:  # (warm: each episode's page served, its assets' referrer known)
            wrk(row, page_url if assets else url, 1, 1, "document")
            if assets:
                wrk(row, url, 1, 1, "style", page_url)
        cpu = alternate(
            rows,
            url,
            "style" if assets else "document",
            page_url if assets else "",
            args.rounds,
            args.seconds,
            args.connections,
        )
        print(report(cpu, args.page, args.connections))  # noqa: T201 - a benchmark prints its table
    finally:
        for process in plain:
            process.terminate()
            process.wait(timeout=30)
        service.stop()
        if on_redis is not None:
            on_redis.stop()
        if redis is not None:
            redis.stop()
        upstream.stop()


if __name__ == "__main__":
    main()
