"""The browser alignment oracle in a real Chromium: an app page against known-breaking variants
of itself (each changes one thing a shift must not), and the route end to end through the
real service."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright

from api.oracle.browser import CHROMIUM, CHROMIUM_ARGS
from api.oracle.compare import KINDS
from api.oracle.load import compare_urls, load_snapshot
from tests.helpers.processes import ServiceProcess
from tests.helpers.upstream import UpstreamServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]
PAGES = Path(__file__).resolve().parents[1] / "helpers" / "oracle_pages"
SETTLE_MS = 800


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def chromium() -> AsyncIterator[Browser]:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing (./scripts/bootstrap installs chromium)")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        await browser.close()


@pytest.fixture(scope="module")
def pages(upstream: UpstreamServer) -> str:
    """The oracle pages on the test upstream, under /oracle/; returns that base URL."""
    for path in PAGES.iterdir():
        kind = "image/svg+xml" if path.suffix == ".svg" else "text/html; charset=utf-8"
        upstream.extra[f"/oracle/{path.name}"] = (kind, path.read_bytes())
    return f"{upstream.origin}/oracle"


async def kinds_of(chromium: Browser, pages: str, variant: str, **options: Any) -> list[str]:
    found = await compare_urls(
        chromium, f"{pages}/app.html", f"{pages}/{variant}", settle_ms=SETTLE_MS, **options
    )
    return sorted({violation.kind for violation in found})


async def test_the_app_page_snapshot_sees_what_the_page_did(chromium: Browser, pages: str) -> None:
    snapshot = await load_snapshot(chromium, f"{pages}/app.html", settle_ms=0)
    by_tag = {(e["tag"], e["label"]): e for e in snapshot.elements}
    button = by_tag[("button", "Add to cart")]  # mounted by the page's script
    assert button["listeners"] == ["click"] and button["visible"] and button["hit"]
    logo = by_tag[("img", "Oracle shop")]
    assert logo["image"] and logo["key"] in snapshot.images
    assert by_tag[("a", "Oracle shop")]["interactive"]  # the link's label is its image's alt
    assert snapshot.errors == [] and snapshot.status == 200


async def test_the_unbroken_page_compared_with_itself_gives_nothing(
    chromium: Browser, pages: str
) -> None:
    assert await kinds_of(chromium, pages, "app.html") == []


async def test_inserted_wrappers_are_skipped_when_the_proxy_names_them(
    chromium: Browser, pages: str
) -> None:
    assert await kinds_of(chromium, pages, "wrapped.html", wrapper_tags=["x-k3f9a"]) == []
    # Unnamed, the wrappers are elements of their own: the paths below them differ.
    assert "structure" in await kinds_of(chromium, pages, "wrapped.html")


def spinning(selector: str, turned_s: float) -> bytes:
    """app.html with `selector` under an infinite rotation (as Vite's React logo), as a load
    finds it `turned_s` seconds into its turn (20 s a turn)."""
    spin = (
        "  @keyframes spin { to { transform: rotate(360deg); } }\n"
        f"  {selector} {{ animation: spin 20s linear infinite; animation-delay: -{turned_s}s; }}\n"
    )
    return (PAGES / "app.html").read_text().replace("</style>", spin + "</style>", 1).encode()


@pytest.mark.parametrize(
    "selector",
    [
        # An image's clip: a load that finds it 45 degrees further on shows the same pixels.
        ".brand img",
        # A control's box, and the point its hit test aims at: turned 45 degrees, its bounding
        # box would be half as large again ("resized", "moved").
        ".panel button",
    ],
)
async def test_what_spins_is_measured_as_a_screenshot_draws_it(
    chromium: Browser, pages: str, upstream: UpstreamServer, selector: str
) -> None:
    """What an infinite animation turns is found at another angle by each load: it is measured
    with the animations as a screenshot draws them, not at the angle the load found it. One
    baseline load: with two, their own difference would hide it as the page's noise."""
    for name, turned_s in (("spinning.html", 0), ("spinning-ahead.html", 2.5)):
        upstream.extra[f"/oracle/{name}"] = (
            "text/html; charset=utf-8",
            spinning(selector, turned_s),
        )
    found = await compare_urls(
        chromium,
        f"{pages}/spinning.html",
        f"{pages}/spinning-ahead.html",
        settle_ms=SETTLE_MS,
        baseline_runs=1,
    )
    assert found == []


def appearing(seconds: float) -> bytes:
    """app.html whose button fades in over `seconds`, from a style of opacity 0 that a script
    sets to 1 when the animation ends (as a reveal on `animationend` does)."""
    fade = (
        "  @keyframes appear { from { opacity: 0; } to { opacity: 1; } }\n"
        f"  .panel button {{ opacity: 0; animation: appear {seconds}s; }}\n"
    )
    reveal = (
        "<script>\n  button.addEventListener('animationend', function () {\n"
        "    button.style.opacity = '1';\n  });\n</script>\n</body>"
    )
    page = (PAGES / "app.html").read_text().replace("</style>", fade + "</style>", 1)
    return page.replace("</body>", reveal, 1).encode()


async def test_an_animation_settled_early_is_measured_after_its_end_handlers(
    chromium: Browser, pages: str, upstream: UpstreamServer
) -> None:
    """The baseline's button has faded in and been revealed before the snapshot; the other
    load finds its fade still running (a minute long). Settled, that fade ends at once, and
    the snapshot waits for what the end sets off: the button is visible in both."""
    for name, seconds in (("appeared.html", 0.05), ("appearing.html", 60)):
        upstream.extra[f"/oracle/{name}"] = ("text/html; charset=utf-8", appearing(seconds))
    found = await compare_urls(
        chromium,
        f"{pages}/appeared.html",
        f"{pages}/appearing.html",
        settle_ms=SETTLE_MS,
        baseline_runs=1,
    )
    assert found == []


@pytest.mark.parametrize(
    ("variant", "wanted"),
    [
        ("mount-renamed.html", {"error", "structure"}),  # the script throws, nothing renders
        ("css-id-renamed.html", {"moved"}),
        ("hue-rotate.html", {"image"}),
        ("covered.html", {"covered"}),
        ("listener-lost.html", {"listeners"}),
        ("label-changed.html", {"label"}),
    ],
)
async def test_each_breaking_variant_gives_its_violation(
    chromium: Browser, pages: str, variant: str, wanted: set[str]
) -> None:
    found = await kinds_of(chromium, pages, variant, baseline_runs=1)
    assert wanted <= set(found), found


async def test_a_label_changed_right_after_the_load_is_judged_at_the_load(
    chromium: Browser, pages: str, upstream: UpstreamServer
) -> None:
    """The labels at load are taken in the load event, not when the oracle's next call gets
    there: a label a timer of 0 ms renames after the load is still the load's (and so a
    "label" violation, a change after the load), however slow the oracle's next call."""
    page = (PAGES / "label-changed.html").read_text().replace("}, 400);", "}, 0);", 1)
    assert "}, 0);" in page
    upstream.extra["/oracle/label-changed-at-once.html"] = (
        "text/html; charset=utf-8",
        page.encode(),
    )
    found = await compare_urls(
        chromium,
        f"{pages}/app.html",
        f"{pages}/label-changed-at-once.html",
        settle_ms=SETTLE_MS,
        baseline_runs=1,
    )
    labels = [(v.kind, v.detail) for v in found if v.kind in ("label", "relabelled")]
    assert labels == [
        ("label", "changed after load: 'Add to cart' -> 'Buy now' (expected 'Add to cart')")
    ]


async def test_the_route_end_to_end(service: ServiceProcess, pages: str) -> None:
    body = {
        "url": f"{pages}/app.html",
        "condition": "Src-Perc",
        "seeds": [0, 1],
        "settle_ms": 300,
        "baseline_runs": 2,
    }
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=180) as client:
        response = await client.post(f"{service.api}/checks/browser", json=body)
        assert response.status_code == 200, response.text
        result = response.json()
        assert set(result) == {"url", "condition", "status", "reason", "runs", "violations"}
        assert result["status"] in ("aligned", "violations") and result["reason"] is None
        assert (result["url"], result["condition"]) == (body["url"], "Src-Perc")
        assert [run["seed"] for run in result["runs"]] == [0, 1]
        for run in result["runs"]:
            assert isinstance(run["load_ms"], float)
            for violation in run["violations"]:
                assert set(violation) == {"kind", "detail", "element"}
                assert violation["kind"] in KINDS
        assert result["violations"] == sum(len(run["violations"]) for run in result["runs"])
        episodes = (await client.get(f"{service.api}/episodes")).json()["episodes"]
        assert not [e for e in episodes if e["tags"].get("oracle")]
        # -Exec puts a popup over the page by design: refused before anything starts.
        refused = await client.post(
            f"{service.api}/checks/browser", json={**body, "condition": "Src-Exec"}
        )
        assert refused.status_code == 422 and "popup" in refused.json()["error"]
    assert time.monotonic() - started < 120
