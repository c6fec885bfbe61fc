"""skillshift against a direct connection, plain mitmproxy and a BeautifulSoup peer, side by side.

    .venv/bin/python -m bench.throughput [--seconds 3] [--wordpress-env /tmp/wplab/env] [--json F]

Every row serves the same pages from one local upstream (a 300 KB and a 1 MB synthetic page, a
CSS file, and, with --wordpress-env, a real WordPress front page, post and dashboard saved from
the lab). Load comes from wrk (C, persistent connections) through each row as an HTTP proxy;
rows alternate page by page so machine noise hits them alike. For each row and page: median and
p95 latency at concurrency 1, throughput at concurrency 8 and 32, CPU seconds per request of
the proxy process, and its peak RSS; every row also as a ratio to plain mitmproxy.

Under wrk every page after the first is a repeat, so the `-Perc` rows show the shifted-page
cache. Real apps put a per-request value in nearly every page (a WordPress nonce, Django's CSRF
field), where that cache never hits and every navigation is a first load: the token rows
(`... token`) serve a 200 KB page with 600 interactive elements (`bench.first_load`'s) that
carries a fresh token at every request, through plain mitmproxy, the BeautifulSoup peer and
`Src-Perc` (embedded and Redis), and with --wordpress-env the lab's dashboard with fresh
nonces. A first load takes up to hundreds of ms, so these are driven by
Python clients on persistent connections that each finish their last request (wrk would leave
up to c of them in flight, a large share of a run of a few requests): req/s and CPU per
request at c=8, median latency at c=1, and `x bs4`, the row's req/s over the peer's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from bench.first_load import TOKEN, fresh, token_template
from skillshift_client import SkillShift
from tests.helpers.lab import key_values
from tests.helpers.ports import free_port, wait_for_port
from tests.helpers.processes import REPO, RedisProcess, ServiceProcess, scratch_directory
from tests.helpers.upstream import UpstreamServer

LUA = Path(__file__).with_name("wrk.lua")
ASSETS = "/style.css,/app.js,/logo.png"  # requested in turn: a static asset mix
# The smoke run's rows (all on the embedded store: the bs4 peer, the unbound service and the
# Redis one are not started for it).
QUICK_ROWS = ("direct", "mitmproxy", "ss Src", "ss Src-Exec/once", "ss Src-Perc")
# The rows that also serve the token pages (their names there end in " token").
TOKEN_ROWS = ("mitmproxy", "bs4 peer", "ss Src-Perc", "ss Src-Perc redis")
TOKEN_SUFFIX = " token"
MITMDUMP = str(Path(sys.executable).with_name("mitmdump"))


@dataclass
class Row:
    name: str
    proxy_port: int | None  # None: straight to the upstream
    pid: int | None
    header: str = ""
    service: ServiceProcess | None = None
    episode_id: str | None = None
    results: dict[str, dict[str, float]] = field(default_factory=dict)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int, field: str = "VmHWM") -> float:
    """A memory figure of a process from /proc (VmHWM: peak RSS; VmRSS: current)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


# The service's rows: a condition, with its regime after a slash.
CONDITIONS = (
    "Src",
    "Src-Exec/once",
    "Src-Exec/multiple",
    "Src-Exec/random",
    "Src-Perc",
    "Tgt-Perc",
)
# The synthetic pages every run serves (the assets requested in turn).
PAGES = {"300KB": "/page-300kb", "1MB": "/big-1mb", "assets": ASSETS}


def episode_row(service: ServiceProcess, spec: str, name: str) -> Row:
    """A row named `name` for `spec` (`Src-Exec/random`: the condition, then the regime): an
    episode of `service` and the header that binds a request to it."""
    condition, _, regime = spec.partition("/")
    config: dict[str, Any] = {"condition": condition, "seed": 1}
    if regime:
        config["regime"] = regime
    episode = service.create_episode(**config)
    binding = dict(episode["header"])  # type: ignore[call-overload]
    header = "X-SkillShift-Episode: " + binding["X-SkillShift-Episode"]
    assert service.process is not None
    return Row(name, service.proxy_port, service.process.pid, header, service, str(episode["id"]))


def add_synthetic_pages(server: UpstreamServer) -> None:
    """The 300 KB and 1 MB pages and their assets (`PAGES`)."""
    server.extra["/page-300kb"] = ("text/html; charset=utf-8", _synthetic(300 * 1024))
    server.extra["/big-1mb"] = ("text/html; charset=utf-8", _synthetic(1024 * 1024))
    add_assets(server, scale=4)


