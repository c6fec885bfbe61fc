"""One URL under all six conditions, side by side: screenshots taken through this proxy.

Each condition gets a short-lived episode (internal, tagged `preview`) and a fresh browser
context bound to it, so the screenshots are exactly what an agent would see with that seed.
`-Exec` uses the `multiple` regime with no delay, so the popup is on the screenshot (the
extended set's too: its kinds that show in the page, on load).
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from api.episodes.lifecycle import pinned_epoch, store_new_episode
from api.failures import MissingExtra, Unavailable
from api.oracle.browser import CHROMIUM, CHROMIUM_ARGS, missing_playwright
from api.service.settings import Settings
from proxy.episode import Episode
from proxy.knowledge import KnowledgeStore
from proxy.store import EpisodeStore
from shifts import CONDITIONS
from shifts.interruptions import NATIVE_KINDS
from shifts.popups import EXTENDED_KINDS

VIEWPORT = {"width": 1024, "height": 720}
POPUP_SETTLE_S = 0.6  # the runtime shows a zero-delay popup on load; give it a frame or two
PREVIEW_TTL_S = 120
# The extended set's kinds a screenshot can show, on load (native dialogs are the browser's).
ON_THE_SCREENSHOT = {
    "kinds": [kind for kind in EXTENDED_KINDS if kind not in NATIVE_KINDS],
    "triggers": ["load"],
}
_one_at_a_time = asyncio.Lock()  # one Chromium at a time: previews are for a person, not a load


async def render_preview(
    store: EpisodeStore,
    settings: Settings,
    url: str,
    site: str | None,
    seed: int,
    targets: dict[str, str],
    knowledge: KnowledgeStore | None = None,
    execution: str = "benchmark",
) -> list[dict[str, Any]]:
    try:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import async_playwright
    except ImportError:
        raise MissingExtra(missing_playwright("previews")) from None
    config = {
        "regime": "multiple",
        "regime_params": {"min_ms": 0, "max_ms": 0},
        "seed": seed,
        "site": site,
        "targets": targets,
        "ttl_s": PREVIEW_TTL_S,
        "tags": {"preview": "1"},
        "internal": True,  # the service's own: no task attempt, kept out of /reports
    }
    if knowledge is not None:  # the six conditions against one version of the site knowledge
        config["knowledge"] = await pinned_epoch(knowledge, None)
    episodes: list[Episode] = []
    shots = []
    try:
        for condition in CONDITIONS:
            shown: dict[str, Any] = {"condition": condition, "execution": execution}
            if execution == "extended" and condition.endswith("-Exec"):
                shown["shift_params"] = {"popup": ON_THE_SCREENSHOT}
            episodes.append(
                await store_new_episode(store, settings, {**config, **shown}, None, knowledge)
            )
        async with _one_at_a_time, async_playwright() as playwright:
            try:
                browser = await playwright.chromium.launch(
                    executable_path=CHROMIUM, args=CHROMIUM_ARGS
                )
            except PlaywrightError as error:
                message = str(error).splitlines()[0]
                raise Unavailable(f"previews need Chromium at {CHROMIUM}: {message}") from None
            try:
                for episode in episodes:
                    shots.append(await _shoot(browser, settings, episode, url, PlaywrightError))
            finally:
                await browser.close()
    finally:
        for episode in episodes:
            await store.delete_episode(episode.id)
    return shots


async def _shoot(
    browser: Any, settings: Settings, episode: Episode, url: str, error: type[Exception]
) -> Any:
    context = await browser.new_context(
        viewport=VIEWPORT,
        ignore_https_errors=True,
        proxy={"server": settings.proxy_server, "username": episode.id, "password": episode.token},
    )
    try:
        page = await context.new_page()
        response = await page.goto(url, wait_until="load", timeout=20_000)
        await asyncio.sleep(POPUP_SETTLE_S)
        png = await page.screenshot(type="png")
        return {
            "condition": episode.condition,
            "status": response.status if response else None,
            "title": await page.title(),
            "png": "data:image/png;base64," + base64.b64encode(png).decode(),
        }
    except error as failure:
        return {"condition": episode.condition, "error": str(failure).splitlines()[0]}
    finally:
        await context.close()
