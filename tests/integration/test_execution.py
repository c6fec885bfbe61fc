"""Execution shift end to end: real Chromium, the demo shop, the service on a real redis-server."""

from __future__ import annotations

import concurrent.futures
from collections import Counter
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers.processes import RedisProcess, ServiceProcess

pytestmark = pytest.mark.browser
NEWSLETTER = {"popup": {"kinds": ["newsletter"]}}


def open_context(browser: Browser, episode: dict[str, Any]) -> BrowserContext:
    return browser.new_context(proxy=episode["proxy"])


def open_demo(
    browser: Browser, service: ServiceProcess, path: str, **config: Any
) -> tuple[dict[str, Any], BrowserContext, Page]:
    """A new episode, a browser context bound to it, and a page showing `path` of the demo."""
    episode = service.create_episode(condition="Src-Exec", **config)
    context = open_context(browser, episode)
    page = context.new_page()
    page.goto(f"{service.demo}{path}")
    return episode, context, page


def wait_for_dialog(page: Page, state: str = "visible") -> None:
    page.get_by_role("dialog").wait_for(state=state, timeout=5000)  # type: ignore[arg-type]


def popup_count(page: Page, wait_ms: int = 600) -> int:
    """How many dialogs the page shows once its runtime had time to run."""
    page.wait_for_load_state("load")
    page.wait_for_timeout(wait_ms)
    return page.get_by_role("dialog").count()


def dismiss(page: Page) -> None:
    page.get_by_role("button", name="No thanks").click(timeout=5000)
    wait_for_dialog(page, "detached")


def counts(service: ServiceProcess, episode_id: str) -> Counter[str]:
    return Counter(str(event["type"]) for event in service.events(episode_id))


def test_once_shows_a_single_time_across_navigation_reload_back_and_tabs(
    browser: Browser, demo_service: ServiceProcess
) -> None:
    episode, context, page = open_demo(
        browser, demo_service, "/", regime="once", shift_params=NEWSLETTER
    )
    wait_for_dialog(page)
    # While it is up, a covered control cannot be clicked...
    with pytest.raises(PlaywrightTimeout):
        page.get_by_role("link", name="Browse products").click(timeout=1000)
    dismiss(page)
    # ...and after dismissal it can.
    page.get_by_role("link", name="Browse products").click(timeout=5000)
    page.wait_for_url("**/products")
    assert popup_count(page) == 0
    page.reload()
    assert popup_count(page) == 0
    page.go_back()
    assert popup_count(page) == 0
    second_tab = context.new_page()
    second_tab.goto(f"{demo_service.demo}/cart")
    assert popup_count(second_tab) == 0
    context.close()
    seen = counts(demo_service, str(episode["id"]))
    assert (seen["popup_injected"], seen["popup_shown"], seen["popup_dismissed"]) == (1, 1, 1)
    assert seen["page_served"] >= 5


def test_multiple_shows_on_every_navigation_even_after_dismissal(
    browser: Browser, demo_service: ServiceProcess
) -> None:
    episode, context, page = open_demo(
        browser, demo_service, "/", regime="multiple", shift_params=NEWSLETTER
    )
    shown = 0
    for step in ("start", "navigate", "reload", "back", "tab"):
        if step == "navigate":
            page.get_by_role("link", name="Browse products").click()
            page.wait_for_url("**/products")
        elif step == "reload":
            page.reload()
        elif step == "back":
            page.go_back()
        elif step == "tab":
            page = context.new_page()
            page.goto(f"{demo_service.demo}/cart")
        wait_for_dialog(page)
        dismiss(page)
        shown += 1
    context.close()
    events = demo_service.wait_for_events(str(episode["id"]), {"popup_dismissed"})
    seen = Counter(str(event["type"]) for event in events)
    assert seen["popup_shown"] == seen["popup_dismissed"] == shown == 5
    # A back navigation restored from the bfcache never reaches the proxy, so the runtime
    # re-shows the popup itself; every other step was injected by the proxy.
    assert (
        seen["popup_injected"]
        + sum(1 for event in events if event["type"] == "popup_shown" and event.get("restored"))
        == shown
    )


def test_a_covered_button_swallows_a_forced_click(
    browser: Browser, demo_service: ServiceProcess
) -> None:
    episode, context, page = open_demo(
        browser, demo_service, "/products", regime="multiple", shift_params=NEWSLETTER
    )
    wait_for_dialog(page)
    page.get_by_role("button", name="Add to Cart").first.click(force=True)  # lands on the overlay
    page.keyboard.press("Escape")
    wait_for_dialog(page, "detached")
    assert page.url.endswith("/products")  # the swallowed click submitted nothing
    page.get_by_role("button", name="Add to Cart").first.click()
    page.wait_for_url("**/cart")
    wait_for_dialog(page)
    context.close()
    events = demo_service.wait_for_events(str(episode["id"]), {"blocked_interaction"})
    blocked = [event for event in events if event["type"] == "blocked_interaction"]
    assert blocked and blocked[0]["input"] == "click"
    report = httpx.get(f"{demo_service.api}/episodes/{episode['id']}/report").json()
    assert report["popups"]["blocked_interactions"] == len(blocked)
    assert report["popups"]["dismissed_by"] == {"escape": 1}
    assert report["popups"]["time_to_dismiss_ms"]["count"] == 1