def add_assets(server: UpstreamServer, scale: int = 1) -> None:
    """A script and an image next to the upstream's stylesheet: a page's subresources."""
    server.extra["/app.js"] = ("text/javascript", b"console.log('app');\n" * 400 * scale)
    server.extra["/logo.png"] = ("image/png", bytes(range(256)) * 40 * scale)


def wrk(
    row: Row, url: str, connections: int, seconds: int, dest: str, referer: str = ""
) -> dict[str, float]:
    target = f"http://127.0.0.1:{row.proxy_port}" if row.proxy_port else url
    env = {
        **os.environ,
        "BENCH_URL": url
        if row.proxy_port
        else ",".join(httpx.URL(one).raw_path.decode() for one in url.split(",")),
        "BENCH_HEADER": row.header,
        "BENCH_DEST": dest,
        "BENCH_REFERER": referer,
    }
    cpu_before = cpu_seconds(row.pid) if row.pid else 0.0
    result = subprocess.run(
        [
            "wrk",
            "-t",
            str(min(2, connections)),
            "-c",
            str(connections),
            "-d",
            f"{seconds}s",
            "-s",
            str(LUA),
            # wrk's own 2 s default would count a deep queue of 1 MB rewrites as errors.
            "--timeout",
            "60s",
            target,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=seconds + 60,
        check=True,
    )
    stats = json.loads(result.stdout.strip().splitlines()[-1])
    cpu = (cpu_seconds(row.pid) - cpu_before) if row.pid else 0.0
    requests = max(1, stats["requests"])
    return {
        "rps": requests / (stats["duration_us"] / 1e6),
        "p50_ms": stats["p50_us"] / 1000,
        "p95_ms": stats["p95_us"] / 1000,
        "cpu_ms_per_request": cpu * 1000 / requests,
        "failures": stats["errors"] + stats["non2xx"],
    }


def drive(row: Row, url: str, connections: int, seconds: int, dest: str) -> dict[str, float]:
    """`connections` clients on persistent connections through the row, each sending requests
    until `seconds` have passed and finishing its last one: every request the proxy worked on
    is counted, so its CPU per request holds on runs of a few slow requests."""
    headers = {"Sec-Fetch-Dest": dest, "Accept-Encoding": "gzip"}
    if row.header:
        name, value = row.header.split(":", 1)
        headers[name] = value.strip()
    proxy = f"http://127.0.0.1:{row.proxy_port}" if row.proxy_port else None
    latencies: list[float] = []
    failures: list[int] = []
    deadline = time.monotonic() + seconds

    def client() -> None:
        with httpx.Client(proxy=proxy, headers=headers, timeout=300, trust_env=False) as http:
            while True:  # at least one request
                started = time.perf_counter()
                status = http.get(url).status_code
                latencies.append(time.perf_counter() - started)
                failures.append(status != 200)
                if time.monotonic() >= deadline:
                    break

    cpu_before = cpu_seconds(row.pid) if row.pid else 0.0
    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cpu = (cpu_seconds(row.pid) - cpu_before) if row.pid else 0.0
    ordered = sorted(latencies)
    return {
        "rps": len(ordered) / wall,
        "p50_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000,
        "cpu_ms_per_request": cpu * 1000 / len(ordered),
        "failures": sum(failures),
        "requests": len(ordered),
    }


def start_mitmdump(*args: str) -> tuple[int, subprocess.Popen[bytes]]:
    port = free_port()
    process = subprocess.Popen(
        [
            MITMDUMP,
            "-q",
            "--listen-host",
            "127.0.0.1",
            "-p",
            str(port),
            "--set",
            "connection_strategy=lazy",
            *args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port)
    return port, process


def saved_wordpress_pages(env_file: Path) -> dict[str, bytes]:
    from api.calibration.run import session_cookies

    env = key_values(env_file.read_text())
    cookies = session_cookies(env["WPLAB_URL"], "editor", "editor-pass")
    with httpx.Client(base_url=env["WPLAB_URL"], follow_redirects=True, trust_env=False) as client:
        return {
            "/wp-front": client.get("/").content,
            "/wp-post": client.get("/?p=1").content,
            "/wp-dashboard": client.get("/wp-admin/", cookies=cookies).content,
        }


# A WordPress nonce in a page: after `nonce` (a field's name, a query parameter, a script's
# key), 10 hex digits.
NONCE = re.compile(rb"(?i)nonce[^0-9a-f]{1,16}([0-9a-f]{10})\b")


def with_fresh_nonces(raw: bytes) -> bytes:
    """A saved page with every WordPress nonce a placeholder that `fresh` fills anew at each
    request (a new session's nonces, in every place the page carries one)."""
    for value in {match.group(1) for match in NONCE.finditer(raw)}:
        raw = raw.replace(value, TOKEN)
    return raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=3, help="per wrk run (whole seconds)")
    parser.add_argument("--wordpress-env", type=Path, help="the lab's env file (real WP pages)")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 1 s per run, no warm-up runs or pauses, fewer pages and rows",
    )
    args = parser.parse_args()
    if args.quick:
        args.seconds = 1
    if shutil.which("wrk") is None:
        sys.exit("bench.throughput needs wrk (apt-get install wrk)")

    upstream = UpstreamServer().start()
    add_synthetic_pages(upstream)
    if args.wordpress_env:
        for path, body in saved_wordpress_pages(args.wordpress_env).items():
            upstream.extra[path] = ("text/html; charset=UTF-8", body)
    # A page that differs at every request (a fresh nonce in a hidden input, every link and a
    # script): the quick run's is smaller, to stay quick.
    size, elements = (20 * 1024, 60) if args.quick else (200 * 1024, 600)
    template = token_template(size, elements)
    upstream.generated["/token-page"] = ("text/html; charset=utf-8", lambda: fresh(template))
    token_pages = {f"token {size // 1024}KB": "/token-page"}
    if "/wp-dashboard" in upstream.extra:  # the real dashboard, its nonces fresh every time
        dashboard = with_fresh_nonces(upstream.extra["/wp-dashboard"][1])
        upstream.generated["/wp-dashboard-token"] = (
            "text/html; charset=UTF-8",
            lambda: fresh(dashboard),
        )
        token_pages["token WP dashboard"] = "/wp-dashboard-token"
    pages = dict(PAGES)
    pages.update(
        {
            f"WP {name}": f"/wp-{name}"
            for name in ("front", "post", "dashboard")
            if f"/wp-{name}" in upstream.extra
        }
    )
    if args.quick:
        pages = {"300KB": "/page-300kb", "assets": ASSETS}

    workdir = scratch_directory("bench-")
    redis = None if args.quick else RedisProcess(workdir).start()
    processes: list[subprocess.Popen[bytes]] = []
    services: list[ServiceProcess] = []
    rows = [Row("direct", None, None)]
    token_rows: list[Row] = []
    try:
        port, process = start_mitmdump()
        processes.append(process)
        rows.append(Row("mitmproxy", port, process.pid))
        if not args.quick:
            port, process = start_mitmdump("-s", str(REPO / "bench" / "peer_bs4.py"))
            processes.append(process)
            rows.append(Row("bs4 peer", port, process.pid))
            (workdir / "unbound").mkdir()
            unbound = ServiceProcess(workdir / "unbound", "--allow-unbound").start()
            assert unbound.process
            services.append(unbound)
            rows.append(Row("ss unbound", unbound.proxy_port, unbound.process.pid))
        for store in ("memory",) if redis is None else ("memory", "redis"):
            (workdir / store).mkdir()
            extra = ["--redis-url", redis.url] if redis and store == "redis" else []
            service = ServiceProcess(workdir / store, *extra).start()
            assert service.process
            services.append(service)
            for spec in CONDITIONS:
                if store == "redis" and spec == "Tgt-Perc":
                    continue
                suffix = " redis" if store == "redis" else ""
                rows.append(episode_row(service, spec, f"ss {spec}{suffix}"))
        if args.quick:
            rows = [row for row in rows if row.name in QUICK_ROWS]
        for page, path in pages.items():
            url = ",".join(f"{upstream.origin}{one}" for one in path.split(","))
            dest = "style" if page == "assets" else "document"
            # The assets are the 300 KB page's (served, so known, before them): each is checked
            # against that page's knowledge, as a browser's would be.
            referer = f"{upstream.origin}/page-300kb" if page == "assets" else ""
            for row in rows if not args.quick else ():
                wrk(row, url, 1, 1, dest, referer)  # warm-up
            for connections in (1, 8, 32):
                for row in rows:
                    row.results[f"{page}@{connections}"] = wrk(
                        row, url, connections, args.seconds, dest, referer
                    )
            sys.stderr.write(f"done {page}\n")
        # The same proxies (and episodes) as their rows, reported apart.
        token_rows = [
            replace(row, name=row.name + TOKEN_SUFFIX, results={})
            for row in rows
            if row.name in TOKEN_ROWS
        ]
        for page, path in token_pages.items():
            url = f"{upstream.origin}{path}"
            for row in token_rows:
                drive(row, url, 1, 0, "document")  # warm-up: one request (the page is learnt)
            if not args.quick:  # a smoke run measures nothing: nothing to keep it off
                time.sleep(3)  # for the learn's headless Chromium to settle
            # The quick run: c=8 only (no latency one at a time).
            for connections in (8,) if args.quick else (1, 8):
                for row in token_rows:
                    row.results[f"{page}@{connections}"] = drive(
                        row, url, connections, args.seconds, "document"
                    )
            sys.stderr.write(f"done {page}\n")
        for row in rows:
            if row.pid:
                row.results["peak_rss_mb"] = {"value": memory_mb(row.pid)}
            if row.service and row.episode_id:
                row.results["rewrite_ms"] = rewrite_medians(row, pages)
        for row in token_rows:
            if row.service and row.episode_id:
                row.results["rewrite_ms"] = rewrite_medians(row, token_pages)
    finally:
        for service in services:
            service.stop()
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
        if redis:
            redis.stop()
        upstream.stop()
    report(rows, token_rows, pages, token_pages, args.json)


