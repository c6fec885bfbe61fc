"""Soak: many episodes for a long time through two processes sharing one redis-server.

    .venv/bin/python -m bench.soak [--minutes 10] [--episodes 64] [--json F]

Two skillshift processes on one redis-server (AOF on) behind HAProxy, like a
scaled-out deployment. `--episodes` slots run at once; each slot runs short sessions back to
back: a new episode (conditions in turn), two "tabs" browsing it concurrently (navigation +
subresources, as in bench/episodes.py), then the next. Afterwards every finished episode's event
log is compared with what its tabs did (every API answer's status is checked first):

- every navigation has exactly one `page_served` document event, and no extra ones;
- load indices are exactly 1..N (the two tabs never got the same index or skipped one);
- `multiple` episodes have one `popup_injected` per navigation, `once` episodes exactly one;
- event ids strictly increase;
- no request failed.

Audited episodes live for AUDITED_TTL_S, far longer than any run, so none can expire before
its audit however slow the machine is; each is deleted once audited. Expiry is checked
separately: at the end a few probe episodes with the short `--ttl` are browsed, and Redis must
then empty itself (no key outlives its episode's TTL, none is left by a deletion).

It also samples both processes' RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.episodes import browse, new_log
from bench.throughput import add_assets, memory_mb
from tests.helpers.processes import (
    HAProxyProcess,
    RedisProcess,
    ServiceProcess,
    scratch_directory,
    start_all,
)
from tests.helpers.upstream import UpstreamServer

THINK_S = (0.05, 0.3)  # short pauses: a soak is about volume
AUDITED_TTL_S = 24 * 3600  # audited episodes never expire during a run; they are deleted
EXPIRY_PROBES = 4
EXPIRY_GRACE_S = 120.0  # how long past the probes' TTL Redis may take to drop their keys
CONDITIONS: list[dict[str, Any]] = [
    {"condition": "Src-Exec", "regime": "multiple"},
    {"condition": "Src-Perc"},
    {"condition": "Src-Exec", "regime": "once"},
    {"condition": "Src"},
    {"condition": "Tgt-Perc"},
    {"condition": "Src-Exec", "regime": "random", "regime_params": {"p": 0.5}},
]


async def session(
    api: httpx.AsyncClient,
    proxy_port: int,
    origin: str,
    target: str,
    config: dict,
    session_s: float,
    ttl_s: int,
    rng: random.Random,
) -> dict[str, Any]:
    created = await api.post(
        "/episodes", json={**config, "ttl_s": ttl_s, "targets": {origin: target}}
    )
    if created.status_code != 201:
        raise RuntimeError(f"POST /episodes answered {created.status_code}: {created.text}")
    episode = created.json()
    proxy = f"http://{episode['id']}:{episode['token']}@127.0.0.1:{proxy_port}"
    until = time.monotonic() + session_s
    async with (
        httpx.AsyncClient(proxy=proxy, timeout=60) as one,
        httpx.AsyncClient(proxy=proxy, timeout=60) as two,
    ):
        tabs = await asyncio.gather(
            *(browse(tab, origin, until, rng, new_log(), THINK_S) for tab in (one, two))
        )
    return {
        "episode": episode,
        "navigations": sum(t["navigations"] for t in tabs),
        "failures": sum(t["failures"] for t in tabs),
        "ended": time.time(),
    }


async def slot(
    index: int,
    api_url: str,
    proxy_port: int,
    origin: str,
    target: str,
    deadline: float,
    session_s: float,
    ttl_s: int,
    results: list[dict],
) -> None:
    rng = random.Random(index)
    configs = itertools.cycle(CONDITIONS[index % len(CONDITIONS) :] + CONDITIONS)
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as api:
        while time.monotonic() + session_s <= deadline:
            result = await session(
                api, proxy_port, origin, target, next(configs), session_s, AUDITED_TTL_S, rng
            )
            result["problems"] = await audit(api, result)
            deleted = await api.delete(f"/episodes/{result['episode']['id']}")
            if deleted.status_code != 204:
                result["problems"]["api_errors"] += 1
                result.setdefault("errors", []).append(
                    f"DELETE /episodes/{result['episode']['id']} answered {deleted.status_code}"
                )
            results.append(result)


async def audit(api: httpx.AsyncClient, result: dict) -> Counter[str]:
    """One finished episode's event log against what its tabs did (before its TTL passes)."""
    problems: Counter[str] = Counter()
    episode = result["episode"]
    problems["navigations"] += result["navigations"]
    problems["episodes"] += 1
    response = await api.get(f"/episodes/{episode['id']}/events?limit=1000")
    if response.status_code != 200:
        problems["api_errors"] += 1
        result.setdefault("errors", []).append(
            f"GET /episodes/{episode['id']}/events answered {response.status_code}: "
            f"{response.text[:200]}"
        )
        return problems
    events = response.json()["events"]
    served = [e for e in events if e["type"] == "page_served" and e.get("kind") == "document"]
    navigations = result["navigations"]
    problems["lost_page_served"] += max(0, navigations - len(served))
    problems["extra_page_served"] += max(0, len(served) - navigations)
    indices = sorted(e["load_index"] for e in served)
    problems["bad_load_indices"] += indices != list(range(1, len(indices) + 1))
    popups = sum(e["type"] == "popup_injected" for e in events)
    if episode["condition"].endswith("Exec") and episode["regime"] == "multiple":
        problems["popup_mismatch"] += abs(popups - navigations)
    if episode["condition"].endswith("Exec") and episode["regime"] == "once":
        problems["popup_mismatch"] += abs(popups - 1)
    ids = [tuple(map(int, e["id"].split("-"))) for e in events]
    problems["unordered_ids"] += ids != sorted(set(ids))
    problems["failures"] += result["failures"]
    return problems