def test_random_popup_appears_after_its_drawn_delay(
    browser: Browser, demo_service: ServiceProcess
) -> None:
    episode, context, page = open_demo(
        browser,
        demo_service,
        "/",
        regime="random",
        seed=11,
        regime_params={"p": 1.0, "min_ms": 1500, "max_ms": 2500},
        shift_params=NEWSLETTER,
    )
    assert popup_count(page, wait_ms=300) == 0  # not yet: the delay is at least 1.5 s
    wait_for_dialog(page)
    context.close()
    events = demo_service.wait_for_events(str(episode["id"]), {"popup_shown"})
    draw = next(event for event in events if event["type"] == "random_draw")
    shown = next(event for event in events if event["type"] == "popup_shown")
    assert draw["fired"] and 1500 <= int(draw["delay_ms"]) <= 2500
    assert shown["delay_ms"] == draw["delay_ms"]


def test_strict_csp_page_still_shows_every_kind(
    browser: Browser, demo_service: ServiceProcess
) -> None:
    """The demo shop sends script-src 'nonce-…' 'strict-dynamic' and a nonce-only style-src."""
    for kind in ("cookie_consent", "newsletter", "survey", "promotion", "session"):
        violations: list[str] = []
        _, context, page = open_demo(
            browser, demo_service, "/", regime="multiple", shift_params={"popup": {"kinds": [kind]}}
        )
        page.on("console", lambda m, seen=violations: seen.append(m.text))
        page.reload()
        dialog = page.get_by_role("dialog")
        dialog.wait_for(state="visible", timeout=5000)
        box = page.locator("[role=dialog]").bounding_box()
        assert box is not None and box["width"] > 200, kind  # styled (nonce'd <style> applied)
        page.get_by_role("button", name="Close").click()
        dialog.wait_for(state="detached", timeout=5000)
        assert not [text for text in violations if "Content Security" in text], kind
        context.close()


def http_navigations(service: ServiceProcess, episode: dict[str, Any], url: str, n: int) -> None:
    with service.client(episode) as client:
        for _ in range(n):
            client.get(url, headers={"Sec-Fetch-Dest": "document"}).raise_for_status()


def draws(service: ServiceProcess, episode_id: str) -> list[tuple[bool, int]]:
    return [
        (bool(event["fired"]), int(event["delay_ms"]))  # type: ignore[call-overload]
        for event in service.events(episode_id)
        if event["type"] == "random_draw"
    ]


def test_random_draws_replay_for_a_seed_and_match_p(demo_service: ServiceProcess) -> None:
    url = f"{demo_service.demo}/products"
    params = {"p": 0.3, "min_ms": 0, "max_ms": 4000}
    runs = []
    for seed in (5, 5, 6):
        episode = demo_service.create_episode(
            condition="Src-Exec", regime="random", seed=seed, regime_params=params
        )
        http_navigations(demo_service, episode, url, 50)
        runs.append(draws(demo_service, str(episode["id"])))
    assert len(runs[0]) == 50 and runs[0] == runs[1]
    assert runs[0] != runs[2]
    big = demo_service.create_episode(
        condition="Src-Exec", regime="random", seed=9, regime_params=params
    )
    http_navigations(demo_service, big, url, 400)
    seen = counts(demo_service, str(big["id"]))
    assert seen["random_draw"] == 400
    assert 0.22 <= seen["popup_injected"] / 400 <= 0.38


def test_patch_mid_episode_is_honoured_on_the_next_load(demo_service: ServiceProcess) -> None:
    episode = demo_service.create_episode(condition="Src-Exec", regime="multiple")
    url = f"{demo_service.demo}/"
    with demo_service.client(episode) as client:
        nav = {"Sec-Fetch-Dest": "document"}
        assert "&quot;p&quot;:{" in client.get(url, headers=nav).text
        httpx.patch(
            f"{demo_service.api}/episodes/{episode['id']}",
            json={"regime": "random", "regime_params": {"p": 0.0}},
        ).raise_for_status()
        assert "&quot;p&quot;:null" in client.get(url, headers=nav).text
        httpx.patch(
            f"{demo_service.api}/episodes/{episode['id']}", json={"condition": "Src"}
        ).raise_for_status()
        assert "/__ss/r.js" not in client.get(url, headers=nav).text


def test_once_across_two_processes_sharing_redis(
    workdir: Any, redis_server: RedisProcess, demo_service: ServiceProcess
) -> None:
    shared = ["--redis-url", redis_server.url, "--key-prefix", "demo:"]
    other = ServiceProcess(workdir, *shared).start()
    try:
        episode = demo_service.create_episode(condition="Src-Exec", regime="once")
        url = f"{demo_service.demo}/"
        header = dict(episode["header"])  # type: ignore[call-overload]

        def load(proxy: str) -> bool:
            with httpx.Client(proxy=proxy, headers=header) as client:
                body = client.get(url, headers={"Sec-Fetch-Dest": "document"}).text
            return "&quot;p&quot;:{" in body

        proxies = [demo_service.proxy, other.proxy] * 15
        with concurrent.futures.ThreadPoolExecutor(max_workers=10) as pool:
            injected = list(pool.map(load, proxies))
        assert injected.count(True) == 1
        seen = counts(demo_service, str(episode["id"]))
        assert seen["popup_injected"] == 1 and seen["page_served"] == 30
    finally:
        other.stop()
