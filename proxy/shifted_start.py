"""A page streamed with its start shifted: the first bytes held until they are enough to shift,
then the rest passed on as it comes.

An execution-only page (`Src-Exec`) only gains a deferred script at the start of its `<head>`,
placed, configured and made safe by what its first bytes say (its prolog and charset, the site
its head names, a `<meta>` policy). Buffering the whole page for that costs a relay's work
again: the body held, copied, and counted towards the next full collection. So such a page is
streamed through `ShiftedStart`, mitmproxy's `response.stream` transform: it holds the body's
first `hold` bytes, asks `shift` for their shifted form, sends that, and then each chunk as it
comes (mitmproxy sends each piece the transform returns as it is: in chunks, an empty one ends
the body, so none is ever returned). `shift` may answer None when a start is not enough (a
policy to patch wherever it is, a prolog that runs on): the transform then holds the whole
body and asks again at its end, which is what buffering it would have done.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

# `shift(start, whole)`: the shifted form of the body's first bytes (all of it when `whole`),
# or None when more of the body is needed (never when `whole`).
StartShift = Callable[[bytes, bool], bytes | None]


class ShiftedStart:
    """mitmproxy's `response.stream` callable for a page whose start is shifted. `limit`: the
    most bytes it holds, or keeps: a page whose start has not settled by then goes out as it
    came (`unshifted`, as a buffered page past the same limit does), and one kept past it is
    no longer kept. `keep`: the upstream's bytes are kept whole too (`source`, once the body
    has ended), for a recording of the page the shift was made from."""

    def __init__(self, shift: StartShift, hold: int, limit: int, keep: bool = False) -> None:
        self.shift = shift
        self.hold = hold
        self.limit = limit
        self.ended = False  # the upstream's body has ended (its last, empty, chunk was seen)
        self.unshifted = False  # it went out as it came: held past the limit
        self._held: list[bytes] | None = []  # (None: the start was sent)
        self._held_bytes = 0
        self._kept: list[bytes] | None = [] if keep else None
        self.kept_bytes = 0  # (of the upstream's body kept so far)

    def __call__(self, chunk: bytes) -> list[bytes]:
        """The pieces to send for this chunk of the upstream's body (b"": its end)."""
        if self._kept is not None:
            self._kept.append(chunk)
            self.kept_bytes += len(chunk)
            if self.kept_bytes > self.limit:
                self._kept, self.kept_bytes = None, 0
        if chunk == b"":
            self.ended = True
        if self._held is None:
            return [chunk] if chunk else []
        self._held.append(chunk)
        self._held_bytes += len(chunk)
        if self._held_bytes > self.limit:
            held, self._held, self.unshifted = b"".join(self._held), None, True
            return [held] if held else []
        if not self.ended and self._held_bytes < self.hold:
            return []
        start = b"".join(self._held)
        shifted = self.shift(start, self.ended)
        if shifted is None:
            if self.ended:
                raise RuntimeError("a shift of a whole page must give its bytes")
            self._held = [start]
            self.hold = sys.maxsize  # (the whole body, then)
            return []
        self._held = None
        return [shifted] if shifted else []

    @property
    def source(self) -> bytes | None:
        """The upstream's body as it came, once it has ended (None: not kept, or not ended)."""
        if self._kept is None or not self.ended:
            return None
        return b"".join(self._kept)
