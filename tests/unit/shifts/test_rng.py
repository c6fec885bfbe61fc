from shifts.rng import derive_seed, rng_for, token_for


def test_same_inputs_same_stream_different_keys_differ() -> None:
    assert derive_seed(7, "a", 1) == derive_seed(7, "a", 1)
    assert derive_seed(7, "a", 1) != derive_seed(8, "a", 1)
    assert derive_seed(7, "a", 1) != derive_seed(7, "a", 2)
    assert [rng_for(1, "x").random() for _ in range(3)] == [rng_for(1, "x").random()] * 3


def test_tokens_are_neutral_identifiers() -> None:
    token = token_for(3, "popup")
    assert token == token_for(3, "popup") and token != token_for(4, "popup")
    assert token[0].isalpha() and token.isalnum() and len(token) == 6
