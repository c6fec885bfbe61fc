"""The browser alignment oracle: does a shifted page still render and run like the original?

The static checker (api/analysis/page_check.py) compares HTML. This compares what Chromium
renders and runs: a page is loaded several times unshifted (the baseline: the differences
between these loads are the page's own noise and are never reported) and once per seed shifted,
each load in a fresh browser context, and every load is reduced to a *snapshot*
(api/oracle/page.js, run in the page): for every element in document order a structural key that
skips the wrapper elements the perceptual shift inserts, its tag, box, visibility, whether a
click at its centre reaches it, its label, whether it is an image (with the pixels of its clip)
and which event listeners it has; plus page and console errors. `compare()` pairs the elements
by key and lists what changed that a task could depend on; ids, classes, data-* attributes and
wrappers are expected to change and are not compared.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import struct
import time
import zlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import httpx
from pydantic import ValidationError

from api.analysis.summary import all_events
from api.analysis.verdicts import UNCHECKED, of_violations
from api.errors import ApiError
from api.oracle.browser import CHROMIUM, CHROMIUM_ARGS
from api.routes.episodes import pinned_epoch, store_new_episode
from api.service.settings import Settings
from proxy.episode import EpisodeConfig
from proxy.guard import upstream_allowed
from proxy.knowledge import KnowledgeStore
from proxy.store import EpisodeStore
from shifts import interactive
from shifts.conditions import shifts_for

VIEWPORT = {"width": 1280, "height": 900}
NAVIGATION_TIMEOUT_MS = 30_000
NETWORK_IDLE_TIMEOUT_MS = 5_000
SCREENSHOT_TIMEOUT_MS = 10_000
MAX_IMAGES = 30  # image clips compared per load, in document order
PIXEL_THRESHOLD = 24  # a pixel differs when a channel differs by more than this (0-255)
PIXEL_RATIO = 0.005  # an image differs when more than this share of its pixels differ
MAX_DECODED_PIXELS = 500_000  # larger clips are compared byte for byte (pure-Python decoding)
ORACLE_TTL_S = 300
# The condition a shifted condition is judged against: the same one without its perceptual part.
BASELINES = {"Src": "Src", "Src-Perc": "Src", "Tgt": "Tgt", "Tgt-Perc": "Tgt"}
KINDS = (
    "structure",
    "error",
    "visibility",
    "covered",
    "moved",
    "resized",
    "image",
    "listeners",
    "label",
    "relabelled",
)
_one_at_a_time = asyncio.Lock()  # one Chromium at a time on the service's machine


# The label mapping the shifted page's runtime applies (its configuration attribute).
RUNTIME_LABELS = """() => {
  for (const script of document.querySelectorAll("script[data-cfg]")) {
    try { return (JSON.parse(script.getAttribute("data-cfg")).r || {}).labels || {}; }
    catch (e) { /* not ours */ }
  }
  return {};
}"""


# The start of a page's visible text, on one line.
PAGE_TEXT = """() => (document.body ? document.body.innerText : "")
  .replace(/\\s+/g, " ").trim().slice(0, 300)"""


@cache
def page_script() -> str:
    """The oracle's page script, counting interactive elements as the drift and the checker
    do (one definition: shifts/interactive.py)."""
    script = resources.files("api.oracle").joinpath("page.js").read_text(encoding="utf-8")
    return script.replace('"__INTERACTIVE__"', json.dumps(interactive.CSS), 1)


@dataclass
class Snapshot:
    """One page load as the oracle sees it. `elements` are the records of page.js
    (key, tag, interactive, heading, box [x, y, w, h], visible, hit, label, image, listeners);
    `labels_at_load` maps the keys of interactive elements to their labels at the load event,
    `images` the keys of visible image elements to a PNG of their clip."""

    url: str
    elements: list[dict[str, Any]]
    status: int | None = 200
    window: list[str] = field(default_factory=list)
    document: list[str] = field(default_factory=list)
    labels_at_load: dict[str, str] = field(default_factory=dict)
    # The episode's label mapping, as the page's runtime carries it ({} when nothing relabels).
    label_mapping: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    images: dict[str, bytes] = field(default_factory=dict)
    load_ms: float = 0.0
    # The start of the page's text when its status is not 2xx: what an error page says.
    text: str = ""

    def by_key(self) -> dict[str, dict[str, Any]]:
        return {element["key"]: element for element in self.elements}


@dataclass(frozen=True)
class Violation:
    kind: str
    detail: str
    element: str
    key: str = ""  # what identifies it across loads (an element key, or an error message)

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail, "element": self.element}


def locator_share(baseline: Snapshot, shifted: Snapshot) -> float | None:
    """The share of the interactive elements of both loads whose locator (id, classes, data-*
    hooks, XPath with positions) differs: how much of the page a recorded skill loses, as the
    browser renders it (elements scripts rendered included)."""
    before = {e["key"]: e.get("locator") for e in baseline.elements if e.get("interactive")}
    after = {e["key"]: e.get("locator") for e in shifted.elements if e.get("interactive")}
    common = [key for key in before if key in after]
    if not common:
        return None
    return round(sum(before[key] != after[key] for key in common) / len(common), 3)


def describe(element: dict[str, Any]) -> str:
    label = element.get("label") or ""
    shown = f' "{label[:60]}"' if label else ""
    return f"<{element.get('tag', '?')}>{shown} at {element['key']}"


def compare(
    baselines: Sequence[Snapshot],
    shifted: Snapshot,
    *,
    tolerance_px: float = 4,
    tolerance_ratio: float = 0.05,
    expect_relabel: bool = False,
) -> list[Violation]:
    """What differs between the baseline loads and a shifted load, minus what differs between
    baseline loads themselves (the page's noise: animations, timers, rotating content)."""
    if not baselines:
        raise ValueError("compare() needs at least one baseline snapshot")
    reference = baselines[0]
    options: dict[str, Any] = {
        "tolerance_px": tolerance_px,
        "tolerance_ratio": tolerance_ratio,
        "expect_relabel": expect_relabel,
    }
    noise: set[tuple[str, str]] = set()
    for other in baselines[1:]:
        noise |= {(v.kind, v.key) for v in _diff(reference, other, **options)}
        noise |= {(v.kind, v.key) for v in _diff(other, reference, **options)}
    seen_errors = {_normalise(message) for snapshot in baselines for message in snapshot.errors}
    violations = [
        Violation("error", f"{message} (not in the baseline)", "page", _normalise(message))
        for message in dict.fromkeys(shifted.errors)
        if _normalise(message) not in seen_errors
    ]
    statuses = {snapshot.status for snapshot in baselines}
    if shifted.status not in statuses:
        violations.append(
            Violation(
                "error",
                f"status {shifted.status} (baseline {sorted(statuses, key=str)[0]})",
                "page",
                "status",
            )
        )
    violations += [v for v in _diff(reference, shifted, **options) if (v.kind, v.key) not in noise]
    return _deduplicated(violations)


def _diff(
    a: Snapshot,
    b: Snapshot,
    *,
    tolerance_px: float,
    tolerance_ratio: float,
    expect_relabel: bool,
) -> list[Violation]:
    """Element by element: what `b` does differently from `a` (errors are compared apart)."""
    out: list[Violation] = []
    ea, eb = a.by_key(), b.by_key()
    for key in _topmost(set(ea) - set(eb), set(eb)):
        out.append(Violation("structure", "missing in the shifted page", describe(ea[key]), key))
    for key in _topmost(set(eb) - set(ea), set(ea)):
        out.append(Violation("structure", "not in the baseline", describe(eb[key]), key))
    for key, x in ea.items():
        y = eb.get(key)
        if y is None:
            continue
        name = describe(x)
        watched = bool(x["interactive"] or x["heading"])
        if watched and x["visible"] != y["visible"]:
            detail = "hidden in the shifted page" if x["visible"] else "hidden made visible"
            out.append(Violation("visibility", detail, name, key))
        if watched and x.get("hit") is True and y.get("hit") is False:
            detail = f"a click at its centre reaches <{y.get('blocker') or '?'}>, not it"
            out.append(Violation("covered", detail, name, key))
        if watched and x["visible"] and y["visible"]:
            out += _geometry(x, y, name, tolerance_px, tolerance_ratio)
        out += _listeners(x, y, name)
        if x["interactive"]:
            out += _labels(a, b, key, name, expect_relabel)
        if x.get("image") and x["visible"] and key in a.images:
            if not y["visible"]:
                out.append(Violation("image", "hidden in the shifted page", name, key))
            elif key in b.images and images_differ(a.images[key], b.images[key]):
                out.append(Violation("image", "its pixels differ", name, key))
    for target, lost in (("window", a.window), ("document", a.document)):
        gone = sorted(set(lost) - set(getattr(b, target)))
        if gone:
            out.append(Violation("listeners", f"lost listeners: {', '.join(gone)}", target, target))
    return out


def _topmost(missing: set[str], other: set[str]) -> list[str]:
    """Keys of whole missing subtrees (their parent is on both sides): one violation for a
    missing list, not one per item."""
    return sorted(key for key in missing if "/" not in key or key.rsplit("/", 1)[0] in other)


def _geometry(
    x: dict[str, Any], y: dict[str, Any], name: str, tolerance_px: float, tolerance_ratio: float
) -> list[Violation]:
    out = []
    (ax, ay, aw, ah), (bx, by, bw, bh) = x["box"], y["box"]
    if max(abs(ax - bx), abs(ay - by)) > tolerance_px:
        detail = f"moved from ({ax:g}, {ay:g}) to ({bx:g}, {by:g})"
        out.append(Violation("moved", detail, name, x["key"]))
    if abs(aw - bw) > max(tolerance_px, tolerance_ratio * aw) or abs(ah - bh) > max(
        tolerance_px, tolerance_ratio * ah
    ):
        detail = f"resized from {aw:g}x{ah:g} to {bw:g}x{bh:g}"
        out.append(Violation("resized", detail, name, x["key"]))
    return out


def _listeners(x: dict[str, Any], y: dict[str, Any], name: str) -> list[Violation]:
    had, has = set(x.get("listeners") or ()), set(y.get("listeners") or ())
    if had - has:
        detail = f"lost listeners: {', '.join(sorted(had - has))}"
        return [Violation("listeners", detail, name, x["key"])]
    if has and not had:
        detail = f"gained listeners: {', '.join(sorted(has))}"
        return [Violation("listeners", detail, name, x["key"])]
    return []


def _labels(a: Snapshot, b: Snapshot, key: str, name: str, expect_relabel: bool) -> list[Violation]:
    """Settled labels must be the app's own settled labels under the episode's mapping (the
    identity when nothing relabels). Judged on settled states, so the app's own late labels
    (tooltips a script completes, counters) never count, whenever they land."""
    mapping = b.label_mapping
    settled_a, settled_b = a.by_key()[key]["label"], b.by_key()[key]["label"]
    expected = mapping.get(settled_a, settled_a)
    if settled_b == expected:
        return []
    at_load_a, at_load_b = a.labels_at_load.get(key), b.labels_at_load.get(key)
    if at_load_a is not None and at_load_b == mapping.get(at_load_a, at_load_a):
        detail = f"changed after load: {at_load_b!r} -> {settled_b!r} (expected {expected!r})"
        return [Violation("label", detail, name, key)]
    if expect_relabel and not mapping:
        return []  # a relabelling episode whose mapping the page does not carry: unjudgeable
    detail = f"{settled_a!r} in the baseline, {settled_b!r} shifted (expected {expected!r})"
    return [Violation("relabelled", detail, name, key)]


def _deduplicated(violations: Iterable[Violation]) -> list[Violation]:
    return list(dict.fromkeys(violations))


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def _normalise(message: str) -> str:
    """An error message without what varies between loads: URLs, numbers (ports, line and
    column, timings), whitespace."""
    text = _URL.sub("<url>", message)
    return _SPACE.sub(" ", _NUMBER.sub("0", text)).strip()[:300]


# --- pixels ---------------------------------------------------------------------------------


def images_differ(png_a: bytes, png_b: bytes) -> bool:
    """More than PIXEL_RATIO of the pixels differ by more than PIXEL_THRESHOLD in a channel.
    PNGs this decoder does not read (or very large ones) are compared byte for byte."""
    if png_a == png_b:
        return False
    a, b = decode_png(png_a), decode_png(png_b)
    if a is None or b is None:
        return True
    (wa, ha, ca, pa), (wb, hb, cb, pb) = a, b
    if (wa, ha) != (wb, hb):
        return True
    channels = min(ca, cb, 3)  # colour only: alpha is the same for a screenshot
    allowed, differing = PIXEL_RATIO * wa * ha, 0
    for i in range(wa * ha):
        oa, ob = i * ca, i * cb
        for c in range(channels):
            if abs(pa[oa + c] - pb[ob + c]) > PIXEL_THRESHOLD:
                differing += 1
                break
        if differing > allowed:
            return True
    return False


def decode_png(data: bytes) -> tuple[int, int, int, bytes] | None:
    """(width, height, channels, pixels) of an 8-bit, non-interlaced greyscale/RGB(A) PNG,
    the kind Chromium writes; None for anything else."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    position, header, chunks = 8, b"", []
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
        position += 12 + length
    if len(header) != 13:
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or interlace or channels is None or width * height > MAX_DECODED_PIXELS:
        return None
    try:
        raw = zlib.decompress(b"".join(chunks))
    except zlib.error:
        return None
    stride = width * channels
    if len(raw) < height * (stride + 1):
        return None
    pixels = bytearray(height * stride)
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up = previous[i]
                corner = previous[i - channels] if i >= channels else 0
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                guess = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + guess) & 0xFF
        elif kind != 0:
            return None
        pixels[row * stride : (row + 1) * stride] = line
        previous = line
    return width, height, channels, bytes(pixels)


# --- loading pages ----------------------------------------------------------------------------

WrapperTags = Callable[[str], Awaitable[list[str]]]


async def load_snapshot(
    browser: Any,
    url: str,
    *,
    proxy: dict[str, str] | None = None,
    cookies: Sequence[dict[str, Any]] = (),
    settle_ms: int = 800,
    wrappers: WrapperTags | None = None,
) -> Snapshot:
    """Load `url` in a fresh context (through `proxy` when given) and snapshot it: labels at the
    load event, then, after network idle (bounded) and `settle_ms`, everything else.
    `wrappers(page_url)` names the wrapper elements the proxy inserted into this load."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    script = page_script()
    options: dict[str, Any] = {"viewport": VIEWPORT, "ignore_https_errors": True}
    if proxy:
        options["proxy"] = proxy
    context = await browser.new_context(**options)
    started = time.perf_counter()
    try:
        if cookies:
            await context.add_cookies(list(cookies))
        await context.add_init_script(script=f"({script})({{mode: 'init'}});")
        page = await context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"{error.name}: {error.message}"))
        page.on(
            "console",
            lambda message: errors.append(message.text) if message.type == "error" else None,
        )
        response = await page.goto(url, wait_until="load", timeout=NAVIGATION_TIMEOUT_MS)
        tags = await wrappers(page.url) if wrappers else []
        labels = await page.evaluate(script, {"mode": "labels", "wrappers": tags})
        # A page that polls never idles: the wait is bounded, and the settle period follows.
        with contextlib.suppress(PlaywrightTimeout):
            await page.wait_for_load_state("networkidle", timeout=NETWORK_IDLE_TIMEOUT_MS)
        await asyncio.sleep(settle_ms / 1000)  # the measurement itself: what changes meanwhile
        data = await page.evaluate(script, {"mode": "snapshot", "wrappers": tags})
        images = await _image_clips(page, script, data["elements"], tags)
        mapping = await page.evaluate(RUNTIME_LABELS)
        status = response.status if response else None
        text = "" if status and 200 <= status < 300 else await page.evaluate(PAGE_TEXT)
        return Snapshot(
            url=data["url"],
            elements=data["elements"],
            status=status,
            window=data["window"],
            document=data["document"],
            labels_at_load=labels,
            label_mapping=dict(mapping or {}),
            errors=list(errors),
            images=images,
            load_ms=round((time.perf_counter() - started) * 1000, 1),
            text=text,
        )
    finally:
        await context.close()