def rewrite_medians(row: Row, pages: dict[str, str]) -> dict[str, float]:
    """Median CPU time of the rewrite alone (`shift_cpu_ms` of `page_served`: parse, shift,
    serialize; not waiting for a worker thread or the GIL) per page, from the episode's log."""
    assert row.service is not None and row.episode_id is not None
    timings: dict[str, list[float]] = {page: [] for page in pages}
    with SkillShift(row.service.api) as client:
        for event in client.iter_events(row.episode_id):
            for page, path in pages.items():
                if "shift_cpu_ms" in event and str(event.get("url", "")).endswith(path):
                    timings[page].append(float(event["shift_cpu_ms"]))
    return {page: statistics.median(values) for page, values in timings.items() if values}


def _synthetic(size: int) -> bytes:
    from tests.helpers.pages import page

    return page("Synthetic", size=size).encode()


def _rewrite_cell(row: Row, page: str) -> str:
    median = row.results.get("rewrite_ms", {}).get(page)
    return f"{median:>9.2f}" if median is not None else f"{'':>9}"


# The targets, as CPU per request against plain mitmproxy (the embedded store's rows
# and the Redis ones are compared with the same mitmdump, run alternately with them).
TARGETS = {
    "ss Src": 1.0,
    "ss unbound": 1.0,
    "ss Src redis": 0.9,
    "ss Src-Exec/once": 1.0,
    "ss Src-Exec/multiple": 1.0,
    "ss Src-Exec/random": 1.0,
    "ss Src-Exec/once redis": 0.85,
    "ss Src-Exec/multiple redis": 0.85,
    "ss Src-Exec/random redis": 0.85,
}


