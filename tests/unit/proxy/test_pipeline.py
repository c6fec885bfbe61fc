"""From an episode and a page to what the pipeline does: which shifts, whether to parse,
which site profile, which CSP nonce."""

from __future__ import annotations

from typing import Any

from proxy.episode import Episode, EpisodeConfig, new_episode
from proxy.pipeline import active_shifts, page_nonce, parses_document, site_for
from tests.helpers.fixtures import FIXTURES

WORDPRESS_PAGE = (FIXTURES / "wordpress" / "5.0.3__wp-login.html").read_bytes()
PLAIN = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>hi</p></body></html>"
URL = "http://app.test/page"


def episode(**config: Any) -> Episode:
    made = new_episode(EpisodeConfig.model_validate(config), "ep-1")
    return made.model_copy(update={"token": "fixed-token"})


def test_active_shifts_none_when_unbound_or_suspended() -> None:
    shifted = episode(shifts=["relabel", "popup"])
    assert active_shifts(shifted) == ["relabel", "popup"]
    assert active_shifts(None) == []
    assert active_shifts(shifted.model_copy(update={"suspended": True})) == []
    assert active_shifts(episode(condition="Src")) == []


def test_parses_document_only_for_shifts_that_need_a_tree() -> None:
    assert parses_document(episode(shifts=["popup"])) is False  # a popup is a string insertion
    assert parses_document(episode(shifts=["relabel"])) is True
    assert parses_document(episode(shifts=["popup", "restyle"])) is True
    assert parses_document(episode(condition="Src")) is False
    suspended = episode(shifts=["relabel"]).model_copy(update={"suspended": True})
    assert parses_document(suspended) is False


def test_site_for_pinned_wins_else_signatures_then_host() -> None:
    assert site_for(episode(site="gitlab"), "app.test:80", WORDPRESS_PAGE).name == "gitlab"
    unpinned = episode()
    assert site_for(unpinned, "app.test:80", WORDPRESS_PAGE).name == "wordpress"
    # Signatures win over the host: a WordPress page on Magento's port is WordPress.
    assert site_for(unpinned, "127.0.0.1:7780", WORDPRESS_PAGE).name == "wordpress"
    assert site_for(unpinned, "127.0.0.1:7780", PLAIN).name == "magento"
    assert site_for(unpinned, "app.test:80", PLAIN).name == "generic"


def test_page_nonce_without_any_policy_is_none() -> None:
    assert page_nonce(episode(), [], PLAIN, URL) is None


def test_page_nonce_reuses_the_pages_own() -> None:
    policy = "script-src 'nonce-abc123' 'strict-dynamic'; style-src 'self'"
    assert page_nonce(episode(), [policy], PLAIN, URL) == "abc123"


def test_page_nonce_derived_from_the_token_when_a_policy_restricts() -> None:
    nonce = page_nonce(episode(), ["script-src 'self'"], PLAIN, URL)
    assert nonce == "4cef457004c13da862d488"  # pinned: HMAC of the fixed token and the URL
    assert page_nonce(episode(), ["default-src 'self'"], PLAIN, "http://app.test/other") == (
        "1799fde6be36fb31dd5d9b"
    )


def test_page_nonce_reads_meta_policies() -> None:
    meta = PLAIN.replace(
        b"<title>",
        b'<meta http-equiv="Content-Security-Policy" content="script-src \'self\'"><title>',
    )
    assert page_nonce(episode(), [], meta, URL) == "4cef457004c13da862d488"
    own = meta.replace(b"'self'", b"'nonce-fromMeta'")
    assert page_nonce(episode(), [], own, URL) == "fromMeta"


def test_page_nonce_none_when_the_policy_allows_inline_anyway() -> None:
    assert page_nonce(episode(), ["img-src 'self'"], PLAIN, URL) is None
    assert page_nonce(episode(), ["default-src * 'unsafe-inline'"], PLAIN, URL) is None