async def _image_clips(
    page: Any, script: str, elements: list[dict[str, Any]], tags: list[str]
) -> dict[str, bytes]:
    from playwright.async_api import Error as PlaywrightError

    images: dict[str, bytes] = {}
    for index, element in enumerate(elements):
        if len(images) >= MAX_IMAGES:
            break
        if not (element["image"] and element["visible"]):
            continue
        clip = await page.evaluate(script, {"mode": "clip", "index": index, "wrappers": tags})
        if not clip:
            continue
        try:
            images[element["key"]] = await page.screenshot(
                clip=clip,
                type="png",
                animations="disabled",
                caret="hide",
                timeout=SCREENSHOT_TIMEOUT_MS,
            )
        except PlaywrightError:
            continue
    await page.evaluate(script, {"mode": "reset", "wrappers": tags})
    return images


async def compare_urls(
    browser: Any,
    baseline_url: str,
    shifted_url: str,
    *,
    baseline_runs: int = 2,
    settle_ms: int = 800,
    tolerance_px: float = 4,
    tolerance_ratio: float = 0.05,
    expect_relabel: bool = False,
    cookies: Sequence[dict[str, Any]] = (),
    wrapper_tags: Sequence[str] = (),
) -> list[Violation]:
    """The oracle on two URLs, without the proxy: `shifted_url` judged against `baseline_url`
    (a page and a hand-made variant of it)."""

    async def tags(page_url: str) -> list[str]:
        return list(wrapper_tags)

    baselines = [
        await load_snapshot(browser, baseline_url, cookies=cookies, settle_ms=settle_ms)
        for _ in range(baseline_runs)
    ]
    shifted = await load_snapshot(
        browser, shifted_url, cookies=cookies, settle_ms=settle_ms, wrappers=tags
    )
    return compare(
        baselines,
        shifted,
        tolerance_px=tolerance_px,
        tolerance_ratio=tolerance_ratio,
        expect_relabel=expect_relabel,
    )


