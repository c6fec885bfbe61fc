"""From an episode and a page to a ShiftContext and a shifted document: shared by the proxy's
response pipeline and the alignment checker, so both shift a page in exactly the same way."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from proxy import csp, metrics
from proxy.episode import Episode
from shifts import (
    HtmlDocument,
    ShiftContext,
    apply_shifts,
    finish,
    get_shift,
    native,
    run_shifts,
    volatile,
)
from shifts.document import FrozenDocument
from shifts.execution import plan_popup
from shifts.references import AssetRefs
from shifts.shift_context import DEFAULT_INTERNAL_PREFIX
from sites import SiteProfile, get_profile, holds_any_read, match_profile


def active_shifts(episode: Episode | None) -> list[str]:
    """The shifts to apply to bodies: none for unbound or suspended episodes, nor for replays
    (their recording holds the pages as shifted)."""
    if episode is None or episode.suspended or episode.replay_of:
        return []
    return episode.shift_names()


def page_digest(raw: bytes) -> bytes:
    """What a page's bytes are known by: the shifted-page cache and the asset index key their
    entries by it, computed once per load (`PageRewriter`)."""
    return hashlib.sha256(raw).digest()


def drifts_locators(episode: Episode | None) -> bool:
    """Whether the episode's shifts include the locator drift (which needs the page's
    knowledge, and renames what later answers may name)."""
    return "locator_drift" in active_shifts(episode)


def parses_document(episode: Episode) -> bool:
    """Whether shifting needs a full parse; a popup alone is a string insertion."""
    return any(get_shift(name).kind != "execution" for name in active_shifts(episode))


def site_for(episode: Episode, hostport: str, raw: bytes) -> SiteProfile:
    """The episode's pinned site, else the profile the page's signatures or host point to."""
    return get_profile(episode.site) if episode.site else match_profile(hostport, raw, holds_any)


def holds_any(page: bytes, words: tuple[bytes, ...]) -> bool:
    """`sites.holds_any_read`, in one pass where it is built (`shifts.native.holds_any`)."""
    return native.either(native.holds_any, holds_any_read, page, words)


def page_nonce(episode: Episode, header_policies: list[str], raw: bytes, url: str) -> str | None:
    """Reuse the page's own nonce when it has one; else a per-page nonce if a CSP needs it."""
    policies = [*header_policies, *csp.meta_policies(raw[: csp.META_POLICY_BYTES])]
    if not policies:
        return None
    return csp.existing_nonce(policies) or (
        episode.nonce_for(url) if csp.restricts(policies) else None
    )


def build_context(
    episode: Episode,
    *,
    url: str,
    hostport: str,
    raw: bytes,
    nonce: str | None,
    is_navigation: bool,
    load_index: int | None,
    internal_prefix: str,
    assets: AssetRefs | None = None,
) -> ShiftContext:
    return ShiftContext(
        episode_id=episode.id,
        seed=episode.seed,
        condition=episode.condition,
        regime=episode.regime,
        execution=episode.execution,
        regime_params=episode.regime_params.model_dump(),
        shift_params=episode.shift_params,
        site=site_for(episode, hostport, raw),
        url=url,
        load_index=load_index,
        is_navigation=is_navigation,
        nonce=nonce,
        internal_prefix=internal_prefix,
        beacon_key=episode.beacon_key,
        targets=episode.all_targets(),
        generation=episode.generation,
        assets=assets,
    )


def shift_document(
    episode: Episode,
    ctx: ShiftContext,
    raw: bytes,
    charset: str | None,
    shifted: ShiftedPages | None = None,
    knowledge_digest: str | None = None,
    digest: bytes | None = None,
    slot: str | None = None,
) -> HtmlDocument:
    """The page shifted for the episode. With `shifted`, the shifts that parse (contextual,
    perceptual) run once per distinct page and setting; the execution shift and the runtime tag
    (which depend on the load) run on every load, on the bytes. `slot`: which of the markup
    strings of one answer this is (`proxy.json_markup`), so each has a latest page of its
    own to swap per-request values into."""
    names = active_shifts(episode)
    parsing = [name for name in names if get_shift(name).kind != "execution"]
    if shifted is None or not parsing:  # (a popup alone is a string insertion: nothing to keep)
        return apply_shifts(names, HtmlDocument(raw, charset), ctx)
    rest = [name for name in names if name not in parsing]
    key = shifted.key(ctx, parsing, digest or page_digest(raw), charset, knowledge_digest, slot)
    frozen = shifted.get_or_make(
        key, lambda: run_shifts(parsing, HtmlDocument(raw, charset), ctx).freeze(), raw
    )
    return finish(run_shifts(rest, HtmlDocument.thaw(frozen), ctx), ctx)


