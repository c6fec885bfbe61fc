"""Values kept by their texts, bounded by the texts' size."""

from __future__ import annotations

import threading

from shifts.kept import KeptByText


def test_values_are_kept_by_their_texts_size_the_least_recently_asked_dropped_first() -> None:
    kept: KeptByText[str | None] = KeptByText(max_chars=10)
    kept.put("aaaa", "A")
    kept.put("bbbb", None)  # (None is a value: a text that cannot be read is kept as such)
    assert kept.get("bbbb") == (True, None) and kept.get("aaaa") == (True, "A")
    kept.put("cccc", "C")  # 12 characters: the least recently asked goes ("bbbb")
    assert kept.get("bbbb") == (False, None)
    assert kept.get("aaaa") == (True, "A") and kept.get("cccc") == (True, "C")
    kept.put("aaaa", "A2")  # (a text kept again: counted once)
    kept.put("dd", "D")
    assert [kept.get(text)[0] for text in ("aaaa", "cccc", "dd")] == [True, True, True]
    kept.put("x" * 11, "X")  # (longer than all it may keep: not kept, nothing dropped)
    assert kept.get("x" * 11) == (False, None) and kept.get("aaaa") == (True, "A2")
    kept.clear()
    assert kept.get("aaaa") == (False, None)


def test_kept_values_stay_within_their_bound_on_several_threads() -> None:
    kept: KeptByText[int] = KeptByText(max_chars=1000)

    def fill(offset: int) -> None:
        for index in range(2000):
            text = f"{offset}-{index}-" + "x" * (index % 50)
            kept.put(text, index)
            assert kept.get(text)[1] in (index, None)

    threads = [threading.Thread(target=fill, args=(offset,)) for offset in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert 0 < kept._chars <= 1000
    assert kept._chars == sum(len(text) for text in kept._values)
