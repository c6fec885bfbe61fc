"""What was read of a text, kept by the text, bounded by the texts' size.

A page's inline scripts and styles are read once for every page that holds them (`jslex`,
`references.css`). Some hold a page's own values (WordPress's block editor puts 115 KB of
settings with the post's nonces in one script): another text at each load, so a count of
entries would hold hundreds of such texts. What is kept of a text is at most about its size
(its literals, a few names), so the texts' characters bound it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable


class KeptByText[T]:
    """Values by their texts, the least recently asked dropped first past `max_chars` of
    texts; a text longer than that is not kept. Safe across threads (pages are shifted on
    several)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._values: OrderedDict[str, T] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, text: str) -> tuple[bool, T | None]:
        """(whether the text's value is kept, the value)."""
        with self._lock:
            if text not in self._values:
                return False, None
            self._values.move_to_end(text)
            return True, self._values[text]

    def get_or_make(self, text: str, make: Callable[[str], T]) -> T:
        """The text's kept value, or `make(text)` kept (made outside the lock: two threads
        asking for one new text may both make it, and the same value)."""
        known, value = self.get(text)
        if known:
            return value  # type: ignore[return-value]  # (kept: a T, None when T holds it)
        made = make(text)
        self.put(text, made)
        return made

    def put(self, text: str, value: T) -> None:
        if len(text) > self.max_chars:
            return
        with self._lock:
            if text not in self._values:
                self._chars += len(text)
            self._values[text] = value
            while self._chars > self.max_chars:
                dropped, _ = self._values.popitem(last=False)
                self._chars -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._chars = 0
