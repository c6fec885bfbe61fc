"""Attribution: how a failure's target is read, and which shift it is owed to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from api.analysis.attribution import attribute, find
from proxy.episode import EpisodeConfig, new_episode
from proxy.recording_dir import Recording
from shifts import HtmlDocument

SOURCE = b"""<html><body><div id="login"><form>
<label for="user">Name</label><input id="user" class="field wide">
<button id="go" type="submit">Log In</button><a href="/help">Help</a>
</form></div></body></html>"""
# The same page after locator drift: the button's id renamed, the form wrapped.
SERVED = b"""<html><body><div id="login"><x-w><form>
<label for="user">Name</label><input id="user" class="field wide">
<button id="k3j9" type="submit">Log In</button><a href="/help">Help</a>
</form></x-w></div></body></html>"""
BUTTON = {
    "shift": "locator_drift",
    "tag": "button",
    "text": "Log In",
    "before": {"id": "go", "classes": [], "hooks": {}, "path": "/html/body/div/form/button"},
    "after": {"id": "k3j9", "classes": [], "hooks": {}, "path": "/html/body/div/x-w/form/button"},
}


def tags(target: str, body: bytes = SOURCE) -> list[str] | None:
    found = find(HtmlDocument(body).tree, target)
    return None if found is None else [str(e.tag) for e in found]


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("#go", ["button"]),
        ("css=form > button", ["button"]),
        ("//button[@id='go']", ["button"]),
        ("xpath=/html/body/div/form/button", ["button"]),
        ('role=button[name="Log In"]', ["button"]),
        ("role=link", ["a"]),
        ("role=textbox", ["input"]),
        ("text=Help", ["a"]),
        ("#nothing", []),
        ("div[[", None),  # neither CSS nor XPath: no verdict on it
        ("//*[", None),
    ],
)
def test_targets_are_read_as_selectors_xpaths_roles_and_texts(
    target: str, expected: list[str] | None
) -> None:
    assert tags(target) == expected


def events(*kinds: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": kind, "id": f"{i}-0", **fields} for i, (kind, fields) in enumerate(kinds)]


PAGE = ("page_served", {"load_index": 1, "kind": "document", "source": "proxy"})


def page_entry(changes: list[dict[str, Any]]) -> dict[str, Any]:
    """The recorded first page of http://site/login with this change map."""
    return {
        "startedDateTime": "2026-01-01T00:00:00+00:00",
        "request": {"method": "GET", "url": "http://site/login"},
        "response": {"status": 200, "headers": [], "content": {"mimeType": "text/html"}},
        "_skillshift": {"navigation": True, "load": 1, "changes": {"elements": changes}},
    }


@pytest.fixture
async def recording(tmp_path: Path) -> Recording:
    found = Recording(tmp_path)
    await found.append_entry("e1", page_entry([BUTTON]), SERVED, SOURCE)
    return found


async def verdict(recording: Recording | None, target: str | None, *log: Any) -> dict[str, Any]:
    episode = new_episode(EpisodeConfig(condition="Src-Perc"), "e1")
    failure = {"type": "skill_failure", **({"target": target} if target else {})}
    return await attribute(episode, failure, events(*log), recording)


async def test_a_target_the_drift_defeated_is_perceptual(recording: Recording) -> None:
    for target in ("#go", "xpath=/html/body/div/form/button", "div > form > button"):
        found = await verdict(recording, target, PAGE)
        assert found["shift"] == "perceptual" and found["load"] == 1, (target, found)


async def test_a_target_that_still_finds_its_element_is_not(recording: Recording) -> None:
    for target in ('role=button[name="Log In"]', "#user", "text=Help", ".field"):
        assert (await verdict(recording, target, PAGE))["shift"] == "unattributed", target


async def test_a_popup_up_when_the_failure_came_is_execution(recording: Recording) -> None:
    shown = ("popup_shown", {"source": "client", "load": 1, "kind": "cookie"})
    dismissed = ("popup_dismissed", {"source": "client", "load": 1})
    blocked = ("blocked_interaction", {"source": "client", "load": 1})
    assert (await verdict(recording, "#user", PAGE, shown))["shift"] == "execution"
    assert (await verdict(None, None, PAGE, shown))["shift"] == "execution"
    assert (await verdict(recording, "#user", PAGE, shown, dismissed))["shift"] == "unattributed"
    swallowed = await verdict(recording, "#user", PAGE, shown, blocked, dismissed)
    assert swallowed["shift"] == "execution" and "swallowed" in swallowed["why"]
    # A popup of an earlier page is no popup of this one.
    earlier = ("popup_shown", {"source": "client", "load": 0})
    assert (await verdict(recording, "#user", PAGE, earlier))["shift"] == "unattributed"


async def test_what_cannot_be_judged_says_why(recording: Recording) -> None:
    assert "no page" in (await verdict(recording, "#go"))["why"]
    assert "not recorded" in (await verdict(None, "#go", PAGE))["why"]
    assert "names no target" in (await verdict(recording, None, PAGE))["why"]


async def test_a_target_only_the_source_variant_has_is_contextual(tmp_path: Path) -> None:
    recording = Recording(tmp_path)
    for episode_id, condition, body in (("src", "Src", SOURCE), ("tgt", "Tgt", SERVED)):
        await recording.save_episode(
            {"id": episode_id, "condition": condition, "tags": {"uid": "task-7"}}
        )
        await recording.append_entry(episode_id, page_entry([]), body, None)
    episode = new_episode(EpisodeConfig(condition="Tgt", tags={"uid": "task-7"}), "tgt")
    failure = {"type": "skill_failure", "target": "#go"}
    found = await attribute(episode, failure, events(PAGE), recording)
    assert found["shift"] == "contextual" and "episode src" in found["why"], found
    # Present on the target variant too: not the contextual shift's doing.
    found = await attribute(episode, {**failure, "target": "#user"}, events(PAGE), recording)
    assert found["shift"] == "unattributed"
    other_task = new_episode(EpisodeConfig(condition="Tgt", tags={"uid": "task-8"}), "tgt")
    found = await attribute(other_task, failure, events(PAGE), recording)
    assert found["shift"] == "unattributed"