@dataclasses.dataclass
class _Entry:
    """A page as the parsing shifts left it, and the page it was shifted from as the swaps read
    it (None: not kept); `counted`: what it counts against the cache's budget so far."""

    frozen: FrozenDocument
    reading: volatile.PageReading | None
    counted: int = 0

    def size(self) -> int:
        """The shifted page (and where its next loads' values are in it), the page it was
        shifted from and what the swaps read of it (made at its first next load, and at a
        later one that asks something new)."""
        reading = self.reading
        kept = len(self.frozen.body) + self.frozen.places_bytes
        return kept + (len(reading.page) + reading.size if reading else 0)


class ShiftedPages:
    """Pages as the parsing shifts left them, by everything those shifts read: the page's
    bytes and charset, the shifts and their parameters, seed, site, targets, URL, nonce,
    whether it is a navigation, and the knowledge it was shifted against. Not the episode: two
    episodes with the same settings share entries (a page's nonce is per episode where a CSP
    needs one, and then so is its entry). Bounded by the bytes it holds, least recently used
    out first; shared by the event loop and the worker threads big pages are shifted in.

    Single-flight: the first load of a page that others ask for while it is being shifted is
    shifted once; they wait for it (`shared`) rather than each parse it again, which is what
    a burst of first loads of a big page would otherwise cost in CPU and memory at once. So do
    loads of the page under the same settings with other per-request values: they wait for the
    one being shifted whole, and have their values swapped into it.

    Per-request values: most apps put a fresh nonce or CSRF token in every page, so a page's
    bytes are new at every load. Entries keep the bytes they were shifted from, and the last
    one made under each setting (the key without the digest) is known; a page that differs
    from it only in per-request values (`shifts.volatile`) is its shifted state with the new
    values swapped in (`swapped`), byte for byte what shifting it afresh gives, since no
    shift decides by those values. A swapped page is not kept: the cache holds pages shifted
    whole, which later loads are made from."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        # Each shifted state with the page it was shifted from, as the swaps read it (None:
        # not kept): what they read of it is kept with it, for all its next loads.
        self._entries: OrderedDict[tuple[object, ...], _Entry] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._in_flight: dict[tuple[object, ...], _InFlight] = {}
        # The setting (a key without its digest) -> the key of the last page shifted under it;
        # dropped with the entry.
        self._latest: dict[tuple[object, ...], tuple[object, ...]] = {}
        # The setting -> the load of a page under it being shifted whole (not swapped).
        self._whole_in_flight: dict[tuple[object, ...], _InFlight] = {}
        self.hits = self.misses = self.shared = self.swapped = 0

    @staticmethod
    def key(
        ctx: ShiftContext,
        names: list[str],
        digest: bytes,
        charset: str | None,
        knowledge_digest: str | None,
        slot: str | None = None,
    ) -> tuple[object, ...]:
        # The perceptual set is in `names` (its shifts), the condition too.
        settings = json.dumps([names, ctx.shift_params, ctx.targets], sort_keys=True)
        return (
            digest,
            charset,
            settings,
            ctx.seed,
            ctx.site.name,
            ctx.url,
            ctx.nonce,
            ctx.is_navigation,
            ctx.internal_prefix,
            knowledge_digest,
            slot,
        )

    def get_or_make(
        self,
        key: tuple[object, ...],
        make: Callable[[], FrozenDocument],
        raw: bytes | None = None,
    ) -> FrozenDocument:
        """The entry under `key`, made if there is none: from the last page of its setting
        when `raw` differs from it only in per-request values, else by `make`; once, however
        many threads ask at the same time. (Only worker threads can wait: the event loop
        shifts the pages below the offload size, which never go to a worker, so it never
        waits on one for the same bytes, and it never waits for another load of the page.)"""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                metrics.inc("shifted_pages_reused_total")
                return found.frozen
            flight = self._in_flight.get(key)
            making = flight is None
            if flight is None:
                flight = self._in_flight[key] = _InFlight()
                self.misses += 1
            else:
                flight.waiting += 1
        if not making:
            flight.done.wait()
            if flight.result is not None:
                with self._lock:
                    self.shared += 1
                return flight.result
            return make()  # the first attempt failed: this request fails (or not) on its own
        try:
            swapped = None
            if raw is not None:
                swapped = self._from_latest(key, raw)
                leader = self._whole_shift_of_setting(key, flight) if swapped is None else None
                if leader is not None and not _on_event_loop():
                    with self._lock:
                        leader.waiting += 1
                    # Another load of the page under these settings (other per-request values)
                    # is being shifted whole: this one waits and swaps its values into it, as
                    # a burst of first loads of a page with a nonce would each shift it whole.
                    # (Not the event loop: it would hold every other connection meanwhile; a
                    # page small enough to be shifted there costs less than that wait.)
                    leader.done.wait()
                    swapped = self._from_latest(key, raw)
            if swapped is not None:
                # Not kept: its values are this load's, which the next load does not carry,
                # and a swap costs a parse or less. Kept, a page with a nonce filled the cache
                # with one swapped page per load, evicting every other page's whole shift
                # (which then had to be made again) and holding up to `max_bytes` for nothing.
                flight.result = swapped
            else:
                made = make()
                if flight.waiting:  # (loads wait to swap into it: made once, not in each)
                    made.state_json  # noqa: B018
                flight.result = made
                metrics.inc("shifted_pages_shifted_total")
                self.put(key, made, raw)
            return flight.result
        finally:
            with self._lock:
                del self._in_flight[key]
                setting = _setting(key)
                if self._whole_in_flight.get(setting) is flight:
                    del self._whole_in_flight[setting]
            flight.done.set()

    def _whole_shift_of_setting(
        self, key: tuple[object, ...], flight: _InFlight
    ) -> _InFlight | None:
        """The load of another page under the same settings being shifted whole, if one is;
        else None, and `flight` is that load from now on."""
        with self._lock:
            leader = self._whole_in_flight.setdefault(_setting(key), flight)
        return None if leader is flight else leader

    def waiting(self, key: tuple[object, ...]) -> int:
        """How many requests wait for the page under `key` being shifted (for tests)."""
        with self._lock:
            flight = self._in_flight.get(key)
            return flight.waiting if flight is not None else 0

    def _from_latest(self, key: tuple[object, ...], raw: bytes) -> FrozenDocument | None:
        with self._lock:
            latest_key = self._latest.get(_setting(key), ())
            latest = self._entries.get(latest_key)
            if latest is not None:
                # In use: the swapped pages made from it (one per load) go out first.
                self._entries.move_to_end(latest_key)
        if latest is None or latest.reading is None:
            return None
        before = latest.reading.page
        swaps = volatile.swaps(before, raw)
        made = latest.frozen.with_values_swapped(swaps, before) if swaps else None
        with self._lock:
            # What the swaps read of the page (at its first next load, mostly) is counted.
            if self._entries.get(latest_key) is latest:
                counted, latest.counted = latest.counted, latest.size()
                self._bytes += latest.counted - counted
                self._evict()
            if made is not None:
                self.swapped += 1
        if made is not None:
            metrics.inc("shifted_pages_swapped_total")
        return made

    def put(
        self, key: tuple[object, ...], frozen: FrozenDocument, raw: bytes | None = None
    ) -> None:
        """Keep `frozen` (and the page's bytes, if given: the setting's latest page then),
        least recently used out first, within the byte budget."""
        entry = _Entry(frozen, None if raw is None else volatile.keep_reading(raw))
        entry.counted = entry.size()
        if entry.counted > self.max_bytes:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = entry
            self._bytes += entry.counted
            if raw is not None:
                self._latest[_setting(key)] = key
            self._evict()

    def _evict(self) -> None:
        """Least recently used out first, until the entries are within the budget (the lock
        held)."""
        while self._bytes > self.max_bytes and self._entries:
            evicted_key, evicted = self._entries.popitem(last=False)
            self._bytes -= evicted.counted
            if self._latest.get(_setting(evicted_key)) == evicted_key:
                del self._latest[_setting(evicted_key)]


def shift_offline(
    episode: Episode,
    url: str,
    raw: bytes,
    charset: str | None = None,
    policies: list[str] | None = None,
    assets: AssetRefs | None = None,
    shifted: ShiftedPages | None = None,
) -> tuple[ShiftContext, HtmlDocument]:
    """Shift a page as its first navigation in the episode would be, changing no state: the
    popup `once` would show is planned but its flag is not claimed (checks, benchmarks).
    `assets`: what the page's stylesheets and scripts reference (None: unknown). `shifted`:
    the pages shifted before, as a serving process keeps them (None: shifted afresh)."""
    parts = urlsplit(url)
    hostport = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    ctx = build_context(
        episode,
        url=url,
        hostport=hostport,
        raw=raw,
        nonce=page_nonce(episode, policies or [], raw, url),
        is_navigation=True,
        load_index=1,
        internal_prefix=DEFAULT_INTERNAL_PREFIX,
        assets=assets,
    )
    ctx = replace(ctx, popup=plan_popup(ctx))
    return ctx, shift_document(episode, ctx, raw, charset, shifted)


def _on_event_loop() -> bool:
    """Whether this thread runs an event loop (the proxy's), not a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _setting(key: tuple[object, ...]) -> tuple[object, ...]:
    """A key without its page digest (the first item): everything else the shifts read."""
    return key[1:]


@dataclass
class _InFlight:
    """A page being shifted, which other requests for it wait for."""

    done: threading.Event = field(default_factory=threading.Event)
    result: FrozenDocument | None = None
    waiting: int = 0
