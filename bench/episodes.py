"""Many episodes at once, a responsive event loop, and scaling out to two processes.

    .venv/bin/python -m bench.episodes [--seconds 60] [--episodes 64] [--json F] [--quick]

1. Responsiveness: a tiny unshifted page is probed every 50 ms, first alone, then while wrk
   keeps four 1 MB pages under Src-Perc in flight; prints the probe's p50/p95/max both ways,
   with big pages shifted in a worker thread (the default) and on the event loop.
2. Episodes: N concurrent episodes (conditions in turn) run a browser-like sequence for
   `--seconds` — a navigation, then its stylesheet, script and image, then 0.5-2 s for the
   agent to decide its next step — through
   one service on redis-server. The same sequence straight to the upstream gives the floor:
   prints p50/p95 latency added per request kind, against the same figure for one episode at
   a time (each condition in turn, `--seconds` in all), then compares what every client did
   with its episode's event log (navigations vs `page_served`, popups), and samples the
   proxy's RSS.
3. Scaling: wrk on a 300 KB Src-Perc page through one process, through the TCP balancer to one
   process, and through the balancer to two processes sharing the redis-server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.throughput import Row, _synthetic, add_assets, memory_mb, wrk
from tests.helpers.processes import (
    HAProxyProcess,
    RedisProcess,
    ServiceProcess,
    scratch_directory,
    start_all,
)
from tests.helpers.upstream import UpstreamServer

CONDITIONS: list[dict[str, Any]] = [
    {"condition": "Src"},
    {"condition": "Src-Perc"},
    {"condition": "Src-Exec", "regime": "multiple"},
    {"condition": "Tgt"},
    {"condition": "Tgt-Perc"},
    {"condition": "Src-Exec", "regime": "random", "regime_params": {"p": 0.5}},
]
SUBRESOURCES = {"/style.css": "style", "/app.js": "script", "/logo.png": "image"}
THINK_S = (0.5, 2.0)  # an agent deciding its next step
QUICK_THINK_S = (0.1, 0.4)  # the smoke run: more navigations in its few seconds, not fewer


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0, "p50": 0.0, "p95": 0.0, "max": 0.0}
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
        "max": round(ordered[-1], 2),
    }


# ---- 1. responsiveness --------------------------------------------------------------------


def probe(service: ServiceProcess, header: dict[str, str], url: str, seconds: float) -> list[float]:
    latencies = []
    with httpx.Client(proxy=service.proxy, headers=header, timeout=30) as client:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = time.perf_counter()
            client.get(url).raise_for_status()
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    return latencies


def responsiveness(service: ServiceProcess, upstream: UpstreamServer, seconds: float) -> dict:
    """The probe alone and under 1 MB rewrites, through one service."""
    src = service.create_episode(condition="Src")
    perc = service.create_episode(condition="Src-Perc")
    tiny = f"{upstream.origin}/page.html"
    alone = probe(service, dict(src["header"]), tiny, seconds)  # type: ignore[call-overload]
    header = "{}: {}".format(*next(iter(dict(perc["header"]).items())))  # type: ignore[call-overload]
    row = Row("perc", service.proxy_port, service.process.pid, header)  # type: ignore[union-attr]
    load: dict[str, Any] = {}
    background = threading.Thread(
        target=lambda: load.update(
            wrk(row, f"{upstream.origin}/big-1mb", 4, int(seconds) + 1, "document")
        )
    )
    background.start()
    time.sleep(0.5)
    busy = probe(service, dict(src["header"]), tiny, seconds)  # type: ignore[call-overload]
    background.join()
    return {"alone_ms": percentiles(alone), "under_1mb_load_ms": percentiles(busy), "load": load}


# ---- 2. many episodes ---------------------------------------------------------------------


def new_log() -> dict[str, Any]:
    return {"navigations": 0, "failures": 0, "latency": {"document": [], "subresource": []}}


async def browse(
    client: httpx.AsyncClient,
    origin: str,
    until: float,
    rng: random.Random,
    log: dict[str, Any],
    think_s: tuple[float, float] = THINK_S,
) -> dict[str, Any]:
    """Browse like an agent until `until` (monotonic): a navigation, its stylesheet, script and
    image, then `think_s` to decide the next step. Counts and latencies go into `log`. The
    first navigation is made however late it starts: every episode is measured at least once,
    on a loaded machine too."""
    while log["navigations"] == 0 or time.monotonic() < until:
        started = time.perf_counter()
        page = await client.get(f"{origin}/page.html", headers={"Sec-Fetch-Dest": "document"})
        log["latency"]["document"].append((time.perf_counter() - started) * 1000)
        log["navigations"] += 1
        log["failures"] += page.status_code != 200
        for path, dest in SUBRESOURCES.items():
            started = time.perf_counter()
            asset = await client.get(f"{origin}{path}", headers={"Sec-Fetch-Dest": dest})
            log["latency"]["subresource"].append((time.perf_counter() - started) * 1000)
            log["failures"] += asset.status_code != 200
        await asyncio.sleep(rng.uniform(*think_s))
    return log


async def run_episodes(
    proxy_urls: list[str | None],
    origin: str,
    seconds: float,
    think_s: tuple[float, float] = THINK_S,
) -> list[dict[str, Any]]:
    logs = [new_log() for _ in proxy_urls]
    until = time.monotonic() + seconds
    clients = [httpx.AsyncClient(proxy=url, timeout=60) for url in proxy_urls]
    try:
        await asyncio.gather(
            *(
                browse(client, origin, until, random.Random(index), logs[index], think_s)
                for index, client in enumerate(clients)
            )
        )
    finally:
        for client in clients:
            await client.aclose()
    return logs


def audit(service: ServiceProcess, episodes: list[dict], logs: list[dict]) -> dict[str, int]:
    """What the clients did against what each episode's event log says happened."""
    problems: Counter[str] = Counter()
    for episode, log in zip(episodes, logs, strict=True):
        events = httpx.get(
            f"{service.api}/episodes/{episode['id']}/events?limit=1000", timeout=30
        ).json()["events"]
        types = Counter(event["type"] for event in events)
        documents = sum(e["type"] == "page_served" and e.get("kind") == "document" for e in events)
        problems["navigations"] += log["navigations"]
        problems["missing_page_served"] += max(0, log["navigations"] - documents)
        problems["extra_page_served"] += max(0, documents - log["navigations"])
        if episode["regime"] == "multiple" and episode["condition"].endswith("Exec"):
            problems["popup_mismatch"] += abs(types["popup_injected"] - log["navigations"])
        if episode["regime"] == "random" and episode["condition"].endswith("Exec"):
            problems["draw_mismatch"] += abs(types["random_draw"] - log["navigations"])
        problems["client_failures"] += log["failures"]
    return dict(problems)