# `Src-Perc` on pages that differ at every request: req/s over the BeautifulSoup peer's.
TOKEN_TARGET = 20.0


def _cpu_ratio(base: Row, row: Row, page: str) -> float:
    mine = row.results[f"{page}@8"]["cpu_ms_per_request"]
    return base.results[f"{page}@8"]["cpu_ms_per_request"] / mine if mine else 0.0


def report_tokens(token_rows: list[Row], token_pages: dict[str, str]) -> list[str]:
    """The token pages' table, and their target: `Src-Perc` >= 20x the peer's req/s."""
    out: list[str] = []
    base = next((row for row in token_rows if row.name == "mitmproxy" + TOKEN_SUFFIX), None)
    peer = next((row for row in token_rows if row.name == "bs4 peer" + TOKEN_SUFFIX), None)
    for page in token_pages:
        out.append(
            f"\n{page}: a fresh token in every response (no shifted-page cache hit); p50 ms at "
            "c=1, req/s at c=8 (x bs4: the row's / the BeautifulSoup peer's), CPU ms/req at c=8 "
            "(x: mitmproxy's / the row's), median rewrite ms, requests at c=8"
        )
        out.append(
            f"{'row':<26}{'p50':>8}{'c8':>9}{'x bs4':>7}{'cpu':>8}{'x':>6}{'rewrite':>9}{'n':>5}"
        )
        for row in token_rows:
            eight = row.results[f"{page}@8"]
            one = row.results.get(f"{page}@1")
            x_bs4 = eight["rps"] / peer.results[f"{page}@8"]["rps"] if peer else None
            x_mitm = _cpu_ratio(base, row, page) if base else None
            out.append(
                f"{row.name:<26}"
                + (f"{one['p50_ms']:>8.2f}" if one else f"{'-':>8}")
                + f"{eight['rps']:>9.1f}"
                + (f"{x_bs4:>7.2f}" if x_bs4 is not None else f"{'-':>7}")
                + f"{eight['cpu_ms_per_request']:>8.2f}"
                + (f"{x_mitm:>6.3f}" if x_mitm is not None else f"{'-':>6}")
                + _rewrite_cell(row, page)
                + f"{eight['requests']:>5.0f}"
                + (f"  FAILURES {eight['failures']:.0f}" if eight["failures"] else "")
            )
    if peer is None:
        return out
    out.append("\ntargets: req/s at c=8 on a page with a fresh token, the row's / the bs4 peer's")
    for row in token_rows:
        if not row.name.startswith("ss "):
            continue
        ratios = [
            row.results[f"{page}@8"]["rps"] / peer.results[f"{page}@8"]["rps"]
            for page in token_pages
        ]
        cells = " ".join(f"{ratio:.2f}" for ratio in ratios)
        met = sum(ratio >= TOKEN_TARGET for ratio in ratios)
        out.append(
            f"{row.name:<26} >= {TOKEN_TARGET:.2f}: {cells}  (met on {met} of {len(ratios)})"
        )
    return out


