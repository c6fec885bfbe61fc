"""The one envelope of every event in an episode's log: its type, when it happened (epoch
seconds), who wrote it, then its own fields. The store adds the event's `id`."""

from __future__ import annotations

import time
from typing import Any, Literal

# `proxy`: the addons; `api`: the admin API; `agent`: agent code through the API; `client`: the
# page runtime's beacons (popups shown and dismissed, interactions blocked).
Source = Literal["proxy", "api", "agent", "client"]
ENVELOPE = ("type", "ts", "source")


def event(event_type: str, source: Source, /, **fields: Any) -> dict[str, Any]:
    """A new event; `fields` may not overwrite the envelope."""
    clash = set(ENVELOPE) & set(fields)
    if clash:
        raise ValueError(f"an event's own fields may not be named {sorted(clash)}")
    return {"type": event_type, "ts": time.time(), "source": source, **fields}
