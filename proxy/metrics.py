"""Process-wide counters, rendered as Prometheus text by the admin API."""

from __future__ import annotations

from collections import Counter

COUNTERS: Counter[str] = Counter()

HELP = {
    "requests_total": "Requests seen by the proxy",
    "rejected_total": "Requests answered 407/503 by episode binding",
    "pages_rewritten_total": "HTML responses changed by at least one shift",
    "pages_unchanged_total": "Rewritable HTML responses no shift changed (served byte-exact)",
    "popups_injected_total": "Navigation documents that got a popup",
    "shifted_pages_reused_total": "Pages whose parsing shifts were not run again: the same "
    "bytes shifted before under the same settings",
    "shifted_pages_swapped_total": "Pages made from the last page of their settings with "
    "new per-request values (nonces, CSRF fields) swapped in, instead of shifted afresh",
    "shifted_pages_shifted_total": "Pages whose parsing shifts ran (a page seen the first time)",
    "rewrite_errors_total": "Responses that failed closed because shifting failed",
    "beacon_events_total": "Client runtime events accepted by the beacon",
    "recording_errors_total": "Responses, episodes or events the record directory could not keep",
    "full_collections_total": "Full garbage collections run to free the bodies of finished "
    "exchanges (--collect-after-bytes)",
    "full_collection_us_total": "CPU microseconds they took (the event loop's)",
    "tls_handshake_failures_total": "Client TLS handshakes that failed, logged at most once "
    "a minute per host (mostly browsers' background requests refusing the interception CA)",
}


def inc(name: str, amount: int = 1) -> None:
    COUNTERS[name] += amount


def render(gauges: dict[str, float]) -> str:
    lines = []
    for name, text in HELP.items():
        lines += [
            f"# HELP skillshift_{name} {text}",
            f"# TYPE skillshift_{name} counter",
            f"skillshift_{name} {COUNTERS[name]}",
        ]
    for name, value in gauges.items():
        lines += [f"# TYPE skillshift_{name} gauge", f"skillshift_{name} {value}"]
    return "\n".join(lines) + "\n"
