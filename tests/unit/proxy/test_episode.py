"""The episode model: what an episode may be configured with, and the secrets derived from
its token (pinned: the same token gives the same key and nonces in every process)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from proxy.episode import DEFAULT_TTL_S, Episode, EpisodeConfig, new_episode


def invalid(**config: Any) -> str:
    with pytest.raises(ValidationError) as error:
        EpisodeConfig.model_validate(config)
    return str(error.value)


def test_defaults() -> None:
    config = EpisodeConfig()
    assert (config.condition, config.regime, config.seed, config.site) == ("Src", "once", 0, None)
    assert config.ttl_s == DEFAULT_TTL_S == 86400 and config.shift_names() == []


def test_unknown_site_names_the_known_ones() -> None:
    message = invalid(site="joomla")
    assert "unknown site 'joomla'" in message and "'wordpress'" in message
    assert EpisodeConfig(site="magento").site == "magento"


def test_unknown_shift_is_refused() -> None:
    assert "unknown shift 'teleport'" in invalid(shifts=["relabel", "teleport"])
    assert EpisodeConfig(shifts=["relabel"]).shift_names() == ["relabel"]


def test_a_shift_given_twice_is_refused() -> None:
    message = invalid(shifts=["locator_drift", "relabel", "locator_drift"])
    assert "shift 'locator_drift' is given more than once" in message


def test_shift_params_only_for_shifts_the_episode_applies() -> None:
    message = invalid(shifts=["relabel"], shift_params={"restyle": {"min_angle": 90}})
    assert "shift_params for 'restyle', which this episode does not apply" in message
    config = EpisodeConfig(shifts=["restyle"], shift_params={"restyle": {"min_angle": 90}})
    assert config.shift_params["restyle"]["min_angle"] == 90


def test_shift_params_are_validated_against_the_shifts_schema() -> None:
    message = invalid(shifts=["restyle"], shift_params={"restyle": {"nope": 1}})
    assert "nope" in message and "Extra inputs are not permitted" in message
    assert "integer" in invalid(shifts=["restyle"], shift_params={"restyle": {"min_angle": "x"}})


def test_origins_are_normalised_and_checked() -> None:
    config = EpisodeConfig(targets={"http://a.test:80/": "https://b.test:8443/"})
    assert config.targets == {"http://a.test:80": "https://b.test:8443"}
    for source, target in [
        ("ftp://a.test", "http://b.test"),
        ("http://a.test/path", "http://b.test"),
        ("http://a.test", "b.test:80"),
        ("http://a b", "http://b.test"),
    ]:
        assert "is not an origin like http://host:port" in invalid(targets={source: target})


def test_episode_targets_override_the_profiles() -> None:
    config = EpisodeConfig(
        site="magento",
        targets={"http://127.0.0.1": "http://127.0.0.1:9999", "http://x": "http://y"},
    )
    assert config.all_targets() == {
        "http://127.0.0.1": "http://127.0.0.1:9999",
        "http://x": "http://y",
    }
    assert EpisodeConfig(site="gitlab").all_targets() == {
        "http://127.0.0.1:8080": "http://127.0.0.1:8081"
    }
    assert EpisodeConfig().all_targets() == {}


@pytest.mark.parametrize("seed", [True, False, 1.0, "1", -1, 2**63])
def test_the_seed_is_strict(seed: object) -> None:
    invalid(seed=seed)  # JSON true is not the seed 1, nor "1", nor 1.0


def test_seed_bounds_and_json_true() -> None:
    assert EpisodeConfig.model_validate_json('{"seed": 9223372036854775807}').seed == 2**63 - 1
    with pytest.raises(ValidationError):
        EpisodeConfig.model_validate_json('{"seed": true}')


@pytest.mark.parametrize("ttl", [9, 0, -5, 30 * 24 * 3600 + 1, True, 60.5, "60"])
def test_ttl_bounds(ttl: object) -> None:
    invalid(ttl_s=ttl)


@pytest.mark.parametrize("ttl", [10, 3600, 30 * 24 * 3600])
def test_ttl_in_bounds(ttl: int) -> None:
    assert EpisodeConfig(ttl_s=ttl).ttl_s == ttl


def test_unknown_fields_and_conditions_are_refused() -> None:
    invalid(colour="red")
    invalid(condition="Src-Both")
    invalid(regime="twice")


def test_new_episode_gets_identity_and_lifetime() -> None:
    episode = new_episode(EpisodeConfig(ttl_s=120, tags={"run": "1"}), "my-ep")
    assert episode.id == "my-ep" and episode.tags == {"run": "1"}
    assert episode.expires_at == int(episode.created_at) + 120
    other = new_episode(EpisodeConfig())
    assert len(other.id) == 16 and other.token != episode.token and len(episode.token) >= 24


FIXED = Episode(id="ep-1", token="fixed-token", created_at=0.0, expires_at=10)


def test_beacon_key_and_nonce_are_pinned_for_a_fixed_token() -> None:
    # Computed once; the same in every process (HMAC-SHA256 of the token, no salted hash).
    assert FIXED.beacon_key == "3caecaa7bd24dbf6c88fe24e"
    assert FIXED.nonce_for("http://app.test/page") == "4cef457004c13da862d488"
    assert FIXED.nonce_for("http://app.test/other") == "1799fde6be36fb31dd5d9b"


def test_derived_secrets_are_not_the_token_and_change_with_it() -> None:
    other = FIXED.model_copy(update={"token": "another-token"})
    assert FIXED.token not in FIXED.beacon_key and other.beacon_key != FIXED.beacon_key
    assert other.nonce_for("http://app.test/page") != FIXED.nonce_for("http://app.test/page")
    moved = FIXED.model_copy(update={"id": "ep-2"})
    assert moved.beacon_key != FIXED.beacon_key  # the key is per episode id too


def test_token_and_beacon_key_checks() -> None:
    assert FIXED.check_token("fixed-token") and not FIXED.check_token("fixed-token2")
    assert not FIXED.check_token("")
    assert FIXED.check_beacon_key("3caecaa7bd24dbf6c88fe24e")
    assert not FIXED.check_beacon_key("fixed-token")


def test_an_episode_records_every_response_unless_told_otherwise() -> None:
    """Complete by default: a replay needs a page's stylesheets, scripts and data too."""
    assert EpisodeConfig().record == "all"
    assert EpisodeConfig.model_validate({"record": True}).record == "all"
    assert EpisodeConfig.model_validate({"record": False}).record == "off"
    assert EpisodeConfig.model_validate({"record": "pages"}).record == "pages"
