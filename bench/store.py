"""What a store command costs the proxy: the CPU time of one episode read on Redis, through
redis-py's asyncio client and through the pipelined connection the proxy uses
(`proxy/store/pipelined.py`), one at a time and 8 at once, side by side in one run.

    .venv/bin/python -m bench.store [--commands 4000] [--rounds 3] [--json F] [--quick]

Every request the proxy serves reads its episode (a GET of its ~600-byte JSON record); a
navigation also counts its load and writes its events (a script each). The rows alternate round
by round, so machine noise hits both alike; `x` is redis-py's CPU per command over the row's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from proxy.episode import EpisodeConfig, new_episode
from proxy.store.pipelined import PipelinedConnection
from tests.helpers.processes import RedisProcess, scratch_directory

KEY = "bench:episode"
CONCURRENCY = 8


async def cpu_us_per_command(
    command: Callable[[], Awaitable[Any]], commands: int, concurrency: int
) -> float:
    """The process's CPU time per command, `concurrency` commands in flight at a time."""

    async def worker() -> None:
        for _ in range(commands // concurrency):
            await command()

    started = time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return (time.process_time() - started) * 1e6 / (commands // concurrency * concurrency)


async def measure(url: str, commands: int, rounds: int) -> dict[str, dict[str, float]]:
    # As the store's clients are made (proxy/store/redis.py).
    pooled: Any = aioredis.Redis.from_url(
        url, socket_timeout=2, socket_connect_timeout=2, decode_responses=True
    )
    pipelined = PipelinedConnection(url, timeout=2)
    record = new_episode(EpisodeConfig(condition="Src-Exec", regime="multiple"))
    await pooled.set(KEY, json.dumps(record.model_dump(mode="json")))
    rows: dict[str, Callable[[], Awaitable[Any]]] = {
        "redis-py": lambda: pooled.get(KEY),
        "pipelined": lambda: pipelined.call("GET", KEY),
    }
    samples: dict[str, dict[str, list[float]]] = {
        name: {"sequential": [], "concurrent": []} for name in rows
    }
    for command in rows.values():  # warm: connections made, code paths run
        await cpu_us_per_command(command, 200, CONCURRENCY)
    for _ in range(rounds):
        for name, command in rows.items():
            samples[name]["sequential"].append(await cpu_us_per_command(command, commands, 1))
            samples[name]["concurrent"].append(
                await cpu_us_per_command(command, commands, CONCURRENCY)
            )
    await pooled.aclose()
    pipelined.close()
    return {
        name: {kind: statistics.median(values) for kind, values in kinds.items()}
        for name, kinds in samples.items()
    }


def report(results: dict[str, dict[str, float]]) -> list[str]:
    base = results["redis-py"]
    lines = [
        "CPU us per GET of an episode record (median of the rounds; x: redis-py's / the row's)",
        f"{'row':12} {'one at a time':>14} {'x':>6} {f'{CONCURRENCY} at once':>14} {'x':>6}",
    ]
    for name, row in results.items():
        lines.append(
            f"{name:12} {row['sequential']:14.1f} {base['sequential'] / row['sequential']:6.2f}"
            f" {row['concurrent']:14.1f} {base['concurrent'] / row['concurrent']:6.2f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commands", type=int, default=4000, help="per row and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 400 commands, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.commands, args.rounds = 400, 1
    if args.commands < CONCURRENCY or args.rounds < 1:
        parser.error(f"--commands >= {CONCURRENCY} and --rounds >= 1")
    redis = RedisProcess(scratch_directory("bench-store-")).start()
    try:
        results = asyncio.run(measure(redis.url, args.commands, args.rounds))
    finally:
        redis.stop()
    print("\n".join(report(results)))  # noqa: T201 - a benchmark prints its table
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