def redis_keys(redis: RedisProcess) -> int:
    """Episode keys in Redis: site knowledge (`kn:`) never expires, by design."""
    out = subprocess.run(
        ["redis-cli", "-p", str(redis.port), "--scan"], capture_output=True, text=True, check=True
    )
    return sum(1 for key in out.stdout.split() if ":kn:" not in key)


def run_soak(workdir: Path, seconds: float, episodes: int, session_s: float, ttl_s: int) -> dict:
    for name in ("redis", "a", "b"):
        (workdir / name).mkdir(parents=True, exist_ok=True)
    upstream, target = UpstreamServer("source").start(), UpstreamServer("target").start()
    for server in (upstream, target):
        add_assets(server)
    redis = RedisProcess(workdir / "redis", appendonly=True).start()
    replicas = start_all(
        [ServiceProcess(workdir / name, "--redis-url", redis.url) for name in ("a", "b")]
    )
    proxy = HAProxyProcess(workdir, *(replica.proxy_port for replica in replicas))
    api = HAProxyProcess(workdir, *(replica.api_port for replica in replicas))
    api_url = f"http://127.0.0.1:{api.port}"
    rss: dict[str, list[float]] = {"a": [], "b": []}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(10):
            for name, replica in zip("ab", replicas, strict=True):
                rss[name].append(memory_mb(replica.process.pid, "VmRSS"))  # type: ignore[union-attr]

    sampler = threading.Thread(target=sample)
    sampler.start()
    results: list[dict] = []
    deadline = time.monotonic() + seconds
    started = time.time()
    try:
        asyncio.run(
            run_slots(
                episodes, api_url, proxy.port, upstream, target, deadline, session_s, ttl_s, results
            )
        )
        stop.set()
        sampler.join()
        problems: Counter[str] = sum((result["problems"] for result in results), Counter())
        errors = [error for result in results for error in result.get("errors", [])]
        # Expiry: probe episodes with the short TTL, browsed so they hold events, flags and
        # counters; once their TTL has passed Redis must hold no episode key at all (audited
        # episodes were deleted; site knowledge is kept). Polled, not slept: slow machines only
        # wait longer.
        probes = asyncio.run(expiry_probes(api_url, proxy.port, upstream, target, ttl_s))
        keys_before_expiry = redis_keys(redis)
        expired_by = max(probe["expires_at"] for probe in probes)
        while redis_keys(redis) and time.time() < expired_by + EXPIRY_GRACE_S:
            time.sleep(0.5)
        keys_after_expiry = redis_keys(redis)
    finally:
        stop.set()
        for balancer in (proxy, api):
            balancer.stop()
        for replica in replicas:
            replica.stop()
        redis.stop()
        upstream.stop()
        target.stop()
    return {
        "seconds": round(time.time() - started, 1),
        "slots": episodes,
        "problems": dict(problems),
        "errors": errors[:20],
        "rss_mb": rss,
        "redis_keys_before_expiry": keys_before_expiry,
        "redis_keys_after_expiry": keys_after_expiry,
    }


async def expiry_probes(
    api_url: str, proxy_port: int, upstream: UpstreamServer, target: UpstreamServer, ttl_s: int
) -> list[dict[str, Any]]:
    """Episodes with the short TTL, one short session each; they are left to expire."""
    rng = random.Random(0)
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as api:
        results = await asyncio.gather(
            *(
                session(api, proxy_port, upstream.origin, target.origin, config, 0.5, ttl_s, rng)
                for config in CONDITIONS[:EXPIRY_PROBES]
            )
        )
    return [result["episode"] for result in results]


async def run_slots(
    count: int,
    api_url: str,
    proxy_port: int,
    upstream: UpstreamServer,
    target: UpstreamServer,
    deadline: float,
    session_s: float,
    ttl_s: int,
    results: list[dict],
) -> None:
    await asyncio.gather(
        *(
            slot(
                index,
                api_url,
                proxy_port,
                upstream.origin,
                target.origin,
                deadline,
                session_s,
                ttl_s,
                results,
            )
            for index in range(count)
        )
    )


def clean(result: dict) -> bool:
    problems = result["problems"]
    bad = {key: value for key, value in problems.items() if key not in ("navigations", "episodes")}
    return not any(bad.values()) and result["redis_keys_after_expiry"] == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--episodes", type=int, default=64, help="concurrent episodes")
    parser.add_argument("--session-seconds", type=float, default=30)
    parser.add_argument("--ttl", type=int, default=60, help="TTL of the expiry probes (s)")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args()
    workdir = scratch_directory("soak-")
    result = run_soak(workdir, args.minutes * 60, args.episodes, args.session_seconds, args.ttl)
    text = json.dumps(result, indent=2)
    sys.stdout.write(text + "\n")
    sys.stdout.write(f"\n{'CLEAN' if clean(result) else 'PROBLEMS'}\n")
    if args.json:
        Path(args.json).write_text(text)
    sys.exit(0 if clean(result) else 1)


if __name__ == "__main__":
    main()