def report(
    rows: list[Row],
    token_rows: list[Row],
    pages: dict[str, str],
    token_pages: dict[str, str],
    json_path: Path | None,
) -> None:
    base = next(row for row in rows if row.name == "mitmproxy")
    out = []
    for page in pages:
        out.append(
            f"\n{page}: p50/p95 ms at c=1, req/s at c=8 and c=32 (x mitmproxy), CPU ms/req at "
            "c=8 (x: mitmproxy's / the row's, above 1 is cheaper), median rewrite ms"
        )
        out.append(
            f"{'row':<26}{'p50':>8}{'p95':>8}{'c8':>9}{'x':>6}{'c32':>9}{'x':>6}{'cpu':>7}"
            f"{'x':>6}{'rewrite':>9}"
        )
        for row in rows:
            one, eight, many = (row.results[f"{page}@{c}"] for c in (1, 8, 32))
            base8, base32 = base.results[f"{page}@8"]["rps"], base.results[f"{page}@32"]["rps"]
            out.append(
                f"{row.name:<26}{one['p50_ms']:>8.2f}{one['p95_ms']:>8.2f}{eight['rps']:>9.0f}"
                f"{eight['rps'] / base8:>6.2f}{many['rps']:>9.0f}{many['rps'] / base32:>6.2f}"
                f"{eight['cpu_ms_per_request']:>7.2f}"
                f"{_cpu_ratio(base, row, page):>6.2f}"
                + _rewrite_cell(row, page)
                + (
                    "  FAILURES " + str(eight["failures"] + many["failures"])
                    if eight["failures"] + many["failures"]
                    else ""
                )
            )
    out.append(
        "\ntargets: CPU per request, mitmproxy's / the row's, per page (met where >= target)"
    )
    for name, target in TARGETS.items():
        measured = next((r for r in rows if r.name == name), None)
        if measured is None:
            continue
        ratios = [_cpu_ratio(base, measured, page) for page in pages]
        cells = " ".join(f"{ratio:.2f}" for ratio in ratios)
        met = sum(ratio >= target for ratio in ratios)
        mean = statistics.geometric_mean(ratios) if all(ratios) else 0.0
        out.append(
            f"{name:<26} >= {target:.2f}: {cells}  geomean {mean:.2f} "
            f"(met on {met} of {len(ratios)})"
        )
    out += report_tokens(token_rows, token_pages)
    out.append("\npeak RSS (MB) per row (over the whole run)")
    for row in rows:
        rss = row.results.get("peak_rss_mb", {}).get("value", 0)
        out.append(f"{row.name:<26}{rss:>8.0f}")
    print("\n".join(out))  # noqa: T201 - a benchmark prints its table
    if json_path:
        every = {row.name: row.results for row in [*rows, *token_rows]}
        json_path.write_text(json.dumps(every, indent=2))


if __name__ == "__main__":
    main()
