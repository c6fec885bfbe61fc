"""Determinism helpers. The values are pinned: computed once, they must be the same in every
process and on every machine (no salted hash), or a seeded episode could not be replayed."""

from shifts.rng import chance, derive_seed, rng_for, token_for


def test_derive_seed_is_pinned() -> None:
    assert derive_seed(7, "x") == 6685767190865295431
    assert derive_seed(7, "a", 1) == 15168347752539518784
    assert derive_seed(0) == 9523843951405948789
    assert derive_seed(7, "a", 1) != derive_seed(8, "a", 1)
    assert derive_seed(7, "a", 1) != derive_seed(7, "a", 2)
    assert derive_seed(7, "a", 1) != derive_seed(7, "a1")  # keys are separated, not glued


def test_rng_and_chance_are_pinned() -> None:
    assert rng_for(1, "x").random() == 0.5796831934915713
    assert chance(7, "x") == 0.9841037684121962
    assert chance(7, "x") == rng_for(7, "x").random()  # the memo holds the first draw
    # (drawn without `random.Random`'s Python layer: the same first draw for every seed)
    for key in range(3000):
        assert chance(11, "wrap", key) == rng_for(11, "wrap", key).random()
    assert chance(2**64 - 1, "x") == rng_for(2**64 - 1, "x").random()
    # A private stream per decision: drawing from one does not move another.
    one = rng_for(1, "x")
    one.random()
    assert rng_for(1, "x").random() == 0.5796831934915713


def test_tokens_are_pinned_neutral_identifiers() -> None:
    assert token_for(3, "popup") == "yrhe93"
    assert token_for(3, "popup", length=10) == "yrhe93j58b"
    assert token_for(4, "popup") != "yrhe93"
    token = token_for(3, "popup")
    assert token[0].isalpha() and token.isalnum() and len(token) == 6
    # (drawn without `random.Random`'s Python layer: the tokens its `choice` draws)
    letters = "abcdefghijklmnopqrstuvwxyz"
    for key in range(3000):
        rng = rng_for(5, "token", "id", key)
        drawn = rng.choice(letters) + "".join(rng.choice(letters + "0123456789") for _ in range(7))
        assert token_for(5, "id", key, length=8) == drawn
