"""From an episode and a page to what the pipeline does: which shifts, whether to parse,
which site profile, which CSP nonce."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.episode import Episode, EpisodeConfig, new_episode
from proxy.page_shift import (
    ShiftedPages,
    active_shifts,
    build_context,
    page_nonce,
    parses_document,
    shift_document,
    site_for,
)
from shifts import HtmlDocument, volatile
from shifts.execution import plan_popup
from shifts.references import EMPTY
from tests.helpers.fixtures import FIXTURES, fixture_pages

WORDPRESS_PAGE = (FIXTURES / "wordpress" / "5.0.3__wp-login.html").read_bytes()
PLAIN = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>hi</p></body></html>"
URL = "http://app.test/page"


def episode(**config: Any) -> Episode:
    made = new_episode(EpisodeConfig.model_validate(config), "ep-1")
    return made.model_copy(update={"token": "fixed-token"})


def test_active_shifts_none_when_unbound_or_suspended() -> None:
    shifted = episode(shifts=["relabel", "popup"])
    assert active_shifts(shifted) == ["relabel", "popup"]
    assert active_shifts(None) == []
    assert active_shifts(shifted.model_copy(update={"suspended": True})) == []
    assert active_shifts(episode(condition="Src")) == []


def test_parses_document_only_for_shifts_that_need_a_tree() -> None:
    assert parses_document(episode(shifts=["popup"])) is False  # a popup is a string insertion
    assert parses_document(episode(shifts=["relabel"])) is True
    assert parses_document(episode(shifts=["popup", "restyle"])) is True
    assert parses_document(episode(condition="Src")) is False
    suspended = episode(shifts=["relabel"]).model_copy(update={"suspended": True})
    assert parses_document(suspended) is False


def test_site_for_pinned_wins_else_signatures_then_host() -> None:
    assert site_for(episode(site="gitlab"), "app.test:80", WORDPRESS_PAGE).name == "gitlab"
    unpinned = episode()
    assert site_for(unpinned, "app.test:80", WORDPRESS_PAGE).name == "wordpress"
    # Signatures win over the host: a WordPress page on Magento's port is WordPress.
    assert site_for(unpinned, "127.0.0.1:7780", WORDPRESS_PAGE).name == "wordpress"
    assert site_for(unpinned, "127.0.0.1:7780", PLAIN).name == "magento"
    assert site_for(unpinned, "app.test:80", PLAIN).name == "generic"


def test_page_nonce_without_any_policy_is_none() -> None:
    assert page_nonce(episode(), [], PLAIN, URL) is None


def test_page_nonce_reuses_the_pages_own() -> None:
    policy = "script-src 'nonce-abc123' 'strict-dynamic'; style-src 'self'"
    assert page_nonce(episode(), [policy], PLAIN, URL) == "abc123"


def test_page_nonce_derived_from_the_token_when_a_policy_restricts() -> None:
    nonce = page_nonce(episode(), ["script-src 'self'"], PLAIN, URL)
    assert nonce == "4cef457004c13da862d488"  # pinned: HMAC of the fixed token and the URL
    assert page_nonce(episode(), ["default-src 'self'"], PLAIN, "http://app.test/other") == (
        "1799fde6be36fb31dd5d9b"
    )


def test_page_nonce_reads_meta_policies() -> None:
    meta = PLAIN.replace(
        b"<title>",
        b'<meta http-equiv="Content-Security-Policy" content="script-src \'self\'"><title>',
    )
    assert page_nonce(episode(), [], meta, URL) == "4cef457004c13da862d488"
    own = meta.replace(b"'self'", b"'nonce-fromMeta'")
    assert page_nonce(episode(), [], own, URL) == "fromMeta"


def test_page_nonce_none_when_the_policy_allows_inline_anyway() -> None:
    assert page_nonce(episode(), ["img-src 'self'"], PLAIN, URL) is None
    assert page_nonce(episode(), ["default-src * 'unsafe-inline'"], PLAIN, URL) is None


def shifted_bytes(
    episode_: Episode, raw: bytes, load: int, shifted: ShiftedPages | None
) -> tuple[bytes, dict[str, object], list[dict[str, object]]]:
    ctx = build_context(
        episode_,
        url=URL,
        hostport="app.test:80",
        raw=raw,
        nonce=page_nonce(episode_, [], raw, URL),
        is_navigation=True,
        load_index=load,
        internal_prefix="/__ss/",
        assets=EMPTY,
    )
    ctx = replace(ctx, popup=plan_popup(ctx))
    doc = shift_document(episode_, ctx, raw, None, shifted, "assets-1")
    return doc.to_bytes(), doc.notes, doc.changes


@pytest.mark.parametrize("condition", ["Src-Perc", "Tgt-Perc", "Src-Exec", "Tgt-Perc extended"])
def test_a_page_shifted_again_is_the_same_without_a_parse(condition: str) -> None:
    """Every saved page, three seeds, three loads (popups differ by load): the same bytes,
    notes and change map whether the parsing shifts ran or came from the cache (markup put
    at the start of <head> and at its end, by the extended set's restyle too)."""
    shifted = ShiftedPages()
    condition, _, extended = condition.partition(" ")
    for page in fixture_pages():
        raw = page.read_bytes()
        for seed in range(3):
            config: dict[str, Any] = {"condition": condition, "seed": seed, "regime": "random"}
            if extended:
                config["perceptual"] = "extended"
            if condition.startswith("Tgt"):
                config["targets"] = {"http://app.test": "http://target.test"}
            for load in (1, 2, 3):
                fresh = shifted_bytes(episode(**config), raw, load, None)
                assert shifted_bytes(episode(**config), raw, load, shifted) == fresh, page.name
    if condition == "Src-Exec":
        assert shifted.hits + shifted.misses == 0  # a popup alone is no parse: nothing kept
    else:
        pages = len(fixture_pages())
        assert shifted.misses == pages * 3 and shifted.hits == pages * 3 * 2


def test_what_the_parsing_shifts_read_tells_entries_apart() -> None:
    shifted = ShiftedPages()
    base = shifted_bytes(episode(condition="Src-Perc", seed=1), WORDPRESS_PAGE, 1, shifted)[0]
    for other in (
        episode(condition="Src-Perc", seed=2),
        episode(condition="Src-Perc", seed=1, perceptual="extended"),
        episode(condition="Src-Perc", seed=1, shift_params={"locator_drift": {"wrap_rate": 1}}),
        episode(condition="Src-Perc", seed=1, site="gitlab"),
    ):
        assert shifted_bytes(other, WORDPRESS_PAGE, 1, shifted)[0] != base
    assert shifted.hits == 0
    # Another episode with the same settings shares the entry (no CSP here: no nonce).
    again = new_episode(EpisodeConfig(condition="Src-Perc", seed=1), "ep-2")
    assert shifted_bytes(again, WORDPRESS_PAGE, 1, shifted)[0] == base.replace(
        episode(condition="Src-Perc").beacon_key.encode(), again.beacon_key.encode()
    )
    assert shifted.hits == 1


def test_the_cache_holds_at_most_its_bytes() -> None:
    shifted = ShiftedPages(max_bytes=3 * len(WORDPRESS_PAGE))
    for seed in range(10):
        shifted_bytes(episode(condition="Src-Perc", seed=seed), WORDPRESS_PAGE, 1, shifted)
    assert shifted._bytes <= shifted.max_bytes and 1 <= len(shifted._entries) <= 3


def _asked_while_made(shifted: ShiftedPages, make: Any, callers: int) -> list[Future[Any]]:
    """`callers` threads ask for one page while the first one is still making it: the maker is
    held until every other caller waits for it (a condition, not a sleep)."""
    key = ("page",)
    release, started = threading.Event(), threading.Event()

    def held() -> Any:
        started.set()
        release.wait()
        return make()

    with ThreadPoolExecutor(callers) as pool:
        futures = [pool.submit(shifted.get_or_make, key, held)]
        started.wait()
        futures += [pool.submit(shifted.get_or_make, key, make) for _ in range(callers - 1)]
        # Polling a condition. The deadline is no measure of speed: without single-flight the
        # others never wait, and this says so instead of hanging.
        deadline = time.monotonic() + 60
        while shifted.waiting(key) < callers - 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        waited = shifted.waiting(key)
        release.set()
        concurrent.futures.wait(futures)
    assert waited == callers - 1, "the other callers did not wait for the first"
    assert shifted.waiting(key) == 0
    return futures


def test_concurrent_first_loads_of_a_page_shift_it_once() -> None:
    shifted = ShiftedPages()
    frozen = HtmlDocument(WORDPRESS_PAGE).freeze()
    made: list[int] = []

    def make() -> Any:
        made.append(1)
        return frozen

    futures = _asked_while_made(shifted, make, callers=8)
    assert len(made) == 1 and all(future.result() is frozen for future in futures)
    assert (shifted.misses, shifted.shared, shifted.hits) == (1, 7, 0)


def test_a_first_load_that_fails_does_not_fail_the_others() -> None:
    shifted = ShiftedPages()
    frozen = HtmlDocument(WORDPRESS_PAGE).freeze()
    attempts: list[int] = []

    def make() -> Any:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("the first shift broke")
        return frozen

    first, *rest = _asked_while_made(shifted, make, callers=3)
    with pytest.raises(RuntimeError, match="first shift broke"):
        first.result()
    assert all(future.result() is frozen for future in rest)


def with_values(
    raw: bytes,
    values: tuple[str, ...],
    name_value: str | None = None,
    numbers: tuple[str, str] | None = None,
) -> bytes:
    """A saved page as an app serves it at one request: per-request values in a few links'
    query, a hidden CSRF field, an inline script (after a `<` that opens no tag, as
    WordPress's CDATA openers), a data attribute, a meta tag, a form's name (Redmine names
    each form anew) and the text (a form key, say); `name_value` also puts one in a class
    name (where shifts decide by it); `numbers`, a response time in a script (as MediaWiki
    writes it) and a clock's seconds in a text (as WordPress's settings show it)."""
    nonce, csrf, script, text = values
    page = raw.decode("utf-8", "replace")
    links = iter(range(3))
    page = re.sub(
        r'(<a\b[^>]*?href=")([^"#]*)(")',
        lambda m: (
            m.group(1) + m.group(2) + f"?_wpnonce={nonce}" + m.group(3)
            if next(links, None) is not None
            else m.group(0)
        ),
        page,
    )
    extra = (
        f'<form action="/post?key={csrf}" name="new_issue-{csrf[::-1]}">'
        f'<input type="hidden" name="csrf" value="{csrf}">'
        f'<button type="submit" data-token="{script}">Send</button></form>'
        f"<p>Your form key is {text}.</p>"
        f"<script>/* <![CDATA[ */ if (a<b) {{}} var nonce = '{script}'; /* ]]> */</script>"
    )
    if name_value is not None:
        extra += f'<div class="card-{name_value}"><a href="/x">More</a></div>'
    if numbers is not None:
        response_ms, seconds = numbers
        extra += (
            f"<p>Universal time is 2026-12-05 22:52:{seconds}.</p><script>(RLQ=window.RLQ||[])"
            f'.push(function(){{mw.config.set({{"wgBackendResponseTime":{response_ms}}});}});</script>'
        )
    page = re.sub(r"(<body\b[^>]*>)", lambda m: m.group(1) + extra, page, count=1)
    page = page.replace("<head>", f'<head><meta name="csrf-token" content="{csrf}">', 1)
    return page.encode()


FIRST = ("a1b2c3d4e5", "0f1e2d3c4b5a69788796a5b4", "n0nce123456", "k3y4567890abcdef")
SECOND = ("9z8y7x6w5v", "ffffeeee0000111122223333", "x9y8z7w6v5u", "k3y0000000000001")
FIRST_NUMBERS, SECOND_NUMBERS = ("372", "47"), ("52", "48")  # (a response time of another length)


@pytest.mark.parametrize("condition", ["Src-Perc", "Tgt-Perc", "Src-Perc extended"])
def test_a_page_with_new_per_request_values_is_the_last_one_with_them_swapped_in(
    condition: str,
) -> None:
    """Every saved page, three seeds: the second load, whose nonces, CSRF fields, keys and
    numbers in a text are new, comes out byte for byte as shifting it afresh gives (notes and
    change map too), and is made from the first one's shift, not from a parse."""
    condition, _, extended = condition.partition(" ")
    for page in fixture_pages():
        first = with_values(page.read_bytes(), FIRST, numbers=FIRST_NUMBERS)
        second = with_values(page.read_bytes(), SECOND, numbers=SECOND_NUMBERS)
        for seed in range(3):
            config: dict[str, Any] = {"condition": condition, "seed": seed}
            if extended:
                config["perceptual"] = "extended"
            if condition.startswith("Tgt"):
                config["targets"] = {"http://app.test": "http://target.test"}
            shifted = ShiftedPages()
            shifted_bytes(episode(**config), first, 1, shifted)
            swapped = shifted_bytes(episode(**config), second, 2, shifted)
            assert swapped == shifted_bytes(episode(**config), second, 2, None), page.name
            assert shifted.swapped == 1 and shifted.misses == 2, page.name


def test_a_difference_a_shift_decides_by_is_shifted_afresh() -> None:
    """A per-request value in a class name (the drift decides by class names; one after an
    attribute whose value holds a `>`, which ends no tag), a change that is no such value (a
    word), or one of another length: each page is shifted afresh."""
    raw = WORDPRESS_PAGE
    after_a_gt = b'<p title="more > less" class="card-%s">x</p></body>'
    for seeds, first, second in (
        ([1], with_values(raw, FIRST, "5f4e3d2c1b"), with_values(raw, FIRST, "0a9b8c7d6e")),
        (
            range(12),  # (the seeds that keep the class, and wrap by it, differ)
            with_values(raw, FIRST).replace(b"</body>", after_a_gt % b"zz12yy34xx", 1),
            with_values(raw, FIRST).replace(b"</body>", after_a_gt % b"qq98ww76vv", 1),
        ),
        ([1], with_values(raw, FIRST), with_values(raw, FIRST).replace(b"Send", b"Post")),
        ([1], with_values(raw, FIRST), with_values(raw, (*FIRST[:3], "k3y45678901"))),
    ):
        for seed in seeds:
            shifted = ShiftedPages()
            config = {"condition": "Src-Perc", "seed": seed, "shift_params": {}}
            shifted_bytes(episode(**config), first, 1, shifted)
            again = shifted_bytes(episode(**config), second, 2, shifted)
            assert shifted.swapped == 0, seed
            assert again == shifted_bytes(episode(**config), second, 2, None), seed


def with_markup(markup: str, number: str, values: tuple[str, ...]) -> bytes:
    """The WordPress page with `values` (`with_values`) and `markup`, its `%s` the number, at
    the end of its body."""
    return with_values(WORDPRESS_PAGE, values).replace(
        b"</body>", (markup.replace("%s", number) + "</body>").encode(), 1
    )


def next_loads_as_afresh(first: bytes, second: bytes, seeds: Any, **config: Any) -> int:
    """Under each seed, `second` in a process that shifted `first` comes out as shifting it
    afresh gives; how many of them were swapped."""
    swapped = 0
    for seed in seeds:
        setting = {**config, "seed": seed}
        shifted = ShiftedPages()
        shifted_bytes(episode(**setting), first, 1, shifted)
        again = shifted_bytes(episode(**setting), second, 2, shifted)
        assert again == shifted_bytes(episode(**setting), second, 2, None), seed
        swapped += shifted.swapped
    return swapped


def markup_as_afresh(markup: str, first: str, second: str) -> int:
    """`next_loads_as_afresh` on the WordPress page with `markup`, its `%s` `first` then
    `second`, under Src-Perc, seeds 0-3."""
    return next_loads_as_afresh(
        with_markup(markup, first, FIRST),
        with_markup(markup, second, SECOND),
        range(4),
        condition="Src-Perc",
    )


NUMBERED = {
    # A count in a link's text: the change map holds the text (and relabel reads it).
    "a control's text": ('<p><a href="/comments">%s comments</a></p>', "3", "4"),
    # A number alone in an element the drift may rename, wrap or leave.
    "beside markup": ('<p class="count">%s</p>', "12", "13"),
    # A number in a sentence: spliced.
    "a sentence": ("<p>Updated %s seconds ago by the scheduler</p>", "31", "32"),
    # ... and one of another length: a coin reads the text masked, then its first characters.
    "a sentence, longer": ("<p>Updated %s seconds ago by the scheduler</p>", "9", "10"),
    # A control's text past 80 characters: the change map holds its first 80, which end in
    # the number's first digits (`12` of `12345`), another in the next load.
    "a control's text cut short": (
        '<p><a href="/notes">Read the full release notes of this version of the product, '
        "published on day %s</a></p>",
        "12345",
        "99345",
    ),
    # The new word is an id: the drift counts an id's mentions, so never spliced.
    "an id's word": ('<p id="8">x</p><p>Updated %s seconds ago</p>', "7", "8"),
}


@pytest.mark.parametrize("condition", ["Src-Perc", "Src-Perc extended"])
def test_a_number_in_a_text_is_spliced_as_shifting_afresh_gives(condition: str) -> None:
    """Whether a number is spliced in or the page is shifted afresh, the page comes out as
    shifting it afresh gives, over 6 seeds: a sentence's number is spliced, a word that is an
    id never is, and a control's is not (its text is in the change map)."""
    condition, _, extended = condition.partition(" ")
    config: dict[str, Any] = {"condition": condition}
    if extended:
        config["perceptual"] = "extended"
    swapped = {
        case: next_loads_as_afresh(
            with_markup(markup, before, FIRST),
            with_markup(markup, after, SECOND),
            range(6),
            **config,
        )
        for case, (markup, before, after) in NUMBERED.items()
    }
    assert (
        swapped["a sentence"] == swapped["a sentence, longer"] == 6 and swapped["an id's word"] == 0
    )
    assert swapped["a control's text"] == 0


def values_of(load: int) -> tuple[str, str, str, str]:
    """Per-request values for one load: as long as FIRST's, another at every load."""
    return tuple(value[:-3] + f"{load:03d}" for value in FIRST)  # type: ignore[return-value]


def test_concurrent_first_loads_with_their_own_values_shift_the_page_once() -> None:
    """A burst of first loads of a page with a nonce (each its own): one is shifted whole, the
    others wait for it and have their values swapped in, each as shifting it afresh gives."""
    config = {"condition": "Src-Perc", "seed": 4}
    pages = [with_values(WORDPRESS_PAGE, values_of(load)) for load in range(6)]
    shifted = ShiftedPages()
    release, started = threading.Event(), threading.Event()
    first_make = threading.Lock()
    held_once: list[int] = []
    real_get_or_make = shifted.get_or_make

    def get_or_make(key: Any, make: Any, raw: bytes | None = None) -> Any:
        def held() -> Any:
            with first_make:
                if not held_once:
                    held_once.append(1)
                    started.set()
                    release.wait()
            return make()

        return real_get_or_make(key, held, raw)

    shifted.get_or_make = get_or_make  # type: ignore[method-assign]
    with ThreadPoolExecutor(len(pages)) as pool:
        first = pool.submit(shifted_bytes, episode(**config), pages[0], 1, shifted)
        started.wait()
        rest = [
            pool.submit(shifted_bytes, episode(**config), page, 1, shifted) for page in pages[1:]
        ]
        deadline = time.monotonic() + 60  # (a condition polled; see _asked_while_made)
        while time.monotonic() < deadline and sum(
            flight.waiting for flight in list(shifted._whole_in_flight.values())
        ) < len(rest):
            time.sleep(0.001)
        waited = sum(flight.waiting for flight in list(shifted._whole_in_flight.values()))
        release.set()
        results = [first.result(), *(future.result() for future in rest)]
    assert waited == len(rest), "the other loads did not wait for the one shifted whole"
    assert shifted.swapped == len(rest) and len(held_once) == 1
    for page, result in zip(pages, results, strict=True):
        assert result == shifted_bytes(episode(**config), page, 1, None)


def test_swapped_pages_are_not_kept() -> None:
    """A page with a nonce, loaded 12 times: one whole shift and 11 swaps, and the cache holds
    the whole one only (each swapped page carries values no later load has)."""
    shifted = ShiftedPages(max_bytes=4 * len(WORDPRESS_PAGE))
    config = {"condition": "Src-Perc", "seed": 2}
    for load in range(12):
        shifted_bytes(episode(**config), with_values(WORDPRESS_PAGE, values_of(load)), 1, shifted)
    assert shifted.swapped == 11, "the page shifted whole was evicted by the swapped ones"
    assert len(shifted._entries) == 1 and shifted._bytes <= shifted.max_bytes


def test_loads_of_a_page_with_a_nonce_do_not_evict_other_settings_pages() -> None:
    """Two episodes' settings, each with its page shifted whole, in a cache with room for
    three pages: 20 loads of the first page (each its own nonce) leave the second's shift in
    place, so its next load is a swap, not a whole shift again."""
    # (room for three entries: a shift, its page and what swaps read of it, 3.4 pages each)
    shifted = ShiftedPages(max_bytes=3 * 4 * len(WORDPRESS_PAGE))
    first, second = {"condition": "Src-Perc", "seed": 6}, {"condition": "Src-Perc", "seed": 7}
    shifted_bytes(episode(**first), with_values(WORDPRESS_PAGE, values_of(0)), 1, shifted)
    shifted_bytes(episode(**second), with_values(WORDPRESS_PAGE, values_of(0)), 1, shifted)
    for load in range(1, 21):
        shifted_bytes(episode(**first), with_values(WORDPRESS_PAGE, values_of(load)), 1, shifted)
    whole_before = shifted.misses - shifted.swapped
    shifted_bytes(episode(**second), with_values(WORDPRESS_PAGE, values_of(21)), 1, shifted)
    assert shifted.misses - shifted.swapped == whole_before == 2


def test_what_swaps_read_of_a_page_counts_against_the_budget() -> None:
    """A page's entry counts the page's shift, the page and, once its next load has read it,
    what the swaps read of it and where the values are in the shift: the cache's bytes are
    what it holds, within its budget. A page of
    thousands of tiny tags reads to many times its size (its markup's spans): in a budget of
    twice its size and its shift, its entry goes once it has been read, where counting the
    page alone kept it."""
    tiny = (
        b"<!DOCTYPE html><html><body>"
        + b"<i>x</i>" * 4000
        + b"<a href='/?n=%s'>a</a></body></html>"
    )
    config = {"condition": "Src-Perc", "seed": 3}
    shifted = ShiftedPages()
    shifted_bytes(episode(**config), tiny % b"tok00001", 1, shifted)
    (entry,) = shifted._entries.values()
    whole = len(entry.frozen.body) + len(tiny % b"tok00001")
    assert shifted._bytes == whole
    shifted_bytes(episode(**config), tiny % b"tok00002", 2, shifted)
    assert shifted.swapped == 1 and entry.reading is not None
    assert entry.reading.size > 2 * len(tiny) and entry.frozen.places_bytes > 0
    assert shifted._bytes == whole + entry.reading.size + entry.frozen.places_bytes
    # (other values: the same bytes share one reading, which the first cache made big)
    bounded = ShiftedPages(max_bytes=2 * whole)
    shifted_bytes(episode(**config), tiny % b"tok10001", 1, bounded)
    assert len(bounded._entries) == 1
    shifted_bytes(episode(**config), tiny % b"tok10002", 2, bounded)
    assert bounded.swapped == 1 and not bounded._entries and bounded._bytes == 0


def test_what_swaps_read_of_a_page_is_kept_with_it_however_many_pages_come_between() -> None:
    """Twelve settings' pages, each shifted whole, then each loaded again twice in turn, with
    new values each time: every next load is a swap, and each page is read for them once, at
    its first next load. (Read among the last few pages only, each was read again at every
    next load of an agent browsing more than a few pages.)"""
    shifted = ShiftedPages()
    firsts = {seed: with_values(WORDPRESS_PAGE, values_of(100 + seed)) for seed in range(12)}
    for seed, page in firsts.items():
        shifted_bytes(episode(condition="Src-Perc", seed=seed), page, 1, shifted)
    readings = []
    for later in (1, 2):
        for seed in firsts:
            again = with_values(WORDPRESS_PAGE, values_of(100 * (later + 1) + seed))
            shifted_bytes(episode(condition="Src-Perc", seed=seed), again, 1 + later, shifted)
        readings.append({seed: len(volatile.keep_reading(firsts[seed]).values) for seed in firsts})
    assert shifted.swapped == 24
    assert all(readings[0].values()) and readings[1] == readings[0]


def test_the_event_loop_does_not_wait_for_another_load_of_the_page() -> None:
    """A load shifted on the event loop (a small page) while a worker shifts another load of
    the page whole shifts its own: waiting would hold every other connection meanwhile."""
    config = {"condition": "Src-Perc", "seed": 5}
    pages = [with_values(WORDPRESS_PAGE, values_of(load)) for load in range(2)]
    shifted = ShiftedPages()
    release, started = threading.Event(), threading.Event()
    order: list[str] = []
    real_get_or_make = shifted.get_or_make

    def get_or_make(key: Any, make: Any, raw: bytes | None = None) -> Any:
        def held() -> Any:
            started.set()
            release.wait(timeout=60)  # (only if the loop waited: then the test fails, not hangs)
            order.append("worker")
            return make()

        if raw == pages[0]:
            return real_get_or_make(key, held, raw)
        return real_get_or_make(key, make, raw)

    shifted.get_or_make = get_or_make  # type: ignore[method-assign]

    async def on_the_loop() -> bytes:
        result = shifted_bytes(episode(**config), pages[1], 1, shifted)[0]
        order.append("loop")
        return result

    with ThreadPoolExecutor(1) as pool:
        worker = pool.submit(shifted_bytes, episode(**config), pages[0], 1, shifted)
        started.wait()
        on_loop = asyncio.run(on_the_loop())
        release.set()
        worker.result()
    assert order == ["loop", "worker"] and shifted.swapped == 0
    assert on_loop == shifted_bytes(episode(**config), pages[1], 1, None)[0]


@pytest.mark.parametrize(
    "extra",
    [
        "<!-- <script> -->",  # a start tag only in a comment
        '<p title="<style>">x</p>',  # ... in an attribute's value
        "<script-x>x</script-x><style-guide>",  # custom elements
        "<script>if (a<b) {}</SCRIPT>",  # ended in upper case
    ],
)
def test_a_class_after_a_script_start_that_opens_nothing_is_shifted_afresh(extra: str) -> None:
    """A per-request value in a class after a `<script`/`<style` that opens no raw text: the
    drift decides by the class, so its next load is shifted afresh, not swapped."""
    params = {"id_rate": 0.0, "class_rate": 0.5, "wrap_rate": 0.5, "min_share": 0.0}
    page = (
        f"<!DOCTYPE html><html><head><title>t</title></head><body>{extra}"
        '<div class="card-VALUE"><a href="/x">More</a><button>Go</button></div>'
        "<form action='/o'><input name='q'><button>Save</button></form></body></html>"
    )
    first, second = (page.replace("VALUE", v).encode() for v in ("zz12yy34xx", "qq98ww76vv"))
    for seed in (2, 9, 11):
        config = {"condition": "Src-Perc", "seed": seed, "shift_params": {"locator_drift": params}}
        shifted = ShiftedPages()
        shifted_bytes(episode(**config), first, 1, shifted)
        swapped = shifted_bytes(episode(**config), second, 2, shifted)
        assert swapped == shifted_bytes(episode(**config), second, 2, None), seed


@pytest.mark.parametrize(
    "extra",
    [
        '<input type="hidden" name="t" value="VALUE">',
        "<script>if (a<b) {} var t = 'VALUE';</script>",
    ],
)
def test_a_new_value_that_names_an_id_of_the_page_is_shifted_afresh(extra: str) -> None:
    """The next load's value is a word the page holds already (an id the drift renamed, as
    it occurred once): shifted afresh the id is kept (it occurs twice now), so a swap into the
    last shift, which renamed it, is another page."""
    params = {"id_rate": 1.0, "class_rate": 0.0, "wrap_rate": 0.0, "min_share": 0.0}
    page = (
        "<!DOCTYPE html><html><head><title>t</title></head><body>"
        '<div id="box-zz12yy34xx"><a href="/x">More</a></div>'
        f"<form action='/o'><input name='q'><button>Save</button></form>{extra}</body></html>"
    )
    first, second = (
        page.replace("VALUE", v).encode() for v in ("tok-ab12cd34ef", "box-zz12yy34xx")
    )
    config = {"condition": "Src-Perc", "seed": 0, "shift_params": {"locator_drift": params}}
    shifted = ShiftedPages()
    shifted_bytes(episode(**config), first, 1, shifted)
    swapped = shifted_bytes(episode(**config), second, 2, shifted)
    assert swapped == shifted_bytes(episode(**config), second, 2, None)


def test_a_number_a_relabel_label_holds_is_shifted_afresh() -> None:
    """An episode's vocabulary relabels `Step 1`: a control's text that becomes it (`Step 7`,
    then `Step 1`) is relabelled by a whole shift, so the page is not the last one with the
    number spliced in."""
    markup = "<form><label>Step %s</label></form>"
    first, second = with_markup(markup, "7", FIRST), with_markup(markup, "1", SECOND)
    vocabulary = {"relabel": {"vocabulary": {"Step 1": ["First step"]}}}
    next_loads_as_afresh(
        first,
        second,
        range(3),
        condition="Src-Perc",
        perceptual="extended",
        shift_params=vocabulary,
    )


@pytest.mark.parametrize("condition", ["Src-Perc", "Tgt-Perc", "Src-Perc extended"])
def test_a_number_of_another_length_in_the_head_moves_what_is_put_there(condition: str) -> None:
    """A response time in a script in `<head>`, `9` then `10`: the runtime's markup goes into
    the head after it, one byte further on, as shifting the page afresh puts it."""
    condition, _, extended = condition.partition(" ")
    config: dict[str, Any] = {"condition": condition}
    if extended:
        config["perceptual"] = "extended"
    if condition.startswith("Tgt"):
        config["targets"] = {"http://app.test": "http://target.test"}
    first, second = (
        with_values(WORDPRESS_PAGE, values).replace(
            b"</head>",
            b'<script>mw.config.set({"wgBackendResponseTime":%s});</script></head>' % t,
            1,
        )
        for values, t in ((FIRST, b"9"), (SECOND, b"10"))
    )
    assert next_loads_as_afresh(first, second, range(3), **config) == 3


def test_a_character_reference_is_shifted_afresh() -> None:
    """A character reference whose digits differ (`&#9728;` then `&#9729;`, a weather icon) is
    another character, which a coin and the change map read: the page comes out as shifting
    it afresh gives. (libxml2 writes such a character back as the same reference in a page
    whose encoding lacks it, so it was found in the shift and spliced, the coins' choices and
    the change map's text the last page's.)"""
    controls = "".join(
        f'<p><a href="/p{i}">Link {c}</a> <button type="button">Act {c}</button></p>'
        for i, c in enumerate("abcdefgh")
    )
    page = (
        '<!DOCTYPE html><html><head><meta charset="iso-8859-1"><title>t</title></head><body>'
        + controls
        + '<p><span>Weather &#%s; today</span><button type="button">&#%s; now</button></p>'
        + "</body></html>"
    )
    first, second = (page.replace("%s", code).encode("latin-1") for code in ("9728", "9729"))
    next_loads_as_afresh(first, second, range(3), condition="Src-Perc")


def test_a_number_a_script_appends_to_names_is_shifted_afresh() -> None:
    """A script that appends `-3` to an id it holds, then `-4`: the drift keeps an id a
    script may build (`note-4`, after `-4`), so the page comes out as shifting it afresh
    gives, not with the number spliced into the last shift."""
    markup = '<p id="note-4">hello there</p><script>var el = byId(base + "-%s");</script>'
    first, second = with_markup(markup, "3", FIRST), with_markup(markup, "4", SECOND)
    next_loads_as_afresh(first, second, range(6), condition="Src-Perc")


def test_a_number_that_mentions_an_id_no_word_is_shifted_afresh() -> None:
    """`x.15`, then `x.25`, beside an element whose id is `x.1`: the drift counts that id's
    mentions as a substring (it is no word), one fewer in the second load, and renames an id
    mentioned once only; the page comes out as shifting it afresh gives."""
    markup = '<p id="x.1">hello there</p><p>Version x.%s released today for everyone</p>'
    first, second = with_markup(markup, "15", FIRST), with_markup(markup, "25", SECOND)
    next_loads_as_afresh(first, second, range(6), condition="Src-Perc")
    # The same with a per-request value, swapped wherever it is: `x.abc1` is in `x.abc12345`.
    markup = '<p id="x.abc1">hello there</p><a href="/p?n=x.%s">Next</a>'
    first = with_markup(markup, "abc12345", FIRST)
    second = with_markup(markup, "zzz99999", SECOND)
    next_loads_as_afresh(first, second, range(6), condition="Src-Perc")


@pytest.mark.parametrize(
    ("charset", "before", "after"),
    [
        ("shift_jis", "Item ア317 here", "Item ア318 here"),  # `ア` is 83 41: `A317`
        ("gb18030", "Caf\u00c0 menu", "Caf\u00c1 menu"),  # `À`, `Á`: 81 30 86 38, ... 39
        ("iso-2022-jp", "Item 亜 here", "Item 院 here"),  # `亜`, `院`: `0!`, `1!`
    ],
)
def test_an_encoding_whose_ascii_bytes_are_parts_of_characters_is_shifted_afresh(
    charset: str, before: str, after: str
) -> None:
    """In Shift_JIS a letter may be a character's second byte, in GB18030 a digit, in
    ISO-2022-JP any: the bytes' words are not the text's (`ア317` is the bytes of `A317`, so
    the change map's `ア317` was not found to hold `317`; `À` then `Á` differ in a digit byte
    only, and a coin reads the text). The page comes out as shifting it afresh gives."""
    controls = "".join(
        f'<p><a href="/p{i}">Link {c}</a> <button type="button">Act {c}</button></p>'
        for i, c in enumerate("abcdefgh")
    )
    page = (
        f'<!DOCTYPE html><html><head><meta charset="{charset}"><title>t</title></head><body>'
        + controls
        + '<p><a href="/w">%s</a><button type="button">Go now</button></p></body></html>'
    )
    first, second = (page.replace("%s", label).encode(charset) for label in (before, after))
    next_loads_as_afresh(first, second, range(4), condition="Src-Perc")


@pytest.mark.parametrize(
    "selector",
    [
        '<style>[data-col="%s"] > a{color:red}</style>',  # an attribute's value
        '<style>[id^="row%s"] > a{color:red}</style>',  # the start of an id
    ],
)
def test_a_number_in_a_selectors_attribute_test_is_shifted_afresh(selector: str) -> None:
    """A style's `[data-col="3"] > a`, then `[data-col="4"] > a`: the drift keeps the links
    in the matching element where they are (a structural rule), another at each load, so
    the page comes out as shifting it afresh gives, not with the number spliced in."""
    markup = selector + (
        '<div id="row3x" data-col="3"><a href="/a">Alpha</a></div>'
        '<div id="row4x" data-col="4"><a href="/b">Beta</a></div>'
    )
    first, second = with_markup(markup, "3", FIRST), with_markup(markup, "4", SECOND)
    next_loads_as_afresh(first, second, range(4), condition="Src-Perc")
    next_loads_as_afresh(first, second, range(2), condition="Src-Perc", perceptual="extended")


@pytest.mark.parametrize(
    "markup",
    [
        '<p><a href="/inbox">Inbox<span class="badge">%s</span></a></p>',  # a badge's count
        '<p><button type="button">Save<br>%s files</button></p>',  # after a line break
        '<p><a href="/inbox">Inbox<!-- count -->%s</a></p>',  # after a comment
        '<p><a href="/rank">%s<sup>th</sup> place</a></p>',  # an ordinal's suffix after it
    ],
)
def test_a_number_a_control_reads_with_the_text_beside_it_is_shifted_afresh(
    markup: str,
) -> None:
    """A control's number next to a tag or a comment is read with the text on the other
    side (`Inbox<span>317</span>` is `Inbox317`), which the change map holds, not the
    number's word: shifted afresh, the map holds the new one."""
    for condition in ("Src-Perc", "Tgt-Perc"):
        targets = {"http://app.test": "http://target.test"} if condition == "Tgt-Perc" else {}
        next_loads_as_afresh(
            with_markup(markup, "317", FIRST),
            with_markup(markup, "318", SECOND),
            range(4),
            condition=condition,
            targets=targets,
        )


# Pieces of markup with a number in them (`{n}`), where the shifts read numbers in each way
# they do: controls' texts (the change map, relabel), containers' texts (the coins), scripts
# and styles (names built, selectors' attribute tests), comments, references, names.
NUMBER_PIECES = [
    '<p><a href="/p">Item {n}</a></p>',
    '<p><button type="button">Save {n} files</button></p>',
    '<p><a href="/inbox">Inbox<span class="badge">{n}</span></a></p>',
    "<form><label>Step {n}</label><input name='q'></form>",
    '<p><input name="n" value="{n}"></p>',
    "<p>Updated {n} seconds ago by the scheduler</p>",
    "<p>{n}</p>",
    "<div><span>Posted {n} days ago</span> by the admin of this site</div>",
    "<table><tr><td>{n}</td><td><a href='/r'>Row</a></td></tr></table>",
    "<script>var t = {n};</script>",
    '<script>document.querySelector("#row-{n}")</script>',
    '<script>byId(base + "-{n}")</script>',
    "<script>$('[data-col=\"{n}\"]').hide()</script>",
    "<style>.c{n} {{ color: red }}</style>",
    '<style>[data-col="{n}"] > a {{ color: red }}</style>',
    "<style>@media (min-width: {n}px) {{ a {{ color: red }} }}</style>",
    "<!-- {n} queries -->",
    "<p>Sign &#{n}; here</p>",
    '<div id="row-{n}" class="c{n}"><a href="/x">Open</a></div>',
    '<div data-col="{n}"><a href="/y">Col</a></div>',
    '<p id="{n}">Anchor</p>',
    '<div data-url="/sessions/{n}/" data-kind="ping"><a href="/z">Go</a><a href="/w">On</a></div>',
    '<style>[data-url$="/{n}/"] > a {{ color: red }}</style>',
    '<button type="button" data-count="{n}">Act</button>',
    '<div data-testid="row-{n}"><a href="/t">T</a></div>',
    '<a href="/t" data-target="#row-{n}">Toggle</a>',
    "<script>document.querySelectorAll('[data-url]')</script>",
    '<input type="hidden" name="state" value="{{&quot;key&quot;: &quot;k{n}x&quot;}}">',
    '<input type="HIDDEN" value="{n}"><input type="text" value="v{n}">',
    '<div><textarea><input type="hidden" value="w{n}x"></textarea></div>',
    '<div data-u="/a/" data-u="/u/{n}/"><a href="/v">V</a></div><p>/u/&#51;/ and /u/&#52;/</p>',
    '<div data-target="body > [data-k&#61;{n}]">t</div><div data-k="3"><a href="/k">K</a></div>',
    '<div data-target="[data-k=\n{n}] > a">t</div>',
    '<style>[*|data-col="{n}"] > a {{ color: red }}</style>',
    '<input type=" hidden" value="k{n}"><input type="hidden" type="submit" value="Log{n}">',
    '<div data-target="h{n} > a">t</div><H3><a href="/h3">Three</a><a href="/h3b">Tres</a></H3>',
    '<div data-x="row-{n}">t</div><div id="row&#45;4"><a href="/r4">Four</a></div>',
    "<p>Inbox<b>{n}</b> new</p>",
]


@st.composite
def numbered_loads(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """Two loads of a page built of `NUMBER_PIECES`, whose numbers are drawn from a pool of
    four (so that one number is often a text's and an id's or a selector's alike) and some of
    which change, to a number of the same length or another. (Each hole the reviews found,
    put back, fails this in one run out of one to three: 600 examples, 5-10 s.)"""
    pieces = draw(st.lists(st.sampled_from(NUMBER_PIECES), min_size=1, max_size=6))
    numbers = st.sampled_from(["3", "4", "10", "372"])
    first, second = [], []
    for piece in pieces:
        before = draw(numbers)
        after = draw(st.one_of(st.just(before), numbers))
        first.append(piece.format(n=before))
        second.append(piece.format(n=after))
    page = (
        "<!DOCTYPE html><html><head><title>t</title></head><body>"
        '<p><a href="/home">Home</a> <button type="button">Menu</button></p>%s</body></html>'
    )
    return (page % "".join(first)).encode(), (page % "".join(second)).encode()


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loads=numbered_loads(), condition=st.sampled_from(["Src-Perc", "Tgt-Perc", "extended"]))
def test_a_page_whose_numbers_change_comes_out_as_shifting_it_afresh_gives(
    loads: tuple[bytes, bytes], condition: str
) -> None:
    """Whatever numbers change where, the next load is what a whole shift of it gives, whether
    swapped or shifted afresh."""
    config: dict[str, Any] = {"condition": "Src-Perc" if condition == "extended" else condition}
    if condition == "extended":
        config["perceptual"] = "extended"
    if condition == "Tgt-Perc":
        config["targets"] = {"http://app.test": "http://target.test"}
    first, second = loads
    next_loads_as_afresh(first, second, range(2), **config)


def _with_a_mark_ending_at(page: Any, mark: bytes, cut: int) -> tuple[bytes, bytes]:
    """Two loads of `page(number, padding)`, `9` then `10`, padded so that `mark` ends at
    byte `cut` in the first: one byte past it in the second."""
    for padding in range(cut):
        first = page("9", padding)
        if first.find(mark) + len(mark) == cut:
            return first, page("10", padding)
    raise AssertionError(mark)


def test_a_number_of_another_length_that_moves_what_is_read_past_a_cut() -> None:
    """A title's count before a `<meta charset>` that ends at byte 1024, where the encoding
    is read (`9` then `10`: the label is cut, the page read as UTF-8); a script's number
    before a `<!DOCTYPE` ending at byte 4096 in a page without one (libxml2's doctype kept,
    then dropped): each next load comes out as shifting it afresh gives."""
    controls = "".join(
        f'<p><a href="/p{i}">Link {c}</a> <button type="button">Act {c}</button></p>'
        for i, c in enumerate("abcdefgh")
    )
    charset, doctype = (
        _with_a_mark_ending_at(
            lambda n, padding: (
                f"<!DOCTYPE html><html><head><title>Inbox ({n})</title>"
                f'<script>/*{"x" * padding}*/</script><meta charset="windows-1252"></head>'
                f"<body>{controls}<p>Caf\u00e9 <a href='/m'>Men\u00fc</a></p></body></html>"
            ).encode("cp1252"),
            b"windows-1252",
            1024,
        ),
        _with_a_mark_ending_at(
            lambda n, padding: (
                f"<html><head><title>t</title><script>var t = {n}; /*{'x' * padding}*/ "
                f'var d = "<!DOCTYPE html>";</script></head><body>{controls}</body></html>'
            ).encode(),
            b"<!DOCTYPE html>",
            4096,
        ),
    )
    for first, second in (charset, doctype):
        next_loads_as_afresh(first, second, range(2), condition="Src-Perc")


def test_a_number_of_another_length_that_moves_a_charset_past_where_scripts_go_after_it() -> None:
    """A `<link>`'s data value before a `<meta charset>` that ends 1024 bytes after the
    `<head>` (past the page's first 1024, where its encoding is read): the deferred scripts
    go right after it (`_early_point`), and, with `9` then `10`, at the head's start. The
    next load comes out as a whole shift gives."""
    links = "".join(f'<link rel="preload" href="/a{i:02d}.css">' for i in range(24))
    first, second = _with_a_mark_ending_at(
        lambda n, padding: (
            f'<!DOCTYPE html><html><head><link rel="preload" href="/a.css" data-v="/b/{n}/x">'
            f'{links}{" " * padding}<meta charset="utf-8"><title>t</title></head><body>'
            '<p><a href="/home">Home</a> <button type="button">Menu</button></p></body></html>'
        ).encode(),
        b'<meta charset="utf-8">',
        1051,  # (1024 past `<!DOCTYPE html>\n<html><head>` as libxml2 writes it)
    )
    next_loads_as_afresh(first, second, range(2), condition="Src-Perc")


def test_a_value_that_makes_a_target_origin_after_a_longer_number_is_shifted_afresh() -> None:
    """The same, with a number before the value that comes back longer by more than the
    origin's length: the value is looked for where it is in the next load, past the number."""
    markup = "<p>Took %s ms</p><p>Mirror at http://target.{}/x today</p>"
    next_loads_as_afresh(
        with_markup(markup.format("abcd1234"), "7", FIRST),
        with_markup(markup.format("test1234"), "7" * 40, SECOND),
        range(2),
        condition="Tgt-Perc",
        targets={"http://app.test": "http://target.test"},
    )


@pytest.mark.parametrize(
    ("markup", "first", "second", "swapped"),
    [
        # Wagtail's editor: an editing session's counter in a URL a script reads.
        ('<div data-w-swap-src-value="/admin/sessions/%s/"><p>x</p></div>', "7", "12", True),
        # Draft.js's random block keys in a hidden input's JSON.
        (
            '<input type="hidden" name="b" value="{&quot;key&quot;: &quot;%s&quot;}">',
            "jl3ez",
            "y9d4r",
            True,
        ),
        # A stylesheet's structural rule that tests the value (its children then stay where
        # they are, unwrapped): shifted afresh.
        (
            '<style>[data-step$="/3/"] > a { color: red }</style><div data-step="/steps/%s/">'
            + "".join(f'<a href="/s{i}">Step {i}</a>' for i in "abcdefgh")
            + "</div>",
            "3",
            "4",
            False,
        ),
        # A rule that tests the attribute's presence, not its value (OOUI's `[data-ooui]`).
        (
            '<style>[data-url] > a { color: red }</style><div data-url="/s/%s/">'
            '<a href="/a">A</a></div>',
            "7",
            "8",
            True,
        ),
        # A control's data value: its change map entry holds it.
        ('<p><button type="button" data-count="%s">Act</button></p>', "3", "4", False),
        # A test hook's value: a hook the drift drops, or keeps as it is.
        ('<div data-testid="row-%s"><a href="/t">T</a></div>', "3", "4", None),
    ],
)
def test_a_word_in_a_data_or_hidden_value_comes_out_as_shifting_it_afresh_gives(
    markup: str, first: str, second: str, swapped: bool | None
) -> None:
    """A number in a `data-*` value no selector tests, and any word of a hidden input's value,
    are spliced into the next load: it comes out as a whole shift gives, under every perceptual
    condition and seed; where a selector tests the value, or the state holds it, it is shifted
    afresh."""
    extended = {"perceptual": "extended"}
    for condition, extra in (("Src-Perc", {}), ("Tgt-Perc", {}), ("Src-Perc", extended)):
        made = next_loads_as_afresh(
            with_markup(markup, first, FIRST),
            with_markup(markup, second, SECOND),
            range(3),
            condition=condition,
            **extra,
        )
        if swapped is not None:
            assert bool(made) is swapped, (condition, extra)


_COLUMNS = (
    '<div data-col="372"><a href="/ya">Ya</a><a href="/yb">Yb</a></div>'
    '<div data-col="418"><a href="/za">Za</a><a href="/zb">Zb</a></div>'
)


@pytest.mark.parametrize(
    ("markup", "first", "second"),
    [
        # A hidden input's tag in a textarea's text is text: a container's coin reads it.
        (
            '<p><a href="/q">Q</a></p><textarea><input type="hidden" value="%s"></textarea>',
            "abcde",
            "fghij",
        ),
        # An attribute the parser drops (a tag's second of the name, a second `<body>`), whose
        # text is elsewhere as a reference: what the context finds in the shift is that text.
        ('<div data-u="/x/1/" data-u="/y/%s/">a</div><p>Go to /y/&#55;/ now</p>', "7", "8"),
        ('<body data-u="/y/%s/"><p>Go to /y/&#55;/ now</p>', "7", "8"),
        ('<input type="hidden" value="a" value="%s"><p>see j&#108;3ez here</p>', "jl3ez", "y9d4r"),
        # A data value a script reads as a selector, its attribute test open before the
        # number only once its references are decoded, or over a line's end.
        ('<div data-target="body > [data-col&#61;%s]">t</div>' + _COLUMNS, "372", "999"),
        ('<div data-target="body > &#91;data-col=%s]">t</div>' + _COLUMNS, "372", "999"),
        ('<div data-target="body > [data-col=\n%s]">t</div>' + _COLUMNS, "372", "999"),
    ],
)
def test_a_data_or_hidden_value_the_shift_does_not_hold_as_written_is_shifted_afresh(
    markup: str, first: str, second: str
) -> None:
    """A word in a value that the parser does not give an element as the page writes it (a tag
    in a textarea's text, a dropped attribute), or that a script reads otherwise (its
    references decoded, over its lines): the next load comes out as a whole shift gives."""
    markup_as_afresh(markup, first, second)


_TWO_LINKS = '<a href="/a">Alpha</a><a href="/b">Beta</a>'


@pytest.mark.parametrize(
    ("markup", "first", "second"),
    [
        # A selector's tag and attribute names are read in any case (a data value's, a
        # script's): `h3` selects the page's `<H3>`, `[DATA-K3]` its `data-k3`.
        ('<div data-target="h%s > a">t</div><H3>' + _TWO_LINKS + "</H3>", "3", "4"),
        (
            '<div data-target="[DATA-K%s] > a">t</div><div data-k3="y">' + _TWO_LINKS + "</div>",
            "3",
            "4",
        ),
        ('<script>q("h%s > a")</script><H3>' + _TWO_LINKS + "</H3>", "3", "4"),
        # An id or a class written with a reference is its text decoded: `row&#45;4` is the
        # `row-4` a data value or a script names.
        ('<div data-x="row-%s">t</div><div id="row&#45;4">' + _TWO_LINKS + "</div>", "3", "4"),
        ('<script>byId("row-%s")</script><div id="row&#45;4">' + _TWO_LINKS + "</div>", "3", "4"),
        ('<div data-x="c%s">t</div><div class="c&#52;">' + _TWO_LINKS + "</div>", "3", "4"),
    ],
)
def test_a_number_that_is_a_name_as_the_parser_reads_it_is_shifted_afresh(
    markup: str, first: str, second: str
) -> None:
    """A number that makes a word a name of the page only as the parser reads the page (a tag's
    or an attribute's name in another case, an id or a class with a character reference): the
    drift keeps the element a selector or a script names, and wraps or renames it otherwise,
    so the next load comes out as a whole shift gives."""
    markup_as_afresh(markup, first, second)


_PAGE = "<!DOCTYPE html><html><head><title>t</title></head><body>%s</body></html>"
_EXTENDED = {"condition": "Src-Perc", "perceptual": "extended"}
_SOURCE = {"condition": "Src-Perc"}


def test_a_number_of_another_length_a_coin_reads_with_the_word_beside_it_is_shifted_afresh() -> (
    None
):
    """A wrapper's coin reads its container's text across the tags in it, masked: `Inbox`
    and a badge's `4` are `Inbox4`, masked `Inbox#`, and with `372` a run of 8 with a digit,
    masked `#` whole. The container is wrapped or not by another coin: the next load comes
    out as a whole shift gives, under the seeds where the two coins fall apart."""
    controls = (
        '<p><a href="/home">Home</a> <button type="button">Menu</button></p>'
        '<div><a href="/one">One</a><a href="/two">Two</a></div>'
    )
    page = _PAGE % (controls + '<p><a href="/inbox">Inbox<span class="badge">%s</span></a></p>')
    for first, second in (("4", "372"), ("372", "4")):
        for config in (_SOURCE, _EXTENDED):
            next_loads_as_afresh(
                (page % first).encode(), (page % second).encode(), range(6), **config
            )


@pytest.mark.parametrize(
    ("page", "first", "second", "config"),
    [
        # Relayout looks for `<ul`, `<nav`, `role=`, `<aside` in the bytes before it asks the
        # tree for lists (a page's `<UL>` has none of them), relabel for its labels (a button's
        # `S&#97;ve` has none): a hidden value's word that makes or unmakes one.
        (
            _PAGE
            % (
                '<input type="hidden" name="h" value="see <%s here"><UL class="menu">'
                + "".join(f'<LI><a href="/{i}">Item {i}</a></LI>' for i in "abc")
                + "</UL>"
            ),
            "nav",
            "nab",
            _EXTENDED,
        ),
        (
            _PAGE
            % (
                '<input type="hidden" name="h" value="a %s b"><p><button type="button">S&#97;ve'
                "</button></p><div>" + _TWO_LINKS + "</div>"
            ),
            "Savexy",
            "Sxvexy",
            _EXTENDED,
        ),
        # A document's start tag anywhere in a page makes it no fragment; a doctype in its
        # first 4096 bytes is libxml2's kept (a hidden value's word, any word).
        (
            '<div><input type="hidden" name="h" value="x <%s y">' + _TWO_LINKS + "</div>",
            "body",
            "bodx",
            _SOURCE,
        ),
        (
            '<html><head><title>t</title></head><body><input type="hidden" name="h" '
            'value="<!%s html"><div>' + _TWO_LINKS + "</div></body></html>",
            "DOCTYPE",
            "DOCTYPX",
            _SOURCE,
        ),
        # The charset a `<meta>` in the first 1024 bytes names, in a comment or a data value:
        # a number of the same length (`cp1252`, then `cp1251`) or a value (`iso-8859-2`, 8
        # characters or more with a digit) makes it another.
        (
            '<!DOCTYPE html><html><head><!-- <meta charset="cp125%s"> --><title>t</title>'
            "</head><body><div><a href='/a'>Caf\u00e9</a><a href='/b'>Beta</a></div></body></html>",
            "2",
            "1",
            _SOURCE,
        ),
        (
            _PAGE % ('<div data-x="<meta charset=iso-8859-%s>"><a href="/a">Caf\u00e9</a></div>'),
            "2",
            "5",
            _SOURCE,
        ),
    ],
)
def test_a_swap_that_changes_what_a_shift_reads_of_the_bytes_is_shifted_afresh(
    page: str, first: str, second: str, config: dict[str, Any]
) -> None:
    """What the shifts read of a page's bytes outside its tree (a charset, a doctype, a
    document's start tag, the strings a shift looks for before it asks the tree): a word of a
    hidden value, or a number, that makes or unmakes it comes out as a whole shift gives."""
    for before, after in ((first, second), (second, first)):
        next_loads_as_afresh(
            (page % before).encode("latin-1"),
            (page % after).encode("latin-1"),
            range(4),
            **config,
        )


@pytest.mark.parametrize(
    ("markup", "before", "after", "target"),
    [
        # A per-request value that completes the target origin: `target.` then `test1234`.
        ("<p>Mirror at http://target.%s/x today</p>", "abcd1234", "test1234", "http://target.test"),
        # A number that makes the target's port (`8080` then `8081`).
        (
            "<p>Mirror at http://target.test:%s/x today</p>",
            "8080",
            "8081",
            "http://target.test:8081",
        ),
    ],
)
def test_a_swap_that_makes_a_target_origin_is_shifted_afresh(
    markup: str, before: str, after: str, target: str
) -> None:
    """Under a deployment, the target's origin is mapped back wherever it is in the page's
    bytes (and counted in the notes): a value or a number that makes one in the next load
    comes out mapped back, as shifting it afresh gives."""
    for condition in ("Tgt-Perc", "Tgt-Exec"):
        next_loads_as_afresh(
            with_markup(markup, before, FIRST),
            with_markup(markup, after, SECOND),
            range(2),
            condition=condition,
            targets={"http://app.test": target},
        )
