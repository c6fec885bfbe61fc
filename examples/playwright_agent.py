"""A scripted "agent" in raw Playwright under a skillshift episode, reporting what it did.

    python examples/playwright_agent.py http://127.0.0.1:8090/ --condition Src-Exec

It opens the start page, closes any popup it finds (a skill of its own), follows the
"Products" link, and reports steps, skill calls and the task result, then prints the episode's
report. SKILLSHIFT_API_URL / SKILLSHIFT_API_TOKEN say where the service is.
"""

from __future__ import annotations

import argparse
import json
import shutil

from playwright.sync_api import Page, sync_playwright

from skillshift_client import SkillShift


def close_popup(page: Page) -> bool:
    dialog = page.get_by_role("dialog")
    if not dialog.count():
        return False
    dialog.get_by_role("button", name="Close").click()
    dialog.wait_for(state="detached")
    return True


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("start_url")
    parser.add_argument("--condition", default="Src-Exec")
    parser.add_argument("--regime", default="multiple")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    with (
        SkillShift() as skillshift,
        skillshift.episode(
            condition=args.condition,
            regime=args.regime,
            seed=args.seed,
            regime_params={"min_ms": 0, "max_ms": 0},
            tags={"method": "scripted-playwright"},
        ) as episode,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_context(**episode.playwright_context_kwargs()).new_page()
        page.goto(args.start_url)
        page.wait_for_timeout(300)  # popups appear after load
        steps = 1
        skillshift.step(episode.id, action="goto")
        if close_popup(page):
            steps += 1
            skillshift.skill_call(episode.id, "close_popup")
        skillshift.skill_call(episode.id, "open_products")
        try:
            page.get_by_role("link", name="Products", exact=True).click(timeout=3000)
            steps += 1
        except Exception as error:  # noqa: BLE001 - any failure of the skill is its failure
            skillshift.skill_failure(episode.id, "open_products", error=str(error)[:200])
        success = page.url.rstrip("/").endswith("/products")
        skillshift.task_result(episode.id, success=success, steps=steps)
        print(json.dumps({"success": success, "report": skillshift.report(episode.id)}))
        browser.close()


if __name__ == "__main__":
    main()
