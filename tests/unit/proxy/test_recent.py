"""Per-process state stays bounded: the least recently used entry goes first."""

from __future__ import annotations

from proxy.recent import Recent


def test_the_least_recently_used_entry_goes_first() -> None:
    recent: Recent[str, int] = Recent(2)
    recent.keep("a", 1)
    recent.keep("b", 2)
    assert recent.recall("a") == 1  # now the most recent
    recent.keep("c", 3)
    assert list(recent) == ["a", "c"] and recent.recall("b") is None


def test_keeping_a_key_again_replaces_it_without_growing() -> None:
    recent: Recent[str, int] = Recent(2)
    for value in range(100):
        recent.keep("episode", value)
    assert dict(recent) == {"episode": 99}
