"""Every event has the one envelope, and an event's own fields cannot forge it."""

from __future__ import annotations

import time

import pytest

from proxy.events import event


def test_an_event_is_its_envelope_then_its_fields() -> None:
    before = time.time()
    made = event("page_served", "proxy", url="http://app.test/", load_index=2)
    assert list(made)[:3] == ["type", "ts", "source"]
    assert made["type"] == "page_served" and made["source"] == "proxy"
    assert before <= made["ts"] <= time.time()
    assert made["url"] == "http://app.test/" and made["load_index"] == 2


@pytest.mark.parametrize("field", ["type", "ts", "source"])
def test_a_field_may_not_overwrite_the_envelope(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        event("note", "agent", **{field: "forged"})
