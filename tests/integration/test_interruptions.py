"""The extended execution set end to end: real Chromium on the demo shop through the service.
Each kind, host and trigger shows as planned, blocks what it covers, is dismissed the way an
agent would, and leaves the page exactly as it was; the events say what happened."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.helpers.processes import ServiceProcess

pytestmark = pytest.mark.browser
LINK = "Browse products"


@pytest.fixture
def opened(browser: Browser, memory_demo_service: ServiceProcess) -> Iterator[Any]:
    contexts: list[BrowserContext] = []

    def open_page(
        path: str = "/", viewport: dict[str, int] | None = None, **popup: Any
    ) -> tuple[str, Page]:
        episode = memory_demo_service.create_episode(
            condition="Src-Exec",
            execution="extended",
            regime="multiple",
            shift_params={"popup": popup},
        )
        context = browser.new_context(
            proxy=episode["proxy"], viewport=viewport or {"width": 1000, "height": 700}
        )
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{memory_demo_service.demo}{path}")
        page.wait_for_load_state("load")
        return str(episode["id"]), page

    yield open_page
    for context in contexts:
        context.close()


def snapshot(page: Page) -> str:
    """The page as the DOM has it (what a dismissed interruption must give back)."""
    return str(page.evaluate("document.documentElement.outerHTML"))


def seen(service: ServiceProcess, episode_id: str, wanted: set[str]) -> list[dict[str, Any]]:
    return [dict(e) for e in service.wait_for_events(episode_id, wanted, timeout=15)]


def dialog_in(page: Page, host: str) -> Locator:
    """The interruption's dialog as a Playwright agent finds it: by role (open shadow roots are
    pierced; an iframe is entered)."""
    if host == "iframe":
        return page.frame_locator("iframe[title]").get_by_role("dialog")
    return page.get_by_role("dialog")


def ax_names(page: Page) -> list[tuple[str, str]]:
    """(role, name) of every node of Chromium's accessibility tree of the page: what
    BrowserGym's agents read, closed shadow roots included."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    return [(n.get("role", {}).get("value", ""), n.get("name", {}).get("value", "")) for n in nodes]


@pytest.mark.parametrize("host", ["page", "shadow_open", "shadow_closed", "iframe"])
def test_each_host_shows_blocks_and_gives_the_page_back(
    opened: Any, memory_demo_service: ServiceProcess, host: str
) -> None:
    episode_id, page = opened(kinds=["newsletter"], hosts=[host], triggers=["interaction"])
    before = snapshot(page)
    page.mouse.click(5, 5)  # the first interaction brings it
    if host == "shadow_closed":
        # No selector reaches into a closed shadow root: the agent sees it in the
        # accessibility tree (BrowserGym's observation) and closes it with Escape.
        events = seen(memory_demo_service, episode_id, {"popup_shown"})
        assert ("dialog", "Stay in the loop") in ax_names(page)
        with pytest.raises(PlaywrightTimeout):
            page.get_by_role("link", name=LINK).click(timeout=1000)
        page.keyboard.press("Escape")
    else:
        dialog = dialog_in(page, host)
        dialog.wait_for(state="visible", timeout=10_000)
        with pytest.raises(PlaywrightTimeout):  # what it covers cannot be clicked
            page.get_by_role("link", name=LINK).click(timeout=1000)
        dialog.get_by_role("button", name="Close").click()
        dialog.wait_for(state="detached", timeout=10_000)
    events = seen(memory_demo_service, episode_id, {"popup_shown", "popup_dismissed"})
    assert snapshot(page) == before
    shown = next(e for e in events if e["type"] == "popup_shown")
    assert (shown["kind"], shown["host"], shown["trigger"]) == ("newsletter", host, "interaction")
    dismissed = next(e for e in events if e["type"] == "popup_dismissed")
    assert dismissed["how"] == ("escape" if host == "shadow_closed" else "close")
    page.get_by_role("link", name=LINK).click(timeout=5000)  # the task goes on
    page.wait_for_url("**/products")


@pytest.mark.parametrize("host", ["page", "shadow_open", "shadow_closed"])
def test_keys_inside_the_dialog_reach_it_in_every_host(
    opened: Any, memory_demo_service: ServiceProcess, host: str
) -> None:
    # The focus trap keeps focus in the dialog, on its primary button at first: what the
    # agent types there is the dialog's, not a blocked interaction, also where a closed
    # shadow root hides the dialog from the document's listeners.
    episode_id, page = opened(kinds=["newsletter"], hosts=[host], triggers=["load"])
    seen(memory_demo_service, episode_id, {"popup_shown"})
    page.keyboard.type("hi")
    page.keyboard.press("Enter")  # the focused "Subscribe"
    events = seen(memory_demo_service, episode_id, {"popup_dismissed"})
    assert [e.get("key") for e in events if e["type"] == "blocked_interaction"] == []
    dismissed = [e for e in events if e["type"] == "popup_dismissed"]
    assert [(e["host"], e["how"]) for e in dismissed] == [(host, "accept")]