def wrapper_tags_of(events: Sequence[dict[str, Any]], page_url: str) -> list[str]:
    """The wrapper tag names of the last `page_served` document event for `page_url` (or, when
    none names that URL, e.g. after a redirect, the last document served); [] if absent."""
    served = [
        event
        for event in events
        if event.get("type") == "page_served" and event.get("kind", "document") == "document"
    ]
    matching = [event for event in served if event.get("url") == page_url] or served
    if not matching:
        return []
    shifts = matching[-1].get("shifts")
    drift = shifts.get("locator_drift") if isinstance(shifts, dict) else None
    wrapper = drift.get("wrapper") if isinstance(drift, dict) else None
    names = [wrapper] if isinstance(wrapper, str) else wrapper if isinstance(wrapper, list) else []
    return [name.lower() for name in names if isinstance(name, str) and name]


# --- the route's run: temporary episodes through this process's proxy -------------------------


async def browser_check(
    store: EpisodeStore,
    settings: Settings,
    *,
    url: str,
    condition: str,
    seeds: Sequence[int],
    site: str | None = None,
    targets: dict[str, str] | None = None,
    shift_params: dict[str, dict[str, Any]] | None = None,
    perceptual: str | None = None,
    cookies: Sequence[dict[str, Any]] = (),
    tolerance_px: float = 4,
    tolerance_ratio: float = 0.05,
    settle_ms: int = 800,
    baseline_runs: int = 2,
    knowledge: KnowledgeStore | None = None,
) -> AsyncGenerator[dict[str, Any], None]:
    """Baseline loads under the condition without its perceptual part, one shifted load per
    seed, each in its own temporary episode (internal, tagged `oracle`, deleted after its load).

    Yields as it goes: `{"type": "started"}` once Chromium runs, `{"type": "baseline", "load",
    "of", "status", "load_ms"}` per baseline load, `{"type": "run", "seed", "load_ms",
    "locator_share", "violations"}` per seed and, last, `{"type": "result", ...}`: the whole
    answer, whose `status` is `aligned`, `violations` or `unchecked` (with a `reason`: the
    unshifted page did not load or answered a non-2xx status, or the browser crashed; nothing
    can be said about the shift then). Raises ApiError only before its first item (a refused
    request, no Playwright, no Chromium)."""
    try:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright
    except ImportError:
        raise ApiError(501, "the browser check needs Playwright: pip install playwright") from None
    await _preflight(settings, url)
    # Every load of one check is shifted against the same knowledge, even if a learn run makes
    # a new version while it runs.
    epoch = await pinned_epoch(knowledge, None) if knowledge is not None else None
    baseline_condition = BASELINES.get(condition)
    if baseline_condition is None or not seeds:
        raise ApiError(422, f"the browser check takes one of {sorted(BASELINES)} and a seed")
    common: dict[str, Any] = {
        **({"knowledge": epoch} if epoch is not None else {}),
        "site": site,
        "targets": dict(targets or {}),
        "ttl_s": ORACLE_TTL_S,
        "tags": {"oracle": "1"},
        "internal": True,  # the service's own: no task attempt, kept out of /reports
        **({"perceptual": perceptual} if perceptual is not None else {}),
    }
    params = dict(shift_params or {})
    baseline_names = set(shifts_for(baseline_condition))
    shifted_config = {**common, "condition": condition, "shift_params": params}
    baseline_config = {
        **common,
        "condition": baseline_condition,
        "shift_params": {name: value for name, value in params.items() if name in baseline_names},
    }
    expect_relabel = "relabel" in _validated(shifted_config).shift_names()
    _validated(baseline_config)  # both are checked before a browser starts
    created: list[str] = []

    async def load(browser: Any, config: dict[str, Any], seed: int) -> Snapshot:
        config = {**config, "seed": seed}
        episode = await store_new_episode(store, settings, config, None, knowledge)
        created.append(episode.id)

        async def tags(page_url: str) -> list[str]:
            return wrapper_tags_of(await all_events(store, episode.id), page_url)

        try:
            return await load_snapshot(
                browser,
                url,
                proxy={
                    "server": settings.proxy_server,
                    "username": episode.id,
                    "password": episode.token,
                },
                cookies=cookies,
                settle_ms=settle_ms,
                wrappers=tags,
            )
        finally:
            await store.delete_episode(episode.id)

    async def crashed(browser: Any, error: Exception, which: str) -> str | None:
        """The reason of an unchecked result when Chromium went away during a load, else None."""
        if await _alive(browser, PlaywrightError):
            return None
        return f"the browser crashed during {which}: {_first_line(error)}"

    runs: list[dict[str, Any]] = []
    reason: str | None = None
    try:
        async with _one_at_a_time, async_playwright() as playwright:
            try:
                browser = await playwright.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS
                )
            except PlaywrightError as error:
                message = f"the browser check needs Chromium at {CHROMIUM}: {_first_line(error)}"
                raise ApiError(503, message) from None
            try:
                yield {"type": "started", "url": url, "condition": condition}
                baselines: list[Snapshot] = []
                for index in range(baseline_runs):
                    which = f"the unshifted load of {url}"
                    try:
                        snapshot = await load(browser, baseline_config, seeds[0])
                    except PlaywrightError as error:
                        failed = f"{which} failed: {_first_line(error)}"
                        reason = await crashed(browser, error, which) or failed
                        break
                    if not _loaded(snapshot):
                        reason = f"{which} {_answered(snapshot)}"
                        break
                    baselines.append(snapshot)
                    yield {
                        "type": "baseline",
                        "load": index + 1,
                        "of": baseline_runs,
                        "status": snapshot.status,
                        "load_ms": snapshot.load_ms,
                    }
                for seed in seeds if reason is None else ():
                    try:
                        shifted = await load(browser, shifted_config, seed)
                    except PlaywrightError as error:
                        reason = await crashed(browser, error, f"the load of seed {seed}")
                        if reason:
                            break
                        # The unshifted page loads and this one does not: the shift broke it.
                        failure = Violation("error", f"no load: {_first_line(error)}", "page")
                        run: dict[str, Any] = {
                            "seed": seed,
                            "load_ms": None,
                            "violations": [failure],
                        }
                    else:
                        found = compare(
                            baselines,
                            shifted,
                            tolerance_px=tolerance_px,
                            tolerance_ratio=tolerance_ratio,
                            expect_relabel=expect_relabel,
                        )
                        run = {
                            "seed": seed,
                            "load_ms": shifted.load_ms,
                            "violations": found,
                            "locator_share": locator_share(baselines[0], shifted),
                        }
                    run["violations"] = [violation.as_dict() for violation in run["violations"]]
                    runs.append(run)
                    yield {"type": "run", **run}
            finally:
                with contextlib.suppress(PlaywrightError):
                    await browser.close()
    finally:
        for episode_id in created:
            await store.delete_episode(episode_id)
    total = sum(len(run["violations"]) for run in runs)
    yield {
        "type": "result",
        "url": url,
        "condition": condition,
        "status": UNCHECKED if reason else of_violations(total),
        "reason": reason,
        "runs": runs,
        "violations": total,
    }


