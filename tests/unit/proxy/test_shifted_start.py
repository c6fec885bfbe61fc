from __future__ import annotations

import pytest

from proxy.shifted_start import ShiftedStart


def marked(start: bytes, whole: bool) -> bytes:
    """A shift that marks the start it was given (and whether it was the whole body)."""
    return (b"[whole]" if whole else b"[start]") + start


def fed(transform: ShiftedStart, body: bytes, chunk: int) -> list[bytes]:
    """What the transform sends for a body in chunks of `chunk` bytes, then its end."""
    sent = []
    for at in range(0, len(body), chunk):
        sent.extend(transform(body[at : at + chunk]))
    sent.extend(transform(b""))
    return sent


@pytest.mark.parametrize("chunk", [1, 3, 4, 5, 100])
def test_the_start_is_held_until_it_is_enough_then_the_rest_passes_as_it_comes(
    chunk: int,
) -> None:
    body = b"0123456789" * 3
    sent = fed(ShiftedStart(marked, hold=4, limit=1000), body, chunk)
    held = -(-4 // chunk) * chunk  # (the chunk that reaches the hold is held with it)
    assert sent[0] == b"[start]" + body[:held]
    assert b"".join(sent[1:]) == body[held:]
    # An empty piece would end a chunked body: none is ever sent.
    assert b"" not in sent


def test_a_body_shorter_than_the_hold_is_shifted_whole_at_its_end() -> None:
    sent = fed(ShiftedStart(marked, hold=100, limit=1000), b"short page", 4)
    assert sent == [b"[whole]short page"]
    assert fed(ShiftedStart(marked, hold=100, limit=1000), b"", 4) == [b"[whole]"]


def test_a_start_the_shift_cannot_settle_holds_the_whole_body() -> None:
    asked = []

    def settles_on_the_whole_only(start: bytes, whole: bool) -> bytes | None:
        asked.append((len(start), whole))
        return marked(start, whole) if whole else None

    body = b"x" * 50
    sent = fed(ShiftedStart(settles_on_the_whole_only, hold=10, limit=1000), body, 7)
    assert sent == [b"[whole]" + body]
    assert asked == [(14, False), (50, True)]  # (asked once for a start, then at the end)


def test_a_shift_that_gives_nothing_for_a_whole_body_is_an_error() -> None:
    transform = ShiftedStart(lambda start, whole: None, hold=10, limit=1000)
    assert transform(b"abc") == []
    with pytest.raises(RuntimeError):
        transform(b"")


def test_the_upstreams_body_is_kept_whole_when_asked_and_only_then() -> None:
    body = b"<html>" + b"y" * 40
    kept = ShiftedStart(marked, hold=8, limit=1000, keep=True)
    assert kept.source is None  # (not ended)
    fed(kept, body, 5)
    assert kept.source == body and kept.kept_bytes == len(body)
    not_kept = ShiftedStart(marked, hold=8, limit=1000)
    fed(not_kept, body, 5)
    assert not_kept.source is None and not_kept.kept_bytes == 0


def test_a_start_not_settled_by_the_limit_goes_out_as_it_came() -> None:
    """A page held whole (its start does not settle) is held no further than the limit, as a
    buffered page is not: past it, what was held goes out as it came, and so does the rest."""
    body = b"z" * 100
    transform = ShiftedStart(lambda start, whole: None, hold=10, limit=40)
    sent = fed(transform, body, 7)
    assert b"".join(sent) == body and transform.unshifted
    assert sent[0] == body[:42]  # (the chunk that passed the limit is sent with what was held)


def test_a_body_is_kept_no_further_than_the_limit() -> None:
    transform = ShiftedStart(marked, hold=8, limit=40, keep=True)
    fed(transform, b"k" * 100, 5)
    assert transform.source is None and transform.kept_bytes == 0
