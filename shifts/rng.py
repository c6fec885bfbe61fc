"""Determinism helpers: every random choice derives from (episode seed, rule name, stable key)."""

from __future__ import annotations

import _random
import hashlib
import random
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from shifts import native

# Seeding a Mersenne Twister costs more than the draw: pages repeat keys (a class name on
# hundreds of elements), so the pure helpers below are memoized.
MEMO = 65_536


def derive_seed(seed: int | str, *keys: object) -> int:
    """A 64-bit seed from the episode seed and any stable keys.

    Python's hash() is salted per process, so this hashes the keys' text with BLAKE2b: the same
    inputs give the same seed in every process and on every machine.
    """
    return _digest(keys_text(seed, *keys))


def keys_text(seed: int | str, *keys: object) -> bytes:
    """The text `derive_seed` hashes: the seed and each key by its `str`, joined by \x1f, in
    UTF-8 (keys are separated, not glued)."""
    return "\x1f".join((str(seed), *map(str, keys))).encode("utf-8")


def _digest(text: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def keys_prefix(seed: int, *keys: object) -> bytes:
    """The text `derive_seed(seed, *keys, last)` hashes, up to `last`'s own (`last`'s UTF-8
    follows it): what a coin drawn in C hashes (`shifts.native`)."""
    return keys_text(seed, *keys, "")


def rng_for(seed: int | str, *keys: object) -> random.Random:
    """A private RNG for one decision; never shared, so call order cannot change the outcome.
    (The seed is read by its text: an int and its text seed one generator.)"""
    return random.Random(derive_seed(seed, *keys))


def chance(seed: int, *keys: object) -> float:
    """The first draw in [0, 1) of `rng_for(seed, *keys)`, memoized: a per-key coin."""
    return _chance(seed, keys)


@lru_cache(maxsize=MEMO)
def _chance(seed: int, keys: tuple[object, ...]) -> float:
    # Drawn in C where it is built (`shifts.native`, the same draw: a first load under a new
    # seed draws a coin for every name it may rename, 2.7 us each there, 4.9 in Python).
    return native.either(native.coin, _coin_read, keys_text(seed, *keys))


def _coin_read(text: bytes) -> float:
    """The coin for the keys' text (`keys_text`): the first draw of `random.Random` seeded with
    its digest, which the C one follows. Drawn on the C generator `random.Random` wraps, seeded
    the same way (an int seeds both through the same init_by_array), without its Python-level
    __init__ and seed()."""
    return _random.Random(_digest(text)).random()


def coins(seed: int, rule: str, keys: list[str]) -> list[float]:
    """`chance(seed, rule, key)` of each key (a string), drawn together: in C, where a group
    of them is seeded side by side at a sixth of the time each costs alone (`shifts.native`,
    `coin.h`). Kept for the next page of the seed (`drawn_coins`): an app's pages share most
    of their names, and a memo's look-up costs a tenth of a draw in a group."""
    prefix = keys_prefix(seed, rule)
    return _made(drawn_coins(seed, rule), keys, native.coins, _coins_read, prefix)


def _made(
    memo: dict[str, Any],
    keys: list[str],
    compiled: Callable[..., list[Any] | None] | None,
    read: Callable[..., list[Any]],
    prefix: bytes,
    *more: object,
) -> list[Any]:
    """What `compiled` (else `read`) makes of `prefix` and each key, kept in `memo`: made
    together for the keys it lacks (each once)."""
    missing = [key for key in dict.fromkeys(keys) if key not in memo]
    if missing:
        made = native.either(compiled, read, prefix, missing, *more)
        memo.update(zip(missing, made, strict=True))
    return [memo[key] for key in keys]


def _coins_read(prefix: bytes, keys: list[str]) -> list[float]:
    """`coins` in Python: each key's coin (`_coin_read` of `prefix` and its UTF-8)."""
    return [_coin_read(prefix + key.encode("utf-8")) for key in keys]


# The coins drawn in groups (`coins`, `shifts.native.wrap_candidates`) and the tokens made so
# (`tokens`), kept by seed and rule (and a token's length), then by key: at most MEMO in all (a
# memo holds a page's past it until it is asked again).
_KEPT: dict[tuple[object, ...], dict[str, Any]] = {}
MEMOS = 256  # (and at most so many memos: an episode keeps five, its rules' and tokens')
_KEPT_LOCK = threading.Lock()  # (pages are shifted in worker threads)


def drawn_coins(seed: int, rule: str) -> dict[str, float]:
    """A memo of `chance(seed, rule, key)` by key (a string), for a caller that draws the coins
    in C and keeps them in it for the next: the memo least recently asked is dropped first."""
    return _memo((seed, rule))


def _memo(kept_by: tuple[object, ...]) -> dict[str, Any]:
    with _KEPT_LOCK:
        memo = _KEPT.pop(kept_by, None)
        if memo is None or len(memo) > MEMO:
            memo = {}
        # (their sizes summed once: each episode keeps a few memos, and a process that served
        # hundreds of episodes held hundreds, summed again for each one dropped)
        kept = sum(map(len, _KEPT.values())) + len(memo)
        while _KEPT and (kept > MEMO or len(_KEPT) >= MEMOS):
            kept -= len(_KEPT.pop(next(iter(_KEPT))))
        _KEPT[kept_by] = memo
        return memo


def token_for(seed: int, *keys: object, length: int = 6) -> str:
    """A short neutral identifier (letters then letters/digits) derived from the seed and keys."""
    return _token(seed, keys, length)


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_ALPHABET = _LETTERS + "0123456789"


@lru_cache(maxsize=MEMO)
def _token(seed: int, keys: tuple[object, ...], length: int) -> str:
    # Made in C where it is built (`shifts.native`, the same draws: a first load under a new
    # seed names thousands of elements anew, 2.8 us each there, 6.2 in Python).
    return native.either(native.token, _token_read, keys_text(seed, "token", *keys), length)


def tokens(seed: int, rule: str, names: list[str], length: int = 6) -> list[str]:
    """`token_for(seed, rule, name, length=length)` of each name (a string), made together: in
    C, seeded side by side as `coins` are (`shifts.native`), and kept as they are."""
    prefix, memo = keys_prefix(seed, "token", rule), _memo((seed, "token", rule, length))
    return _made(memo, names, native.tokens, _tokens_read, prefix, length)


def _tokens_read(prefix: bytes, names: list[str], length: int) -> list[str]:
    """`tokens` in Python: each name's token (`_token_read` of `prefix` and its UTF-8)."""
    return [_token_read(prefix + name.encode("utf-8"), length) for name in names]


def _token_read(text: bytes, length: int) -> str:
    """The token for the keys' text (`keys_text`), which the C one follows: a letter, then
    letters or digits, `length` in all (at least one), drawn as `random.Random(seed).choice`
    draws (the fewest bits that hold the alphabet's size, drawn again while past it) on the
    generator seeded with the text's digest, without the Python-level Random and its method
    calls."""
    bits = _random.Random(_digest(text)).getrandbits

    def pick(alphabet: str) -> str:
        size = len(alphabet)
        width = size.bit_length()
        drawn = bits(width)
        while drawn >= size:
            drawn = bits(width)
        return alphabet[drawn]

    return pick(_LETTERS) + "".join([pick(_ALPHABET) for _ in range(length - 1)])
