"""Startup time and per-request latency: direct vs through skillshift, side by side, one run.

    .venv/bin/python -m bench.latency [--requests 100]

Each request opens a new connection (as a browser's first request to a host does) and is timed
from connect to the last body byte with a minimal raw-socket client, so the client's own cost is
small and the same for every row. Rows alternate request by request, so machine noise hits all
rows alike; ratios are to the direct row.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import time
from pathlib import Path

import httpx

from tests.helpers.processes import ServiceProcess, scratch_directory
from tests.helpers.upstream import PAGE, UpstreamServer

NAV = "Sec-Fetch-Dest: document\r\nSec-Fetch-Mode: navigate\r\n"


def fetch(port: int, target: str, host: str, extra: str = "") -> float:
    """One GET over a new connection; seconds from connect to the last byte of the body."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(
            f"GET {target} HTTP/1.1\r\nHost: {host}\r\n{extra}Connection: close\r\n\r\n".encode()
        )
        chunks = []
        while chunk := sock.recv(262144):
            chunks.append(chunk)
    elapsed = time.perf_counter() - started
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200") or len(body) < 0.9 * len(PAGE):
        raise RuntimeError(f"unexpected response: {head[:200]!r}")
    return elapsed


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()

    upstream = UpstreamServer().start()
    workdir = scratch_directory("bench-")
    started = time.perf_counter()
    service = ServiceProcess(workdir).start()
    startup_s = time.perf_counter() - started
    try:
        host = f"127.0.0.1:{upstream.port}"
        url = f"{upstream.origin}/page.html"
        rows: dict[str, tuple[int, str, str]] = {"direct": (upstream.port, "/page.html", "")}
        for condition in ("Src", "Src-Exec", "Src-Perc"):
            episode = service.create_episode(condition=condition, regime="multiple")
            header = f"X-SkillShift-Episode: {episode['id']}:{episode['token']}\r\n"
            rows[f"proxy {condition}"] = (service.proxy_port, url, header)
        timings: dict[str, list[float]] = {name: [] for name in rows}
        for port, target, header in rows.values():  # warm-up
            fetch(port, target, host, NAV + header)
        for _ in range(args.requests):
            for name, (port, target, header) in rows.items():
                timings[name].append(fetch(port, target, host, NAV + header))
        metrics = httpx.get(f"{service.api}/metrics").text
    finally:
        service.stop()
        upstream.stop()

    direct = statistics.median(timings["direct"])
    results = {
        "page_bytes": len(PAGE),
        "requests_per_row": args.requests,
        "startup_s": round(startup_s, 3),
        "rows": {
            name: {
                "median_ms": round(statistics.median(values) * 1000, 3),
                "p95_ms": round(percentile(values, 0.95) * 1000, 3),
                "added_median_ms": round((statistics.median(values) - direct) * 1000, 3),
                "ratio_to_direct": round(statistics.median(values) / direct, 2),
            }
            for name, values in timings.items()
        },
    }
    lines = [
        f"page: {len(PAGE)} bytes, {args.requests} requests per row, new connection each",
        f"service startup (spawn -> API and proxy answering): {startup_s:.2f} s",
        f"{'row':<16}{'median ms':>11}{'p95 ms':>9}{'added ms':>10}{'x direct':>10}",
    ]
    for name, row in results["rows"].items():  # type: ignore[union-attr]
        lines.append(
            f"{name:<16}{row['median_ms']:>11.2f}{row['p95_ms']:>9.2f}"
            f"{row['added_median_ms']:>10.2f}{row['ratio_to_direct']:>10.2f}"
        )
    print("\n".join(lines))  # noqa: T201 - a benchmark prints its table
    pages = [line for line in metrics.splitlines() if line.startswith("skillshift_pages")]
    print("\n".join(pages))  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
