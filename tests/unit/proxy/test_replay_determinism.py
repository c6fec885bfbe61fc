"""The deterministic clock and randomness put before a replayed document's scripts (in a real
browser: tests/integration/test_replay.py)."""

from __future__ import annotations

import html

from mitmproxy import http

from proxy.episode import EpisodeConfig, new_episode
from proxy.replay_determinism import (
    before_page_scripts,
    make_deterministic,
    random_seed,
    recorded_ms,
    script_for,
)
from tests.unit.proxy.conftest import NAV, request_flow

TAG = b"<script>T</script>"
EPISODE = new_episode(EpisodeConfig(replay_of="recorded", seed=7))


def test_the_script_goes_first_in_the_head_after_the_charset() -> None:
    page = b'<!DOCTYPE html><html lang="en"><HEAD id=h><meta charset="utf-8"><title>x</title>'
    assert before_page_scripts(page, TAG) == page.replace(b'utf-8">', b'utf-8">' + TAG)
    no_charset = b"<html><head><script>page()</script></head></html>"
    assert before_page_scripts(no_charset, TAG) == b"<html><head>" + TAG + no_charset[12:]
    assert before_page_scripts(b"<header>x</header>", TAG) == TAG + b"<header>x</header>"


def test_the_script_goes_before_a_script_that_comes_before_any_head() -> None:
    page = b"<!DOCTYPE html><script>early()</script><html><head><meta charset=utf-8></head>"
    assert before_page_scripts(page, TAG) == b"<!DOCTYPE html>" + TAG + page[15:]
    assert before_page_scripts(b"<script>a()</script>", TAG) == TAG + b"<script>a()</script>"


def test_the_clock_starts_at_the_recorded_time_and_randomness_is_seeded_per_load() -> None:
    assert recorded_ms("2024-03-01T12:00:00.250000+00:00") == 1709294400250
    assert recorded_ms("not a time") is None and recorded_ms(None) is None
    assert random_seed(7, 2) == random_seed(7, 2) != random_seed(7, 3) != random_seed(8, 2)
    assert 0 <= random_seed(7, 2) < 2**32
    script = script_for(1709294400250, 12345)
    assert "const recorded=1709294400250;" in script and "generator(12345)" in script
    assert "</" not in script and "<!--" not in script  # nothing that ends a <script> element
    assert "const recorded=null;" in script_for(None, 1)


def document(body: bytes, **headers: str) -> tuple[http.HTTPFlow, http.Response]:
    return request_flow("/", NAV), http.Response.make(
        200, body, {"Content-Type": "text/html; charset=utf-8", **headers}
    )


PAGE = b"<html><head><title>x</title><script>page()</script></head></html>"


def test_a_document_without_a_policy_gets_the_script_without_a_nonce() -> None:
    flow, response = document(PAGE)
    make_deterministic(flow, response, EPISODE, 1709294400250, 1)
    body = response.content or b""
    assert body.startswith(b"<html><head><script>(()=>{const recorded=1709294400250;")
    assert body.endswith(b"<title>x</title><script>page()</script></head></html>")
    assert response.headers["content-length"] == str(len(body))


def test_a_policy_s_own_nonce_is_reused_and_one_without_gets_the_episode_s() -> None:
    flow, response = document(PAGE, **{"Content-Security-Policy": "script-src 'nonce-abc'"})
    make_deterministic(flow, response, EPISODE, 0, 1)
    assert b'<script nonce="abc">' in (response.content or b"")
    assert response.headers["content-security-policy"] == "script-src 'nonce-abc'"
    strict = "default-src 'self'"
    flow, response = document(PAGE, **{"Content-Security-Policy": strict})
    make_deterministic(flow, response, EPISODE, 0, 1)
    nonce = EPISODE.nonce_for(flow.request.pretty_url)
    assert f'<script nonce="{nonce}">'.encode() in (response.content or b"")
    assert response.headers["content-security-policy"] == f"{strict} 'nonce-{nonce}'"
    meta = b"<meta http-equiv=Content-Security-Policy content=\"script-src 'self'\">"
    flow, response = document(PAGE.replace(b"<title>", meta + b"<title>"))
    make_deterministic(flow, response, EPISODE, 0, 1)
    served = html.unescape((response.content or b"").decode())
    assert f"content=\"script-src 'self' 'nonce-{nonce}'\"" in served


def test_only_html_documents_whose_bytes_can_take_it_get_the_script() -> None:
    cases = [
        (request_flow("/", {"Sec-Fetch-Dest": "empty"}), "text/html", {}),  # a fetched fragment
        (request_flow("/", {"Sec-Fetch-Dest": "script"}), "text/javascript", {}),
        (request_flow("/", NAV), "application/xhtml+xml", {}),
        (request_flow("/", NAV), "text/html", {"Content-Encoding": "gzip"}),  # kept encoded
        (request_flow("/", NAV), "text/html; charset=utf-16", {}),
    ]
    for flow, mime, headers in cases:
        response = http.Response.make(200, PAGE, {"Content-Type": mime, **headers})
        make_deterministic(flow, response, EPISODE, 0, 1)
        assert response.content == PAGE, (mime, headers)
    frame = request_flow("/", {"Sec-Fetch-Dest": "iframe"})
    response = http.Response.make(200, PAGE, {"Content-Type": "text/html"})
    make_deterministic(frame, response, EPISODE, 0, 1)
    assert response.content != PAGE
