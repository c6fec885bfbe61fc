"""The seeded coin and token in C (`shifts/native/coin.h`, asked through `_signature.coin` and
`.token`) against their definitions, `rng.chance` and `rng.token_for`: BLAKE2b-64 of the keys'
text, then CPython's Mersenne Twister's draws, the same float and text for every seed and key."""

from __future__ import annotations

import _random
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shifts import native, rng


def compiled_coin(prefix: bytes, text: bytes) -> float:
    module = native._modules.get("_signature")
    assert module is not None, native.why_not
    coin: float = module.coin(prefix, text)
    return coin


def python_coin(seed: int, rule: str, key: str) -> float:
    return rng._chance.__wrapped__(seed, (rule, key))  # (not memoized: drawn afresh)


# Seeds around the generator's key words: one 32-bit word, two, and their edges.
SEEDS = st.one_of(
    st.sampled_from([0, 1, 2**31, 2**32 - 1, 2**32, 2**63, 2**64 - 1]),
    st.integers(min_value=0, max_value=2**64 - 1),
)


@settings(max_examples=3000, deadline=None)
@given(seed=SEEDS, rule=st.sampled_from(["wrap", "id", "é"]), key=st.text(max_size=300))
def test_every_coin_is_the_pythons(seed: int, rule: str, key: str) -> None:
    try:
        text = key.encode()
    except UnicodeEncodeError:  # (a lone surrogate: neither draws)
        return
    assert compiled_coin(rng.keys_prefix(seed, rule), text) == python_coin(seed, rule, key)


@settings(max_examples=3000, deadline=None)
@given(
    seed=SEEDS,
    rule=st.sampled_from(["id", "class", "é"]),
    key=st.text(max_size=300),
    length=st.integers(min_value=1, max_value=64),
)
def test_every_token_is_the_pythons(seed: int, rule: str, key: str, length: int) -> None:
    try:
        text = rng.keys_text(seed, "token", rule, key)
    except UnicodeEncodeError:  # (a lone surrogate: neither draws)
        return
    made = native.token(text, length) if native.token else None
    assert made is not None, native.why_not
    assert made == rng._token_read(text, length)
    assert rng._token.__wrapped__(seed, (rule, key), length) == made


def test_a_token_the_c_does_not_make_is_the_pythons() -> None:
    assert native.token is not None, native.why_not
    text = rng.keys_text(3, "token", "popup")
    assert native.token(text, 0) is None and native.token(text, 65) is None
    assert rng._token.__wrapped__(3, ("popup",), 65) == rng._token_read(text, 65)
    assert rng._token.__wrapped__(3, ("popup",), 0) == rng._token_read(text, 0)  # (one letter)
    assert rng._token.__wrapped__(3, ("popup",), 65)[:10] == rng.token_for(3, "popup", length=10)


def test_without_the_compiled_draws_the_coins_and_tokens_are_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keys = [(seed, ("id", f"name-{seed}")) for seed in (0, 1, 2**32, 2**64 - 1, 123456)]
    compiled = [(rng._chance.__wrapped__(*k), rng._token.__wrapped__(*k, 8)) for k in keys]
    monkeypatch.setattr(native, "coin", None)
    monkeypatch.setattr(native, "token", None)
    assert [(rng._chance.__wrapped__(*k), rng._token.__wrapped__(*k, 8)) for k in keys] == compiled


# Counts around a lockstep group's edges: seeded one by one below FEWEST_IN_LOCKSTEP (6), in
# groups of 32 (LANES), the last group partly full or its few seeded one by one.
COUNTS = [0, 1, 5, 6, 7, 31, 32, 33, 37, 38, 63, 64, 65, 70, 200]


def test_seeds_drawn_in_lockstep_draw_what_cpython_draws() -> None:
    module = native._modules.get("_signature")
    assert module is not None, native.why_not
    picks = random.Random(5)
    for count in COUNTS:
        # (seeds of one 32-bit word and of two side by side in a group: init_by_array reads
        # each's words in turn, one word over and over)
        seeds = [
            picks.choice([picks.getrandbits(32), picks.getrandbits(64), 0, 2**32 - 1, 2**32])
            for _ in range(count)
        ]
        assert module.draws(seeds) == [_random.Random(seed).random() for seed in seeds], count
    with pytest.raises(OverflowError):
        module.draws([2**64])
    with pytest.raises(OverflowError):
        module.draws([-1])


