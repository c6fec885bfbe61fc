"""The Playwright helper (skillshift_client.playwright) in a real Chromium through the running
service: one task attempt per block, its result posted however the block ends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Browser

from skillshift_client import SkillShift, SkillShiftError
from skillshift_client.playwright import task_attempt
from tests.helpers.processes import ServiceProcess

pytestmark = pytest.mark.browser


def results(client: SkillShift, episode_id: str) -> list[dict[str, Any]]:
    events = client.events(episode_id, limit=1000)["events"]
    return [event for event in events if event["type"] == "task_result"]


def test_a_finished_block_is_a_success_through_a_bound_context(
    memory_demo_service: ServiceProcess, browser: Browser
) -> None:
    with SkillShift(memory_demo_service.api) as client:
        with task_attempt(client, browser, "browse", condition="Src-Perc", seed=4) as attempt:
            page = attempt.context.new_page()
            page.goto(f"{memory_demo_service.demo}/")
            attempt.step()
            page.goto(f"{memory_demo_service.demo}/products")
            attempt.step()
        episode = client.get_episode(attempt.episode.id)
        assert episode["tags"] == {"task": "browse", "uid": "browse"} and episode["seed"] == 4
        # The benchmark's per_task record names the task, not the episode.
        records = client.reports(tags={"task": "browse"}, format="per_task")
        assert [record["uid"] for record in records] == ["browse"]
        (result,) = results(client, attempt.episode.id)
        assert result["success"] is True and result["steps"] == 2
        # The pages went through the episode: it counted them, shifted.
        report = client.report(attempt.episode.id)
        assert report["pages"]["served"] == 2 and report["agent_events"]["task_result"] == 1


def test_an_exception_is_a_failure_that_is_raised_on(
    memory_demo_service: ServiceProcess, browser: Browser
) -> None:
    with SkillShift(memory_demo_service.api) as client:
        with (
            pytest.raises(LookupError, match="no basket"),
            task_attempt(client, browser, "checkout", condition="Src") as attempt,
        ):
            attempt.step()
            raise LookupError("no basket")
        (result,) = results(client, attempt.episode.id)
        assert result["success"] is False and result["steps"] == 1
        assert result["reason"] == "LookupError: no basket"
        with pytest.raises(Exception, match="closed"):
            attempt.context.new_page()  # nothing stays bound to the episode


def test_a_reason_in_any_script_is_posted_within_the_apis_limit(
    memory_demo_service: ServiceProcess, browser: Browser
) -> None:
    # 300 characters, each 12 once encoded as JSON (a surrogate pair of escapes): the reason
    # is cut to what the API takes, not refused with the result.
    with SkillShift(memory_demo_service.api) as client:
        with (
            pytest.raises(LookupError, match="no"),
            task_attempt(client, browser, "checkout", condition="Src") as attempt,
        ):
            raise LookupError("no \N{SHOPPING TROLLEY}" + "\N{SHOPPING TROLLEY}" * 400)
        (result,) = results(client, attempt.episode.id)
        assert result["success"] is False
        assert result["reason"].startswith("LookupError: no \N{SHOPPING TROLLEY}")
        assert len(json.dumps(result["reason"])) <= 2048


def test_fail_reports_a_failure_without_an_exception(
    memory_demo_service: ServiceProcess, browser: Browser
) -> None:
    with SkillShift(memory_demo_service.api) as client:
        with task_attempt(client, browser, "search", condition="Src", keep=False) as attempt:
            attempt.fail("gave up after 3 tries")
        with pytest.raises(SkillShiftError) as gone:
            client.get_episode(attempt.episode.id)  # keep=False: deleted after its result
        assert gone.value.status == 404


def test_a_refused_episode_binds_nothing(
    memory_demo_service: ServiceProcess, browser: Browser
) -> None:
    contexts = len(browser.contexts)
    with SkillShift(memory_demo_service.api) as client:
        with (
            pytest.raises(SkillShiftError, match="condition"),
            task_attempt(client, browser, "browse", condition="Nope"),
        ):
            raise AssertionError("the block must not run")
        with (
            pytest.raises(ValueError, match="task"),
            task_attempt(client, browser, "", condition="Src"),
        ):
            raise AssertionError("the block must not run")
    assert len(browser.contexts) == contexts
