"""BrowserGym (browsergym-core, in its own venv) through the client's wrapper and sweep, on the
lab's React starter under the six conditions: what the sweep writes is what the service
reports, and each attempt's steps, popups and result are in its episode."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillshift_client import SkillShift
from tests.helpers.browsergym import browsergym_python
from tests.helpers.lab import APPS, lab_app
from tests.helpers.processes import ServiceProcess, run_agent

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def react(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    app = APPS["react"]
    with lab_app(app.script, tmp_path_factory.mktemp("react"), *app.args) as env:
        yield env


def run_in_browsergym(service: ServiceProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return run_agent(browsergym_python(), service.api, *args, timeout=900)


def sweep_files(out: Path) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    name = json.loads((out / "sweep.json").read_text())["name"]
    records = [json.loads(line) for line in (out / "per_task.jsonl").open()]
    return name, records, json.loads((out / "table.json").read_text())


def test_a_registered_task_under_the_six_conditions(
    memory_demo_service: ServiceProcess, react: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "counter"
    example = ["examples/browsergym_sweep.py", react["LAB_URL"] + "/", "--out", str(out)]
    result = run_in_browsergym(memory_demo_service, *example, "--target", react["LAB_TARGET_URL"])
    assert result.returncode == 0, result.stderr[-3000:]
    name, records, table = sweep_files(out)
    with SkillShift(memory_demo_service.api) as client:
        assert records == client.reports(tags={"sweep": name}, format="per_task")
        assert table == client.reports(tags={"sweep": name}, format="benchmark")
        episodes = [e for e in client.list_episodes() if e["tags"].get("sweep") == name]
        reports = {e["condition"]: client.report(e["id"]) for e in episodes}
        results = {
            e["condition"]: [x for x in client.iter_events(e["id"]) if x["type"] == "task_result"]
            for e in episodes
        }
    assert sorted(r["condition"] for r in records) == sorted(
        ["src", "src-perc", "src-exec", "tgt", "tgt-perc", "tgt-exec"]
    )
    assert all(r["success"] is True for r in records), records
    assert table["complete"] and table["metrics"]["SR"]["overall"] == 1.0
    for condition, report in reports.items():
        (posted,) = results[condition]  # one result, from the task's reward
        assert posted["reward"] == 1.0 and posted["steps"] == report["agent_events"]["step"]
        assert report["pages"]["served"] >= 1  # the browser went through the episode
        assert report["agent_events"]["skill_call"] == posted["steps"]
        popups = report["popups"]
        if condition.endswith("-Exec"):  # the agent met the popup and closed it
            assert popups["shown"] >= 1 and popups["dismissed"] >= 1, (condition, popups)
        else:
            assert popups["injected"] == 0
    assert "SR" in result.stderr  # the table is printed


def test_the_open_ended_task_ends_when_the_agent_says(
    memory_demo_service: ServiceProcess, react: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "openended"
    example = ["examples/browsergym_sweep.py", react["LAB_URL"] + "/", "--out", str(out)]
    result = run_in_browsergym(
        memory_demo_service, *example, "--task", "openended", "--conditions", "Src-Exec"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    _, records, _ = sweep_files(out)
    assert [(r["condition"], r["success"]) for r in records] == [("src-exec", True)]


WRONG_ENVIRONMENT = """
import gymnasium as gym
from skillshift_client import SkillShift
from skillshift_client.browsergym import SkillShiftEnv
for env in (gym.make("CartPole-v1"), "not an environment"):
    try:
        SkillShiftEnv(env, SkillShift())
    except TypeError as error:
        print(error)
"""


def test_an_environment_that_is_not_browsergym_is_refused(
    memory_demo_service: ServiceProcess,
) -> None:
    result = run_in_browsergym(memory_demo_service, "-c", WRONG_ENVIRONMENT)
    assert result.returncode == 0, result.stderr[-3000:]
    cartpole, text = result.stdout.splitlines()
    assert "wraps a BrowserGym environment" in cartpole and "CartPoleEnv" in cartpole
    assert "wraps a BrowserGym environment" in text and text.endswith("got str")


RESETS = """
import json, sys
import gymnasium as gym
import browsergym.core  # registers browsergym/openended
from skillshift_client import SkillShift
from skillshift_client.browsergym import SkillShiftEnv, use_system_chromium

use_system_chromium()
client = SkillShift()
base = gym.make("browsergym/openended", task_kwargs={"start_url": sys.argv[1]}, slow_mo=0)
env = SkillShiftEnv(base, client, task="shop", condition="Src-Perc", tags={"run": "resets"})
episodes = []
for _ in range(2):
    obs, info = env.reset(seed=7)
    episodes.append(info["skillshift_episode"])
    env.skill(None)(lambda: env.step("noop(10)"))()  # a skill named after the function
env.close()
print(json.dumps(episodes))
"""


def test_each_reset_is_a_new_episode_and_an_unfinished_task_a_failure(
    memory_demo_service: ServiceProcess,
) -> None:
    result = run_in_browsergym(memory_demo_service, "-c", RESETS, f"{memory_demo_service.demo}/")
    assert result.returncode == 0, result.stderr[-3000:]
    first, second = json.loads(result.stdout.strip().splitlines()[-1])
    assert first != second
    with SkillShift(memory_demo_service.api) as client:
        for episode_id, reason in (
            (first, "reset before the task ended"),
            (second, "closed before the task ended"),
        ):
            episode = client.get_episode(episode_id)
            assert episode["tags"] == {"run": "resets", "task": "shop", "uid": "shop"}
            assert episode["seed"] == 7
            events = list(client.iter_events(episode_id))
            (posted,) = [e for e in events if e["type"] == "task_result"]
            assert (posted["success"], posted["steps"], posted["reason"]) == (False, 1, reason)
            assert [e["skill"] for e in events if e["type"] == "skill_call"] == ["<lambda>"]
            assert [e["action"] for e in events if e["type"] == "step"] == ["noop(10)"]
            assert client.report(episode_id)["pages"]["served"] >= 1


OBSERVED = """
import json, sys
import gymnasium as gym
import browsergym.core  # registers browsergym/openended
from browsergym.utils.obs import flatten_axtree_to_str
from skillshift_client import SkillShift
from skillshift_client.browsergym import SkillShiftEnv, use_system_chromium

use_system_chromium()
seen = {}
for host in ("page", "shadow_open", "shadow_closed", "iframe"):
    base = gym.make("browsergym/openended", task_kwargs={"start_url": sys.argv[1]}, slow_mo=0)
    popup = {"kinds": ["newsletter"], "hosts": [host], "triggers": ["load"]}
    env = SkillShiftEnv(
        base, SkillShift(), condition="Src-Exec", execution="extended", regime="multiple",
        shift_params={"popup": popup},
    )
    obs, _ = env.reset()
    seen[host] = "dialog 'Stay in the loop'" in flatten_axtree_to_str(obs["axtree_object"])
    env.finish(success=True)
    env.close()
print(json.dumps(seen))
"""


def test_an_agent_finds_the_extended_sets_popups_in_its_observation(
    memory_demo_service: ServiceProcess,
) -> None:
    """BrowserGym's accessibility tree holds the popup wherever it is hosted: in the page, in
    an open or a closed shadow root (which no selector reaches), in an iframe."""
    result = run_in_browsergym(memory_demo_service, "-c", OBSERVED, f"{memory_demo_service.demo}/")
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen == {"page": True, "shadow_open": True, "shadow_closed": True, "iframe": True}