def episode_proxies(
    service: ServiceProcess,
    upstream: UpstreamServer,
    target: UpstreamServer,
    conditions: list[dict[str, Any]],
) -> tuple[list[dict], list[str | None]]:
    """A new episode per condition, and the proxy URL that binds each."""
    episodes = [
        service.create_episode(**condition, targets={upstream.origin: target.origin})
        for condition in conditions
    ]
    proxies: list[str | None] = [
        f"http://{e['id']}:{e['token']}@127.0.0.1:{service.proxy_port}" for e in episodes
    ]
    return episodes, proxies


def added_latency(logs: list[dict], direct: list[dict]) -> dict[str, Any]:
    """Per request kind: proxied and direct percentiles, and what the proxy added. Each
    episode's first navigation (its first rewrite under its seed, on a new connection) is
    counted apart, as `first_document_ms`: a short run has a larger share of them, which
    would weigh on its p95 and not on a long one's."""
    result: dict[str, Any] = {
        "first_document_ms": percentiles(
            [log["latency"]["document"][0] for log in logs if log["latency"]["document"]]
        )
    }
    for kind in ("document", "subresource"):
        skip = 1 if kind == "document" else 0
        proxied = percentiles([v for log in logs for v in log["latency"][kind][skip:]])
        floor = percentiles([v for log in direct for v in log["latency"][kind][skip:]])
        result[kind] = {
            "proxied_ms": proxied,
            "direct_ms": floor,
            "added_p50_ms": round(proxied["p50"] - floor["p50"], 2),
            "added_p95_ms": round(proxied["p95"] - floor["p95"], 2),
        }
    return result


