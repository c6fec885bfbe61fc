"""The soak (bench/soak.py) in small: two processes, one redis-server, a balancer, episodes
run back to back with two tabs each; nothing lost, duplicated or out of order, every API answer
as expected, and expired episodes leave no key behind. The full run is `python -m bench.soak`
(10 minutes, 64)."""

from __future__ import annotations

from pathlib import Path

from bench.soak import AUDITED_TTL_S, clean, run_soak


def test_short_soak_is_clean(tmp_path: Path) -> None:
    # Audited episodes live a day (none can expire before its audit, however slow the machine);
    # ttl_s is the expiry probes' TTL only.
    assert AUDITED_TTL_S >= 3600
    result = run_soak(tmp_path, seconds=20, episodes=12, session_s=5, ttl_s=10)
    problems = result["problems"]
    assert not result["errors"], result["errors"]
    # Volume depends on the machine; what cannot: every slot ran a session, every tab navigated.
    assert problems["episodes"] >= 12 and problems["navigations"] >= 2 * problems["episodes"]
    assert result["redis_keys_before_expiry"] > 0  # the probes held keys, then expired
    assert clean(result), result
