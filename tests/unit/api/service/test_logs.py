"""Browsers' background TLS handshakes are summarised: at most one line per host per minute."""

from __future__ import annotations

import logging

import pytest

from api.service.logs import HandshakeSummary
from proxy import metrics


class Clock:
    """The summary's time, set by the test: nothing here depends on how fast it runs."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def refused(host: str) -> logging.LogRecord:
    """mitmproxy's warning for a client that refuses the interception certificate."""
    message = (
        "Client TLS handshake failed. The client does not trust the proxy's certificate for "
        "%s (OpenSSL Error([('SSL routines', '', 'tls alert certificate unknown')]))"
    )
    return logging.LogRecord(
        "mitmproxy.proxy.server", logging.WARNING, __file__, 1, message, (host,), None
    )


def test_one_line_per_host_per_minute_and_the_count_of_the_others() -> None:
    clock = Clock()
    summary = HandshakeSummary(window_s=60, clock=clock)
    before = metrics.COUNTERS["tls_handshake_failures_total"]
    first = refused("content-autofill.googleapis.com")
    assert summary.filter(first)
    assert "content-autofill.googleapis.com" in first.getMessage()
    assert "logged once a minute" in first.getMessage()
    for _ in range(200):
        clock.now += 0.1
        assert not summary.filter(refused("content-autofill.googleapis.com"))
    # Another host has its own line.
    assert summary.filter(refused("update.googleapis.com"))
    clock.now = 1000.0 + 61
    after_a_minute = refused("content-autofill.googleapis.com")
    assert summary.filter(after_a_minute)
    assert "and 200 more for content-autofill.googleapis.com in the last 61 s" in (
        after_a_minute.getMessage()
    )
    assert metrics.COUNTERS["tls_handshake_failures_total"] - before == 203


@pytest.mark.parametrize(
    "message",
    [
        "Client TLS handshake failed. Client and mitmproxy cannot agree on a TLS version to use.",
        "Server TLS handshake failed. Certificate verify failed: unable to get local issuer",
        "upstream 127.0.0.1:9 failed for http://127.0.0.1:9/: connection refused",
    ],
)
def test_other_lines_pass_untouched(message: str) -> None:
    summary = HandshakeSummary(clock=Clock())
    for _ in range(3):
        record = logging.LogRecord("mitmproxy", logging.WARNING, __file__, 1, message, (), None)
        assert summary.filter(record) and record.getMessage() == message
