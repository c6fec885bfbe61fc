"""Perceptual and contextual shifts on a real local site in a real Chromium."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser

from tests.helpers.processes import ServiceProcess

pytestmark = pytest.mark.browser


def visit(browser: Browser, service: ServiceProcess, **config: Any) -> dict[str, Any]:
    """Browse the demo shop under an episode, add a product to the cart, report what happened."""
    episode = service.create_episode(**config)
    context = browser.new_context(proxy=episode["proxy"])
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{service.demo}/products")
    labels = page.locator("form[action='/cart'] button").all_inner_texts()
    page.locator("form[action='/cart'] button").first.click()  # a real form submission
    page.wait_for_url("**/cart")
    cart = page.locator("#cart-items").inner_text()
    page.goto(f"{service.demo}/products?q=jacket")
    results = page.locator(".product h2").all_inner_texts()
    context.close()
    return {
        "episode": episode,
        "errors": errors,
        "labels": labels,
        "cart": cart,
        "results": results,
    }


@pytest.mark.parametrize(
    ("condition", "perceptual"),
    [("Src-Perc", "benchmark"), ("Src-Perc", "extended"), ("Tgt", "benchmark"),
     ("Tgt-Perc", "benchmark"), ("Tgt-Perc", "extended")],
)  # fmt: skip
def test_shifted_pages_still_submit_forms_without_new_errors(
    browser: Browser, demo_service: ServiceProcess, condition: str, perceptual: str
) -> None:
    baseline = visit(browser, demo_service, condition="Src", seed=0)
    shifted = visit(browser, demo_service, condition=condition, seed=4, perceptual=perceptual)
    assert "Trail Running Shoes" in shifted["cart"]
    assert shifted["results"] == baseline["results"] == ["Waterproof Jacket"]
    assert not set(shifted["errors"]) - set(baseline["errors"])  # no new console errors
    # The benchmark's shift keeps labels; the extended set relabels the buttons.
    assert (shifted["labels"] != baseline["labels"]) == (perceptual == "extended")


def test_check_endpoint_reports_an_aligned_page(demo_service: ServiceProcess) -> None:
    episode = demo_service.create_episode(condition="Tgt-Perc", seed=2)
    response = httpx.get(
        f"{demo_service.api}/episodes/{episode['id']}/check",
        params={"url": f"{demo_service.demo}/products"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["violations"] == [] and report["changed"]
    assert set(report["shifts"]) == {"locator_drift", "contextual"}
    # The check read the page's assets, as the proxy does: the drift applied.
    assert report["shifts"]["locator_drift"]["assets"] == "complete"
    assert report["shifts"]["locator_drift"]["share"] >= 0.3
    missing = httpx.get(
        f"{demo_service.api}/episodes/{episode['id']}/check",
        params={"url": f"{demo_service.demo}/no-such-page"},
    )
    # No page to check is "unchecked" (the verdicts' third state), never aligned.
    assert missing.status_code == 200, missing.text
    assert missing.json()["status"] == "unchecked" and "404" in missing.json()["reason"]
