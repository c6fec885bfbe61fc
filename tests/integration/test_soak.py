"""The soak (bench/soak.py) in small: two processes, one redis-server, a balancer, episodes
run back to back with two tabs each; nothing lost, duplicated or out of order, and expired
episodes leave no key behind. The full run is `python -m bench.soak` (10 minutes, 64)."""

from __future__ import annotations

from pathlib import Path

from bench.soak import clean, run_soak


def test_short_soak_is_clean(tmp_path: Path) -> None:
    result = run_soak(tmp_path, seconds=20, episodes=12, session_s=5, ttl_s=10)
    problems = result["problems"]
    assert problems["episodes"] >= 24 and problems["navigations"] > 200
    assert clean(result), result
