"""The admin page in a real Chromium: every control, against a real service and its demo shop."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from tests.helpers.processes import ServiceProcess

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def service(memory_demo_service: ServiceProcess) -> ServiceProcess:
    return memory_demo_service


@pytest.fixture
def page(browser: Browser, service: ServiceProcess) -> Iterator[Page]:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{service.api}/ui")
    expect(page.get_by_role("status")).to_contain_text("MemoryStore: ok")
    # Ready once the lists are drawn (the listeners' table is never empty).
    expect(page.locator("#listener-table tbody tr").first).to_be_attached()
    yield page
    context.close()


def api_episodes(service: ServiceProcess) -> list[dict[str, object]]:
    return list(httpx.get(f"{service.api}/episodes", timeout=5).json()["episodes"])


def create_from_form(
    page: Page, condition: str, seed: int, tags: str = "{}", regime: str = "multiple"
) -> str:
    page.get_by_label("Condition").select_option(condition)
    page.get_by_label("Regime").select_option(regime)
    page.get_by_label("Seed", exact=True).first.fill(str(seed))
    page.get_by_label("Tags (JSON)").fill(tags)
    page.get_by_role("button", name="Create episode").click()
    expect(page.get_by_role("alert")).to_contain_text("created")
    text = page.get_by_role("alert").inner_text()
    match = re.search(r"episode (\S+) created", text)
    assert match, text
    return match.group(1)


def test_create_watch_edit_suspend_reset_delete(page: Page, service: ServiceProcess) -> None:
    episode_id = create_from_form(page, "Src-Exec", 5, '{"method": "ui"}')
    row = page.locator(f"tr[data-episode='{episode_id}']")
    expect(row).to_contain_text("Src-Exec")
    expect(row).to_contain_text("method=ui")
    stored = next(e for e in api_episodes(service) if e["id"] == episode_id)
    assert stored["regime"] == "multiple" and stored["seed"] == 5

    # The live log shows what an agent's requests cause, as they happen.
    page.get_by_role("button", name=f"Events of {episode_id}").click()
    log = page.locator("#log-events")
    expect(log.locator("[data-type=episode_created]")).to_have_count(1)
    header = {"X-SkillShift-Episode": f"{episode_id}:{stored['token']}"}
    with httpx.Client(proxy=service.proxy, headers=header, timeout=10) as client:
        assert client.get(f"{service.demo}/products").status_code == 200
    expect(log.locator("[data-type=popup_injected]")).to_have_count(1, timeout=5000)
    expect(log.locator("[data-type=page_served]")).to_contain_text("/products")

    page.get_by_role("button", name=f"Edit {episode_id}").click()
    page.get_by_label("Seed", exact=True).first.fill("9")
    page.get_by_role("button", name="Save changes").click()
    expect(row.locator("td").nth(3)).to_have_text("9")
    assert httpx.get(f"{service.api}/episodes/{episode_id}").json()["seed"] == 9

    page.get_by_role("button", name=f"Suspend {episode_id}").click()
    expect(row).to_contain_text("suspended")
    assert httpx.get(f"{service.api}/episodes/{episode_id}").json()["suspended"] is True
    page.get_by_role("button", name=f"Resume {episode_id}").click()
    expect(row).to_contain_text("active")

    page.get_by_role("button", name=f"Reset {episode_id}").click()
    expect(page.get_by_role("alert")).to_contain_text("reset")
    events = httpx.get(f"{service.api}/episodes/{episode_id}/events").json()["events"]
    assert [event["type"] for event in events] == ["episode_reset"]

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=f"Delete {episode_id}").click()
    expect(row).to_have_count(0)
    assert httpx.get(f"{service.api}/episodes/{episode_id}").status_code == 404


def test_bad_input_is_reported_and_changes_nothing(page: Page, service: ServiceProcess) -> None:
    before = len(api_episodes(service))
    page.get_by_label("Targets (JSON: source origin → target origin)").fill('{"ftp:x": "y"}')
    page.get_by_role("button", name="Create episode").click()
    expect(page.get_by_role("alert")).to_contain_text("origin")
    page.get_by_label("Targets (JSON: source origin → target origin)").fill("{nope")
    page.get_by_role("button", name="Create episode").click()
    expect(page.get_by_role("alert")).to_contain_text("not valid JSON")
    assert len(api_episodes(service)) == before


def test_listener_default_lets_a_plain_browser_see_the_episode(
    page: Page, browser: Browser, service: ServiceProcess
) -> None:
    episode_id = create_from_form(page, "Src-Perc", 2)
    page.get_by_role("button", name="Listeners").click()
    # The agents' listener offers no default (it would capture agents' browsers).
    agents = page.locator(f"tr[data-listener='{service.proxy_port}']")
    expect(agents).to_contain_text("agents' listener")
    assert page.get_by_label(f"Default episode of {service.proxy_port}").count() == 0
    listener = str(service.desktop_port)
    page.get_by_label(f"Default episode of {listener}").select_option(episode_id)
    page.get_by_role("button", name=f"Set default of {listener}").click()
    expect(page.get_by_role("alert")).to_contain_text(f"default episode {episode_id}")
    # A browser with no credentials at all, on the desktop listener, gets the episode's page.
    desktop_proxy = f"http://127.0.0.1:{service.desktop_port}"
    desktop = browser.new_context(proxy={"server": desktop_proxy})
    shop = desktop.new_page()
    shop.goto(f"{service.demo}/")
    assert shop.locator("script[src*='/__ss/']").count() == 1
    desktop.close()
    page.get_by_label(f"Default episode of {listener}").select_option("")
    page.get_by_role("button", name=f"Set default of {listener}").click()
    expect(page.get_by_role("alert")).to_contain_text("cleared")
    assert httpx.get(f"{service.demo}/", proxy=desktop_proxy).status_code == 407


def test_preview_renders_six_conditions_side_by_side(
    page: Page, service: ServiceProcess, tmp_path: Path
) -> None:
    page.get_by_role("button", name="Preview").click()
    page.get_by_label("URL").fill(f"{service.demo}/products")
    page.get_by_label("Site").last.select_option("demo")
    page.get_by_role("button", name="Render all six conditions").click()
    figures = page.locator("#preview-grid figure")
    expect(figures).to_have_count(6, timeout=60_000)
    shots = {}
    for index in range(6):
        figure = figures.nth(index)
        condition = str(figure.get_attribute("data-condition"))
        image = figure.get_by_role("img")
        expect(image).to_have_count(1)
        assert image.evaluate("img => img.naturalWidth") == 1024
        shots[condition] = image.get_attribute("src")
    assert list(shots) == ["Src", "Src-Perc", "Src-Exec", "Tgt", "Tgt-Perc", "Tgt-Exec"]
    # The benchmark's perceptual shift changes locators, not looks: Src-Perc may look like Src
    # and Tgt-Perc like Tgt; the other four conditions look different.
    assert len({shots[c] for c in ("Src", "Src-Exec", "Tgt", "Tgt-Exec")}) == 4
    expect(figures.nth(3).locator("figcaption")).to_contain_text("Outdoor Shop 2.0")
    # Preview episodes are temporary.
    assert not [e for e in api_episodes(service) if e["tags"].get("preview")]  # type: ignore[attr-defined]


def test_preview_shows_the_extended_execution_set(page: Page, service: ServiceProcess) -> None:
    """Seed 0's first load draws the benchmark's `session` modal, and the extended set's
    `promotion` in an iframe: the two -Exec screenshots differ."""
    shots = {}
    for execution in ("benchmark", "extended"):
        page.get_by_role("button", name="Preview").click()
        page.get_by_label("URL").fill(f"{service.demo}/")
        page.get_by_label("Site").last.select_option("demo")
        page.get_by_label("Execution set").select_option(execution)
        with page.expect_response("**/ui/preview", timeout=120_000) as answered:
            page.get_by_role("button", name="Render all six conditions").click()
        shots[execution] = {s["condition"]: s.get("png") for s in answered.value.json()["shots"]}
    assert shots["benchmark"]["Src-Exec"] != shots["extended"]["Src-Exec"]
    assert shots["extended"]["Src-Exec"] != shots["extended"]["Src"]


def test_reports_table(page: Page, service: ServiceProcess) -> None:
    episode_id = create_from_form(page, "Tgt", 1, '{"method": "report-ui"}')
    httpx.post(
        f"{service.api}/episodes/{episode_id}/events",
        json={"type": "task_result", "success": True, "steps": 3},
    )
    page.get_by_role("button", name="Reports").click()
    page.get_by_label("Group by").fill("condition,method")
    page.get_by_role("button", name="Show").click()
    row = page.locator("#report-table tbody tr", has_text="report-ui")
    expect(row).to_contain_text("Tgt")
    expect(row.locator("td").nth(5)).to_have_text("1")  # SR


# ---- the page agrees with the API ------------------------------------------------------------

TARGETS_LABEL = "Targets (JSON: source origin → target origin)"
REFRESH_TIMEOUT_MS = 15_000  # the page re-reads the list every 2 s; a busy machine may take longer


def test_an_episode_made_with_the_forms_defaults_is_the_apis(
    page: Page, service: ServiceProcess
) -> None:
    """Fields left at the form's defaults are the API's defaults: the same shift digest."""
    episode_id = create_from_form(page, "Src-Exec", 3, regime="random")
    from_page = httpx.get(f"{service.api}/episodes/{episode_id}", timeout=5).json()
    from_api = service.create_episode(condition="Src-Exec", regime="random", seed=3)
    assert from_page["regime_params"] == from_api["regime_params"]
    assert from_page["shift_digest"] == from_api["shift_digest"]


def test_an_api_error_names_the_field_by_its_label(page: Page) -> None:
    page.get_by_label(TARGETS_LABEL).fill('{"ftp:x": "y"}')
    page.get_by_role("button", name="Create episode").click()
    expect(page.get_by_role("alert")).to_have_text(
        f"{TARGETS_LABEL}: 'ftp:x' is not an origin like http://host:port"
    )


def test_an_error_clears_when_the_next_action_succeeds(page: Page) -> None:
    alert = page.get_by_role("alert")
    page.get_by_label(TARGETS_LABEL).fill('{"ftp:x": "y"}')
    page.get_by_role("button", name="Create episode").click()
    expect(alert).to_contain_text("not an origin")
    page.get_by_role("button", name="Listeners").click()  # succeeds, and says nothing itself
    expect(alert).to_be_hidden()


def test_the_episode_list_follows_the_api(page: Page, service: ServiceProcess) -> None:
    made = service.create_episode(condition="Src-Perc", tags={"method": "api-made"})
    row = page.locator(f"tr[data-episode='{made['id']}']")
    expect(row).to_contain_text("method=api-made", timeout=REFRESH_TIMEOUT_MS)
    assert httpx.delete(f"{service.api}/episodes/{made['id']}", timeout=5).status_code == 204
    expect(row).to_have_count(0, timeout=REFRESH_TIMEOUT_MS)


def test_deleting_a_listeners_default_unbinds_the_listener(
    page: Page, service: ServiceProcess
) -> None:
    made = service.create_episode(condition="Src")
    listener = str(service.desktop_port)
    bound = httpx.put(
        f"{service.api}/listeners/{listener}", json={"default_episode": made["id"]}, timeout=5
    )
    assert bound.status_code == 200, bound.text
    page.reload()
    page.get_by_role("button", name="Listeners").click()
    default = page.get_by_label(f"Default episode of {listener}")
    expect(default).to_have_value(str(made["id"]))

    page.get_by_role("button", name="Episodes").click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name=f"Delete {made['id']}").click()
    expect(page.locator(f"tr[data-episode='{made['id']}']")).to_have_count(0)
    listeners = httpx.get(f"{service.api}/listeners", timeout=5).json()["listeners"]
    desktop = next(item for item in listeners if item["name"] == listener)
    assert desktop["default_episode"] is None
    page.get_by_role("button", name="Listeners").click()
    expect(default).to_have_value("")


def test_the_form_says_what_tgt_routes_to_before_creating(
    page: Page, service: ServiceProcess
) -> None:
    note = page.locator("#f-routing")
    expect(note).to_be_hidden()  # Src: nothing is routed
    page.get_by_label("Condition").select_option("Tgt")
    expect(note).to_contain_text("every page gets the synthetic variant of the profile matched")
    expect(note).to_contain_text(re.compile(r"pick a site that has them: [^.]*\bdemo\b"))

    page.get_by_label(TARGETS_LABEL).fill('{"http://a.test:1": "http://b.test:2"}')
    expect(note).to_contain_text("Tgt routes http://a.test:1 → http://b.test:2; pages of other")

    page.get_by_label(TARGETS_LABEL).fill("{}")
    page.get_by_label("Site").first.select_option("demo")
    sites = httpx.get(f"{service.api}/sites", timeout=5).json()["sites"]
    demo_targets = next(site["targets"] for site in sites if site["name"] == "demo")
    for source, target in demo_targets.items():
        expect(note).to_contain_text(f"{source} → {target}")
    expect(note).to_contain_text("synthetic variant of the demo profile")


def test_the_reports_table_scrolls_inside_the_page(page: Page, service: ServiceProcess) -> None:
    page.set_viewport_size({"width": 1024, "height": 720})
    made = service.create_episode(condition="Src", tags={"method": "wide-report"})
    httpx.post(
        f"{service.api}/episodes/{made['id']}/events",
        json={"type": "task_result", "success": True, "steps": 3},
        timeout=5,
    )
    page.get_by_role("button", name="Reports").click()
    page.get_by_label("Group by").fill("condition,method,regime,seed")
    page.get_by_role("button", name="Show").click()
    table = page.locator("#report-table")
    expect(table.locator("tbody tr", has_text="wide-report")).to_have_count(1)
    document_width, window_width = page.evaluate(
        "[document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert document_width <= window_width
    # The table is as wide as its columns need: its box scrolls, not the page.
    box_width, table_width = table.evaluate("t => [t.parentElement.clientWidth, t.scrollWidth]")
    assert table_width > box_width


def test_preview_with_invalid_targets_says_so_instead_of_rendering(
    page: Page, service: ServiceProcess
) -> None:
    page.get_by_role("button", name="Preview").click()
    page.get_by_label("URL").fill(f"{service.demo}/")
    page.get_by_label("Targets (JSON)").last.fill("{nope")
    page.get_by_role("button", name="Render all six conditions").click()
    expect(page.get_by_role("alert")).to_contain_text("Targets (JSON): not valid JSON")
    expect(page.locator("#preview-grid")).to_have_text("")


def test_a_refused_token_is_said_to_be_refused(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    token = "the-right-token"
    service = ServiceProcess(tmp_path_factory.mktemp("ui-token"), "--api-token", token).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{service.api}/ui")
        token_field = page.get_by_label("API token")
        expect(token_field).to_be_visible()
        token_field.fill("a-wrong-token")
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("alert")).to_contain_text("refused this token")
        token_field.fill(token)
        page.get_by_role("button", name="Sign in").click()
        expect(token_field).to_be_hidden()
        expect(page.get_by_role("alert")).to_be_hidden()
        expect(page.get_by_label("Condition")).to_have_value("Src")
    finally:
        context.close()
        service.stop()
