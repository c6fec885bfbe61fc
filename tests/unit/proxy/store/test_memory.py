"""The embedded store's event log gives a full collection nothing to walk: the service runs
collections as it goes (`proxy.collector`), and each walks every tracked object it holds."""

from __future__ import annotations

import gc
import time

import pytest

from proxy.store import MemoryStore


async def test_a_long_event_log_adds_no_object_to_the_collections() -> None:
    store = MemoryStore()
    expires_at = int(time.time()) + 600
    await store.create_episode("e1", {"id": "e1"}, expires_at)
    gc.collect()
    before = len(gc.get_objects())
    for load in range(1000):
        event = {"type": "page_served", "load_index": load, "shifts": {"locator_drift": {"n": 3}}}
        await store.append_event("e1", event, expires_at)
    gc.collect()
    assert len(gc.get_objects()) - before < 50  # as dicts: 2,000 more
    events = await store.read_events("e1", limit=2)
    assert events[1]["shifts"] == {"locator_drift": {"n": 3}} and events[1]["load_index"] == 1


async def test_an_event_that_is_not_json_changes_nothing() -> None:
    store = MemoryStore()
    expires_at = int(time.time()) + 600
    await store.create_episode("e1", {"id": "e1"}, expires_at)
    first = await store.append_event("e1", {"type": "a"}, expires_at)
    with pytest.raises(TypeError):
        await store.append_event("e1", {"type": "bad", "tags": {1, 2}}, expires_at)
    third = await store.append_event("e1", {"type": "c"}, expires_at)
    await store.append_event("e1", {"type": "d"}, expires_at)
    assert [event["type"] for event in await store.read_events("e1", after=first)] == ["c", "d"]
    assert [event["type"] for event in await store.read_events("e1", after=third)] == ["d"]
    assert await store.count_events("e1") == 3