def test_a_toast_covers_a_corner_and_goes_by_itself(
    opened: Any, memory_demo_service: ServiceProcess
) -> None:
    episode_id, page = opened(
        kinds=["toast"], hosts=["page"], triggers=["load"], toast_ms=[1500, 1500]
    )
    toast = page.get_by_role("alertdialog", name="Preferences saved")
    toast.wait_for(state="visible", timeout=10_000)
    box = toast.bounding_box()
    assert box is not None and box["x"] > 500 and box["y"] > 350  # the bottom right corner
    page.get_by_role("link", name=LINK).click(timeout=5000)  # the rest of the page works
    page.wait_for_url("**/products")
    events = seen(memory_demo_service, episode_id, {"popup_dismissed"})
    # The next page's toast goes by itself too (`multiple`).
    assert any(e["type"] == "popup_dismissed" and e["how"] == "timeout" for e in events)


def test_a_push_banner_moves_the_page_down_until_dismissed(
    opened: Any, memory_demo_service: ServiceProcess
) -> None:
    episode_id, page = opened(kinds=["consent_push"], hosts=["page"], triggers=["interaction"])
    link = page.get_by_role("link", name=LINK)
    top = link.bounding_box()["y"]  # type: ignore[index]
    before = snapshot(page)
    page.mouse.click(5, 5)
    banner = page.get_by_role("dialog", name="Cookies on this site")
    banner.wait_for(state="visible", timeout=10_000)
    assert link.bounding_box()["y"] > top + 20  # type: ignore[index]
    banner.get_by_role("button", name="Reject all").click()
    banner.wait_for(state="detached")
    assert link.bounding_box()["y"] == top and snapshot(page) == before  # type: ignore[index]
    events = seen(memory_demo_service, episode_id, {"popup_dismissed"})
    assert [e["how"] for e in events if e["type"] == "popup_dismissed"] == ["decline"]


def test_a_click_absorber_swallows_clicks_until_it_goes(
    opened: Any, memory_demo_service: ServiceProcess
) -> None:
    episode_id, page = opened(
        kinds=["click_absorber"],
        hosts=["page"],
        triggers=["interaction"],
        absorb_ms=[60_000, 60_000],
    )
    page.mouse.click(5, 5)
    page.get_by_role("dialog", name="Please wait").wait_for(state="visible", timeout=10_000)
    link = page.get_by_role("link", name=LINK)
    link.click(force=True)  # lands on the clear overlay, not on the link
    events = seen(memory_demo_service, episode_id, {"blocked_interaction"})
    assert page.url.endswith("/") and any(e["type"] == "blocked_interaction" for e in events)
    page.keyboard.press("Escape")
    link.click(timeout=5000)
    page.wait_for_url("**/products")


@pytest.mark.parametrize("trigger", ["delay", "scroll", "exit"])
def test_each_trigger_brings_it_when_planned(
    opened: Any, memory_demo_service: ServiceProcess, trigger: str
) -> None:
    episode_id, page = opened(
        viewport={"width": 800, "height": 250},  # short: the shop's home page scrolls
        kinds=["newsletter"],
        hosts=["page"],
        triggers=[trigger],
        delay_ms=[300, 300],
        scroll_px=[120, 120],
    )
    dialog = page.get_by_role("dialog")
    if trigger == "scroll":
        assert dialog.count() == 0
        page.mouse.wheel(0, 400)
    elif trigger == "exit":
        assert dialog.count() == 0
        page.mouse.move(200, 100)
        page.mouse.move(200, -20)  # out through the top edge
    dialog.wait_for(state="visible", timeout=10_000)
    events = seen(memory_demo_service, episode_id, {"popup_shown"})
    shown = next(e for e in events if e["type"] == "popup_shown")
    assert shown["trigger"] == trigger and shown["after"] == {"delay": 300, "scroll": 120}.get(
        trigger, 0
    )


