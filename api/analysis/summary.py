"""An episode's events summarised: what was served, what the drift changed, what popped up,
what it cost the agent."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from api.analysis.drift import drift_summary
from proxy.store import EpisodeStore

PAGE = 1000


async def all_events(store: EpisodeStore, episode_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = None
    while True:
        page = await store.read_events(episode_id, after=after, limit=PAGE)
        events += page
        if len(page) < PAGE:
            return events
        after = page[-1]["id"]


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "count": len(values),
        "median": round(statistics.median(values), 1),
        "mean": round(statistics.fmean(values), 1),
        "max": round(max(values), 1),
    }


def summarise(events: list[dict[str, Any]]) -> dict[str, Any]:
    by_type = Counter(str(event["type"]) for event in events)
    served = [e for e in events if e["type"] == "page_served"]
    shown_at: dict[tuple[Any, Any], float] = {}
    dismiss_ms: list[float] = []
    for event in events:
        key = (event.get("load"), event.get("url"))
        if event["type"] == "popup_shown" and isinstance(event.get("t"), int | float):
            shown_at[key] = float(event["t"])
        elif event["type"] == "popup_dismissed" and key in shown_at:
            dismiss_ms.append(float(event["t"]) - shown_at.pop(key))
    draws = [e for e in events if e["type"] == "random_draw"]
    return {
        "events": len(events),
        "pages": {
            "served": len(served),
            "navigations": sum(e.get("kind") == "document" for e in served),
            "shifted": sum(bool(e.get("changed")) for e in served),
            "skipped": by_type["rewrite_skipped"],
            "errors": by_type["rewrite_error"],
        },
        "popups": {
            "injected": by_type["popup_injected"],
            "injected_by_kind": dict(
                Counter(e.get("kind") for e in events if e["type"] == "popup_injected")
            ),
            "shown": by_type["popup_shown"],
            "dismissed": by_type["popup_dismissed"],
            "dismissed_by": dict(
                Counter(e.get("how") for e in events if e["type"] == "popup_dismissed")
            ),
            "suppressed": by_type["popup_suppressed"],
            "blocked_interactions": by_type["blocked_interaction"],
            "time_to_dismiss_ms": _stats(dismiss_ms),
        },
        "perceptual": drift_summary(events),
        "random_draws": {"draws": len(draws), "fired": sum(bool(d.get("fired")) for d in draws)},
        "agent_events": dict(Counter(e["type"] for e in events if e.get("source") == "agent")),
    }