def one_episode(
    service: ServiceProcess,
    upstream: UpstreamServer,
    target: UpstreamServer,
    seconds: float,
    think_s: tuple[float, float] = THINK_S,
    floor_s: float = 15,
) -> dict[str, Any]:
    """The single-episode figure: one episode at a time, each condition in turn for
    `seconds` / conditions, browsing exactly as each of the many episodes does (and straight
    to the upstream for at most `floor_s`, the floor)."""
    share = seconds / len(CONDITIONS)
    logs = []
    for condition in CONDITIONS:
        _, proxies = episode_proxies(service, upstream, target, [condition])
        logs += asyncio.run(run_episodes(proxies, upstream.origin, share, think_s))
    direct = asyncio.run(run_episodes([None], upstream.origin, min(seconds, floor_s), think_s))
    return {"seconds": share * len(CONDITIONS), **added_latency(logs, direct)}


def many_episodes(
    service: ServiceProcess,
    upstream: UpstreamServer,
    target: UpstreamServer,
    count: int,
    seconds: float,
    think_s: tuple[float, float] = THINK_S,
    floor_s: float = 15,
) -> dict[str, Any]:
    conditions = [CONDITIONS[index % len(CONDITIONS)] for index in range(count)]
    episodes, proxies = episode_proxies(service, upstream, target, conditions)
    pid = service.process.pid  # type: ignore[union-attr]
    samples: list[float] = []
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.wait(5):
            samples.append(memory_mb(pid, "VmRSS"))

    sampler = threading.Thread(target=sample)
    sampler.start()
    logs = asyncio.run(run_episodes(proxies, upstream.origin, seconds, think_s))
    sampling.set()
    sampler.join()
    floor = min(seconds, floor_s)
    direct = asyncio.run(run_episodes([None] * count, upstream.origin, floor, think_s))
    requests = sum(len(log["latency"]["document"]) * (1 + len(SUBRESOURCES)) for log in logs)
    result: dict[str, Any] = {
        "episodes": count,
        "seconds": seconds,
        "requests_per_s": round(requests / seconds, 1),
        "rss_mb": samples,
        **added_latency(logs, direct),
    }
    result["audit"] = audit(service, episodes, logs)
    return result


# ---- 3. scaling ---------------------------------------------------------------------------


def scaling(workdir: Path, redis: RedisProcess, upstream: UpstreamServer, seconds: int) -> dict:
    replicas = []
    for index in range(2):
        path = workdir / f"replica{index}"
        path.mkdir()
        replicas.append(ServiceProcess(path, "--redis-url", redis.url, "--key-prefix", "scale:"))
    start_all(replicas)
    episode = replicas[0].create_episode(condition="Src-Perc")
    header = "{}: {}".format(*next(iter(dict(episode["header"]).items())))  # type: ignore[call-overload]
    one_behind = HAProxyProcess(workdir, replicas[0].proxy_port)
    two_behind = HAProxyProcess(workdir, *(replica.proxy_port for replica in replicas))
    url = f"{upstream.origin}/page-300kb"
    rows = {
        "1 process": Row("1", replicas[0].proxy_port, replicas[0].process.pid, header),  # type: ignore[union-attr]
        "balancer -> 1 process": Row("b1", one_behind.port, None, header),
        "balancer -> 2 processes": Row("b2", two_behind.port, None, header),
    }
    result = {}
    try:
        for name, row in rows.items():
            result[name] = round(wrk(row, url, 8, seconds, "document")["rps"], 1)
    finally:
        for balancer in (one_behind, two_behind):
            balancer.stop()
        for replica in replicas:
            replica.stop()
    return result


