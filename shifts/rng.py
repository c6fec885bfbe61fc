"""Determinism helpers: every random choice derives from (episode seed, rule name, stable key)."""

from __future__ import annotations

import hashlib
import random


def derive_seed(seed: int, *keys: object) -> int:
    """A 64-bit seed from the episode seed and any stable keys.

    Python's hash() is salted per process, so this hashes the keys' text with BLAKE2b: the same
    inputs give the same seed in every process and on every machine.
    """
    material = "\x1f".join([str(seed), *(str(key) for key in keys)]).encode("utf-8")
    return int.from_bytes(hashlib.blake2b(material, digest_size=8).digest(), "big")


def rng_for(seed: int, *keys: object) -> random.Random:
    """A private RNG for one decision; never shared, so call order cannot change the outcome."""
    return random.Random(derive_seed(seed, *keys))


def token_for(seed: int, *keys: object, length: int = 6) -> str:
    """A short neutral identifier (letters then letters/digits) derived from the seed and keys."""
    rng = rng_for(seed, "token", *keys)
    letters = "abcdefghijklmnopqrstuvwxyz"
    alphabet = letters + "0123456789"
    return rng.choice(letters) + "".join(rng.choice(alphabet) for _ in range(length - 1))