def _loaded(snapshot: Snapshot) -> bool:
    return snapshot.status is not None and 200 <= snapshot.status < 300


def _answered(snapshot: Snapshot) -> str:
    """What a load that gave no page answered, its status and what the page said: there is
    nothing to compare a shifted load with."""
    if snapshot.status is None:
        return "got no response"
    said = f"; the page says: {snapshot.text}" if snapshot.text else ""
    return f"answered {snapshot.status}, not a page that loads{said}"


async def _alive(browser: Any, error: type[Exception]) -> bool:
    """Whether Chromium still runs: it can still open a context."""
    if not browser.is_connected():
        return False
    try:
        context = await browser.new_context()
        await context.close()
    except error:
        return False
    return True


async def _preflight(settings: Settings, url: str) -> None:
    """Refuse what the proxy would refuse, and a proxy that is not listening, before a browser
    starts."""
    parsed = httpx.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    forbidden = ",".join(settings.own_addresses())
    if not upstream_allowed(parsed.host, port, settings.upstream_allow, forbidden):
        raise ApiError(403, f"the upstream {parsed.host}:{port} is not allowed through this proxy")
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(settings.public_proxy_host, settings.proxy_port), 2
        )
    except (OSError, TimeoutError):
        raise ApiError(503, f"the proxy is not reachable at {settings.proxy_server}") from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


def _validated(config: dict[str, Any]) -> EpisodeConfig:
    try:
        return EpisodeConfig.model_validate(config)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or 'body'}: {item['msg']}"
            for item in error.errors()
        )
        raise ApiError(422, problems) from None


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0]


__all__ = [
    "KINDS",
    "Snapshot",
    "Violation",
    "compare",
    "compare_urls",
    "decode_png",
    "images_differ",
    "browser_check",
    "load_snapshot",
    "wrapper_tags_of",
]