# ---- main ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    seconds, probe_seconds, scale_seconds, think_s = args.seconds, 8.0, 8, THINK_S
    floor_s = 15.0  # the direct runs (the latency floor): figures only, nothing audited
    if args.quick:
        seconds, probe_seconds, scale_seconds, args.episodes = 3, 1.0, 1, min(args.episodes, 8)
        think_s, floor_s = QUICK_THINK_S, 1.0
    workdir = scratch_directory("bench-episodes-")
    (workdir / "redis").mkdir()
    (workdir / "service").mkdir()
    upstream, target = UpstreamServer("source").start(), UpstreamServer("target").start()
    upstream.extra["/big-1mb"] = ("text/html; charset=utf-8", _synthetic(1024 * 1024))
    upstream.extra["/page-300kb"] = ("text/html; charset=utf-8", _synthetic(300 * 1024))
    for server in (upstream, target):
        add_assets(server)
    redis = RedisProcess(workdir / "redis").start()
    service = ServiceProcess(workdir / "service", "--redis-url", redis.url).start()
    out: dict[str, Any] = {}
    try:
        out["responsiveness"] = responsiveness(service, upstream, probe_seconds)
        report_responsiveness(out["responsiveness"], "big pages shifted in a worker thread")
        (workdir / "inline").mkdir()
        inline = ServiceProcess(workdir / "inline", "--offload-bytes", str(2**40)).start()
        try:
            out["responsiveness_inline"] = responsiveness(inline, upstream, probe_seconds)
        finally:
            inline.stop()
        report_responsiveness(out["responsiveness_inline"], "every shift on the event loop")
        out["one_episode"] = one_episode(service, upstream, target, seconds, think_s, floor_s)
        out["episodes"] = many_episodes(
            service, upstream, target, args.episodes, seconds, think_s, floor_s
        )
        report_episodes(out["episodes"], out["one_episode"])
        out["scaling"] = scaling(workdir, redis, upstream, scale_seconds)
        report_scaling(out["scaling"])
    finally:
        service.stop()
        redis.stop()
        upstream.stop()
        target.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


def say(line: str = "") -> None:
    import sys

    sys.stdout.write(line + "\n")


def report_responsiveness(result: dict, how: str) -> None:
    say(f"tiny page latency (ms), alone and while 1 MB Src-Perc pages rewrite ({how})")
    for name in ("alone_ms", "under_1mb_load_ms"):
        stats = result[name]
        say(
            f"  {name:<20} n={stats['n']:<5} p50 {stats['p50']:>8}  p95 {stats['p95']:>8}  "
            f"max {stats['max']:>8}"
        )
    say(f"  (1 MB pages meanwhile: {result['load'].get('rps', 0):.1f} req/s)")
    say()


def report_episodes(result: dict, single: dict) -> None:
    say(
        f"{result['episodes']} concurrent episodes for {result['seconds']} s "
        f"({result['requests_per_s']} req/s; latency ms, proxied vs direct), "
        f"and one episode at a time ({single['seconds']:g} s, the conditions in turn)"
    )
    for name, figures in ((f"{result['episodes']} episodes", result), ("one episode", single)):
        for kind in ("document", "subresource"):
            row = figures[kind]
            say(
                f"  {name:<12} {kind:<12} n={row['proxied_ms']['n']:<6} "
                f"p50 {row['proxied_ms']['p50']:>7} (+{row['added_p50_ms']})  "
                f"p95 {row['proxied_ms']['p95']:>7} (+{row['added_p95_ms']})  "
                f"direct p50 {row['direct_ms']['p50']}"
            )
        say(
            f"  {name:<12} first navigation of each episode: "
            f"p50 {figures['first_document_ms']['p50']} p95 {figures['first_document_ms']['p95']}"
        )
    many, one = result["document"]["added_p95_ms"], single["document"]["added_p95_ms"]
    ratio = f"x{many / one:.2f}" if one > 0 else "n/a (one episode added nothing)"
    say(f"  documents, p95 added: {many} ms vs {one} ms for one episode: {ratio} (target <= x2)")
    say(f"  audit: {result['audit']}")
    say(f"  proxy RSS MB every 5 s: {result['rss_mb']}")
    say()


def report_scaling(result: dict) -> None:
    say("scaling: 300 KB Src-Perc page, wrk c=8 (req/s, x the single process)")
    base = result["1 process"] or 1
    for name, rps in result.items():
        say(f"  {name:<26} {rps:>8}  x{rps / base:.2f}")


if __name__ == "__main__":
    main()
