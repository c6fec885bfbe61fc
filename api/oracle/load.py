"""Loading a page in Chromium and reducing it to a snapshot (api/oracle/page.js, run in the page):
every element's structural key, tag, box, visibility, reachability, label, image clip and
listeners, plus the page's errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from importlib import resources
from typing import Any

from api.oracle.compare import Snapshot, Violation, compare
from shifts import interactive

VIEWPORT = {"width": 1280, "height": 900}


NAVIGATION_TIMEOUT_MS = 30_000


NETWORK_IDLE_TIMEOUT_MS = 5_000


SCREENSHOT_TIMEOUT_MS = 10_000


MAX_IMAGES = 30  # image clips compared per load, in document order


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
        await page.evaluate(script, {"mode": "settle", "wrappers": tags})
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