@pytest.mark.parametrize(
    ("kind", "accept", "how"),
    [("native_alert", True, "accept"), ("native_confirm", False, "decline")],
)
def test_native_dialogs_wait_for_the_agent(
    opened: Any, memory_demo_service: ServiceProcess, kind: str, accept: bool, how: str
) -> None:
    episode_id, page = opened(kinds=[kind], triggers=["interaction"])
    met: list[tuple[str, str]] = []

    def answer(dialog: Any) -> None:
        met.append((dialog.type, dialog.message))
        dialog.accept() if accept else dialog.dismiss()

    # Answered as it comes: a dialog the click's own handler opens holds the click until it
    # is closed, and a test that answered it only after the click returned waited forever.
    page.on("dialog", answer)
    page.mouse.click(5, 5)
    for _ in range(200):  # (its handler runs while Playwright waits: until it has run)
        if met:
            break
        page.wait_for_timeout(50)
    events = seen(memory_demo_service, episode_id, {"popup_dismissed"})
    [(dialog_type, message)] = met
    assert (
        dialog_type == kind.removeprefix("native_")
        and "survey" in message
        or ("session" in message)
    )
    dismissed = next(e for e in events if e["type"] == "popup_dismissed")
    assert (dismissed["kind"], dismissed["host"], dismissed["how"]) == (kind, "native", how)


def test_beforeunload_asks_before_the_page_is_left(
    opened: Any, memory_demo_service: ServiceProcess
) -> None:
    episode_id, page = opened(kinds=["native_beforeunload"], triggers=["load"])
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    page.mouse.click(5, 5)  # a user gesture: without one the browser does not ask
    with pytest.raises(PlaywrightError):  # the agent chose to stay: the navigation is off
        page.goto(f"{memory_demo_service.demo}/products", timeout=10_000)
    assert asked == ["beforeunload"] and not page.url.endswith("/products")
    events = seen(memory_demo_service, episode_id, {"popup_dismissed"})
    said = Counter((e["type"], e.get("how")) for e in events if e["type"].startswith("popup_"))
    assert said[("popup_shown", None)] == 1 and said[("popup_dismissed", "stay")] == 1


def test_a_failure_while_it_is_up_is_attributed_to_execution(
    opened: Any, memory_demo_service: ServiceProcess
) -> None:
    episode_id, page = opened(
        kinds=["toast"], hosts=["shadow_open"], triggers=["load"], toast_ms=[60_000, 60_000]
    )
    page.get_by_role("alertdialog").wait_for(state="visible", timeout=10_000)
    seen(memory_demo_service, episode_id, {"popup_shown"})
    api = memory_demo_service.api
    httpx.post(
        f"{api}/episodes/{episode_id}/events",
        json={"type": "skill_failure", "skill": "open_products", "error": "covered"},
        timeout=10,
    ).raise_for_status()
    failures = httpx.get(f"{api}/episodes/{episode_id}/events?limit=1000", timeout=10).json()
    (failure,) = [e for e in failures["events"] if e["type"] == "skill_failure"]
    assert failure["attribution"]["shift"] == "execution", failure


@pytest.mark.parametrize(("regime", "injected"), [("once", 1), ("multiple", 3)])
def test_the_regimes_hold_for_the_extended_set(
    browser: Browser, memory_demo_service: ServiceProcess, regime: str, injected: int
) -> None:
    episode = memory_demo_service.create_episode(
        condition="Src-Exec",
        execution="extended",
        regime=regime,
        shift_params={"popup": {"kinds": ["toast"], "triggers": ["load"], "toast_ms": [500, 500]}},
    )
    context = browser.new_context(proxy=episode["proxy"])
    page = context.new_page()
    for path in ("/", "/products", "/cart"):
        page.goto(f"{memory_demo_service.demo}{path}")
        page.wait_for_load_state("load")
    context.close()
    events = seen(memory_demo_service, str(episode["id"]), {"page_served"})
    assert sum(e["type"] == "popup_injected" for e in events) == injected


def test_an_interstitial_stands_in_for_the_page_once_and_leads_on_to_it(
    opened: Any, memory_demo_service: ServiceProcess
) -> None:
    episode_id, page = opened("/", kinds=["session"], hosts=["interstitial"])
    home = f"{memory_demo_service.demo}/"
    dialog = page.get_by_role("dialog", name="Are you still there?")
    dialog.wait_for(state="visible", timeout=10_000)
    assert page.title() == "Are you still there?" and page.url == home
    assert page.get_by_role("link", name=LINK).count() == 0  # not the shop's page: instead
    page.get_by_role("link", name="Continue").click()
    page.get_by_role("link", name=LINK).wait_for(timeout=10_000)  # the page asked for
    assert page.url == home and page.get_by_role("dialog").count() == 0
    events = seen(memory_demo_service, episode_id, {"popup_dismissed"})
    dismissed = next(e for e in events if e["type"] == "popup_dismissed")
    assert (dismissed["host"], dismissed["how"]) == ("interstitial", "continue")
    # The load after it is its "Continue": never another interstitial.
    injected = [e for e in events if e["type"] == "popup_injected"]
    assert [e["host"] for e in injected] == ["interstitial"]