@settings(max_examples=300, deadline=None)
@given(seed=SEEDS, keys=st.lists(st.text(max_size=80), max_size=80))
def test_every_group_of_coins_is_the_pythons(seed: int, keys: list[str]) -> None:
    assert native.coins is not None, native.why_not
    prefix = rng.keys_prefix(seed, "class")
    try:
        expected = rng._coins_read(prefix, keys)
    except UnicodeEncodeError:  # (a lone surrogate: neither draws)
        with pytest.raises(UnicodeEncodeError):
            native.coins(prefix, keys)
        return
    assert native.coins(prefix, keys) == expected
    assert rng.coins(seed, "class", keys) == [rng.chance(seed, "class", key) for key in keys]


def test_coins_of_what_is_no_string_are_the_pythons() -> None:
    assert native.coins is not None, native.why_not
    prefix = rng.keys_prefix(1, "id")
    assert native.coins(prefix, ["a", 1]) is None  # type: ignore[list-item]
    with pytest.raises(TypeError):
        native.coins(prefix, ("a",))  # type: ignore[arg-type]
    for count in COUNTS:
        keys = [f"name-{n}" for n in range(count)]
        assert native.coins(prefix, keys) == rng._coins_read(prefix, keys), count


def test_texts_across_the_hash_blocks_edges() -> None:
    # BLAKE2b reads 128-byte blocks, the last one apart: a text that ends one, one short of it
    # and one past it, for two blocks and more, with the prefix's bytes counted in.
    prefix = rng.keys_prefix(7, "wrap")
    for total in (0, 1, 127, 128, 129, 255, 256, 257, 384, 1000):
        length = max(total - len(prefix), 0)
        key = ("ab|é" * 400)[:length]
        assert compiled_coin(prefix, key.encode()) == python_coin(7, "wrap", key), total


def test_the_prefix_is_what_derive_seed_hashes_before_the_last_key() -> None:
    # (a change to how keys are joined would draw other coins in C than in Python)
    assert (
        rng.keys_prefix(12, "wrap") + b"x" == b"12\x1fwrap\x1fx" == rng.keys_text(12, "wrap", "x")
    )
    assert compiled_coin(rng.keys_text(12, "wrap", "x"), b"") == rng.chance(12, "wrap", "x")
    assert compiled_coin(rng.keys_prefix(12, "wrap"), b"x") == rng.chance(12, "wrap", "x")


def test_the_coins_memo_keeps_coins_per_seed_and_rule_within_its_bound() -> None:
    first = rng.drawn_coins(101, "wrap")
    first["k"] = 0.25
    assert rng.drawn_coins(101, "wrap") is first  # (kept for the next call)
    assert rng.drawn_coins(101, "id") is not first and rng.drawn_coins(102, "wrap") is not first
    first.update((str(n), 0.5) for n in range(rng.MEMO))  # (past the bound: made anew)
    again = rng.drawn_coins(101, "wrap")
    assert again is not first and not again
    # Other memos are dropped, least recently asked first, to keep the coins within MEMO.
    older, newer = rng.drawn_coins(103, "wrap"), rng.drawn_coins(104, "wrap")
    older.update((str(n), 0.5) for n in range(rng.MEMO // 2))
    newer.update((str(n), 0.5) for n in range(rng.MEMO // 2))
    rng.drawn_coins(104, "wrap")  # (asked again: the newest)
    grown = rng.drawn_coins(105, "wrap")
    grown.update((str(n), 0.5) for n in range(10))
    assert rng.drawn_coins(104, "wrap") is newer
    assert rng.drawn_coins(103, "wrap") is not older  # (dropped: the least recently asked)


def test_the_memos_are_bounded_in_number_too() -> None:
    # (a process serves episode after episode: each keeps a few small memos)
    for seed in range(rng.MEMOS + 10):
        rng.drawn_coins(10**6 + seed, "id")["k"] = 0.5
    assert len(rng._KEPT) <= rng.MEMOS
    assert rng.drawn_coins(10**6 + rng.MEMOS + 9, "id") == {"k": 0.5}  # (the newest kept)
    assert rng.drawn_coins(10**6, "id") == {}  # (the oldest dropped)
