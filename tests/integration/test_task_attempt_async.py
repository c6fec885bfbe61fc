"""The Playwright helper with `playwright.async_api` and `AsyncSkillShift` (its own module: the
sync browser fixture keeps an event loop running in its module's thread)."""

from __future__ import annotations

import pytest
from playwright.async_api import async_playwright

from api.oracle.browser import CHROMIUM, CHROMIUM_ARGS
from skillshift_client import AsyncSkillShift
from skillshift_client.playwright import task_attempt_async
from tests.helpers.processes import ServiceProcess

pytestmark = pytest.mark.browser


async def test_the_async_helper_posts_the_same(memory_demo_service: ServiceProcess) -> None:
    async with AsyncSkillShift(memory_demo_service.api) as client, async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            with pytest.raises(TimeoutError):
                async with task_attempt_async(client, browser, "wait", condition="Src") as run:
                    page = await run.context.new_page()
                    await page.goto(f"{memory_demo_service.demo}/")
                    raise TimeoutError("the button never showed")
        finally:
            await browser.close()
        events = (await client.events(run.episode.id, limit=1000))["events"]
        (result,) = [event for event in events if event["type"] == "task_result"]
        assert result["success"] is False and "never showed" in result["reason"]
