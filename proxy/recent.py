"""A mapping that keeps the `limit` most recently used entries: per-process state about
episodes or origins must not grow with every episode a long-running service has seen."""

from __future__ import annotations

from collections import OrderedDict


class Recent[K, V](OrderedDict[K, V]):
    """At most `limit` entries, the least recently used out first."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def recall(self, key: K) -> V | None:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def keep(self, key: K, value: V) -> V:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)
        return value
