"""The sweep (skillshift_client.sweep) against a running service: every attempt in its own
episode, the benchmark's files as the service reports them, a crash resumed without running a
done attempt again, and a service it cannot reach stops it with a message."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from skillshift_client import SkillShift, SkillShiftError, SkillShiftUnreachable
from skillshift_client.sweep import CONDITIONS, SweepIncomplete, Task, Trial, attempts, sweep
from tests.helpers.ports import free_port
from tests.helpers.processes import REPO, ServiceProcess

SEEDS = (0, 1)
REGIMES = ("once", "random")
# 4 conditions without a regime, 2 -Exec ones under each regime; per task and seed.
PER_TASK = len(SEEDS) * (4 + 2 * len(REGIMES))


def browse(trial: Trial, demo: str) -> bool:
    """A small HTTP agent: open the shop's products through the episode, look for a product."""
    with httpx.Client(proxy=trial.episode.data["proxy_url"], timeout=30) as http:
        trial.skill_call("open_products")
        page = http.get(f"{demo}/products")
        trial.step("goto", url="/products")
        if page.status_code != 200:
            trial.skill_failure("open_products", error=f"status {page.status_code}")
            return False
    return "Products" in page.text


def test_a_sweep_writes_what_the_service_reports(
    memory_demo_service: ServiceProcess, tmp_path: Path
) -> None:
    demo = memory_demo_service.demo
    assert demo is not None

    def agent(trial: Trial) -> Any:
        if trial.task.uid == "crashes":
            raise LookupError("no such shelf")
        if trial.task.uid == "silent":
            return None  # says nothing: counted as a failure that says so
        return browse(trial, demo)

    tasks = [Task("products", site="shop"), Task("crashes", site="shop"), "silent"]
    with SkillShift(memory_demo_service.api) as client:
        table = sweep(
            client,
            tasks,
            agent,
            tmp_path / "run",
            seeds=SEEDS,
            regimes=REGIMES,
            episode={"regime_params": {"min_ms": 0, "max_ms": 0}},
            stream=(tmp_path / "progress.log").open("w"),
        )
        name = json.loads((tmp_path / "run" / "sweep.json").read_text())["name"]
        served = client.reports(tags={"sweep": name}, format="per_task")
        assert table == client.reports(tags={"sweep": name}, format="benchmark")
        episodes = [e for e in client.list_episodes() if e["tags"].get("sweep") == name]

    written = [json.loads(line) for line in (tmp_path / "run" / "per_task.jsonl").open()]
    assert written == served and len(written) == 3 * PER_TASK
    assert json.loads((tmp_path / "run" / "table.json").read_text()) == table
    assert "SR" in (tmp_path / "run" / "table.txt").read_text()
    # Each (task, condition) got its seeds x regimes attempts, each in its own episode.
    per_cell = Counter((r["uid"], r["condition"]) for r in written)
    assert set(per_cell.values()) == {len(SEEDS), len(SEEDS) * len(REGIMES)}
    assert {r["condition"] for r in written} == {c.lower() for c in CONDITIONS}
    assert len({e["id"] for e in episodes}) == 3 * PER_TASK
    assert {(e["condition"], e["seed"]) for e in episodes} >= {("Src-Exec", 1), ("Tgt", 0)}
    assert {e["regime"] for e in episodes if e["condition"].endswith("-Exec")} == set(REGIMES)
    # What the agent said is what was counted: success, an exception, nothing.
    outcomes = {uid: {r["success"] for r in written if r["uid"] == uid} for uid, _ in per_cell}
    assert outcomes == {"products": {True}, "crashes": {False}, "silent": {False}}
    assert {r["site"] for r in written if r["uid"] != "silent"} == {"shop"}
    reasons = {r.get("reason") for r in attempts(tmp_path / "run") if r["state"] == "done"}
    assert "LookupError: no such shelf" in reasons and "the agent returned None" in reasons
    assert table["complete"] is True and table["websites"] == sorted(table["websites"])
    # Run again: everything is done, nothing runs again, the same table comes out.
    with SkillShift(memory_demo_service.api) as client:
        again = sweep(
            client,
            tasks,
            lambda trial: pytest.fail(f"{trial.cell.key} ran again"),
            tmp_path / "run",
            seeds=SEEDS,
            regimes=REGIMES,
            stream=(tmp_path / "again.log").open("w"),
        )
    assert again == table


def _refused_call(trial: Trial) -> bool:
    trial.step("click", note="x" * 3000)  # a free field over 2,048 characters: 422
    return True


def _refused_result(trial: Trial) -> dict[str, object]:
    return {"success": True, "detail": "y" * 3000}  # over 2,048 characters: 422


@pytest.mark.parametrize(
    ("refused", "why"),
    [
        (_refused_call, "SkillShiftError: 422: step: note:"),
        (_refused_result, "the service refused the agent's result: 422: task_result: detail"),
    ],
)
def test_what_the_service_refuses_of_an_agent_is_its_failure_and_the_sweep_goes_on(
    memory_demo_service: ServiceProcess, tmp_path: Path, refused: Callable[[Trial], Any], why: str
) -> None:
    """A call or a result the API refuses (422) is the agent's doing, as an exception of its
    own: stopping the sweep stopped every rerun at that attempt too."""

    def agent(trial: Trial) -> Any:
        return refused(trial) if trial.task.uid == "refused" else True

    with SkillShift(memory_demo_service.api) as client:
        sweep(
            client,
            ["refused", "fine"],
            agent,
            tmp_path / "run",
            conditions=["Src"],
            stream=(tmp_path / "progress.log").open("w"),
        )
    written = [json.loads(line) for line in (tmp_path / "run" / "per_task.jsonl").open()]
    assert {r["uid"]: r["success"] for r in written} == {"refused": False, "fine": True}
    (reason,) = [r["reason"] for r in attempts(tmp_path / "run") if r.get("reason")]
    assert reason.startswith(why)


def test_a_task_given_twice_is_refused_before_anything_runs(
    memory_demo_service: ServiceProcess, tmp_path: Path
) -> None:
    # Its attempts would be one cell each: run once, wanted twice in the results, so no run
    # of the sweep could ever write them.
    ran: list[str] = []
    tasks = [Task("checkout", site="shop"), "search", Task("checkout")]
    with (
        SkillShift(memory_demo_service.api) as client,
        pytest.raises(ValueError, match="task checkout is given twice"),
    ):
        sweep(client, tasks, lambda trial: ran.append(trial.cell.key), tmp_path / "run")
    assert ran == [] and not (tmp_path / "run").exists()


def test_a_task_on_a_site_profile_reaches_its_target_under_tgt(
    memory_demo_service: ServiceProcess, tmp_path: Path
) -> None:
    """`Task(site=...)` naming a profile pins it: routing to the target deployment is decided
    before the page is seen, so a label alone would leave `Tgt` on the source (the synthetic
    variant). A name that is no profile stays a label (the test above)."""
    demo = memory_demo_service.demo
    titles: dict[str, str] = {}

    def agent(trial: Trial) -> bool:
        with httpx.Client(proxy=trial.episode.data["proxy_url"], timeout=30) as http:
            page = http.get(f"{demo}/").text
        titles[trial.cell.condition] = page.split("<title>")[1].split("</title>")[0]
        return True

    with SkillShift(memory_demo_service.api) as client:
        sweep(
            client,
            [Task("home", site="demo")],
            agent,
            tmp_path / "run",
            conditions=["Src", "Tgt"],
            stream=(tmp_path / "progress.log").open("w"),
        )
        pinned = {client.get_episode(r["episode"])["site"] for r in attempts(tmp_path / "run")}
    assert pinned == {"demo"}
    assert "Outdoor Shop 2.0" not in titles["Src"] and "Outdoor Shop 2.0" in titles["Tgt"]


def test_results_are_never_written_without_a_done_attempt_and_a_rerun_runs_it_again(
    memory_demo_service: ServiceProcess, tmp_path: Path
) -> None:
    """A sweep's results are the service's reports of its episodes: an attempt whose episode
    is gone (its ttl_s ran out, the service restarted without --record-dir) would be left out.
    Such results are not written, the files of the run before stay, and the next run runs the
    attempt again."""
    ran: list[str] = []
    out, log = tmp_path / "run", (tmp_path / "progress.log").open("w")

    def agent(trial: Trial) -> bool:
        ran.append(trial.cell.key)
        return True

    with SkillShift(memory_demo_service.api) as client:
        first = sweep(client, ["home", "cart"], agent, out, conditions=["Src"], stream=log)
        written = (out / "per_task.jsonl").read_text()
        assert len(written.splitlines()) == 2
        home = next(r for r in attempts(out) if r["key"].startswith("home|"))
        client.delete_episode(home["episode"])  # (as its ttl_s running out does)

        def deletes_the_cart_episode(trial: Trial) -> bool:
            ran.append(trial.cell.key)
            cart = next(r for r in attempts(out) if r["key"].startswith("cart|"))
            client.delete_episode(cart["episode"])  # gone while the sweep runs
            return True

        # The home attempt's episode is gone: run again. The cart one goes meanwhile.
        with pytest.raises(SweepIncomplete, match="reports 1 of the 2 attempts"):
            sweep(
                client, ["home", "cart"], deletes_the_cart_episode, out, conditions=["Src"],
                stream=log,
            )  # fmt: skip
        assert (out / "per_task.jsonl").read_text() == written
        assert json.loads((out / "table.json").read_text()) == first
        # The next run runs the cart attempt again, and writes both.
        again = sweep(client, ["home", "cart"], agent, out, conditions=["Src"], stream=log)
        # A run with more cells extends the sweep, and says so.
        more = sweep(client, ["home", "cart", "search"], agent, out, conditions=["Src"], stream=log)
    cells = json.loads((out / "sweep.json").read_text())["cells"]
    assert cells == ["home|Src|0|-", "cart|Src|0|-", "search|Src|0|-"]
    assert more["cells"][0]["episodes"] == 3
    assert ran == ["home|Src|0|-", "cart|Src|0|-", "home|Src|0|-", "cart|Src|0|-", "search|Src|0|-"]
    assert len((out / "per_task.jsonl").read_text().splitlines()) == 3
    assert again["metrics"]["SR"]["overall"] == 1.0
    said = (tmp_path / "progress.log").read_text()
    assert "1 done attempts run again: their episodes are gone" in said
    assert "1 cells added to sweep" in said


def test_results_cover_every_cell_of_the_sweep_and_only_its_counted_attempts(
    memory_demo_service: ServiceProcess, tmp_path: Path
) -> None:
    """A call with fewer tasks than the sweep has does not write results that lack a gone
    attempt of another task; an episode tagged with the sweep that the sweep did not count is
    not silently averaged in."""
    out, log = tmp_path / "run", (tmp_path / "progress.log").open("w")
    ran: list[str] = []

    def agent(trial: Trial) -> bool:
        ran.append(trial.cell.key)
        return True

    with SkillShift(memory_demo_service.api) as client:
        sweep(client, ["home", "cart"], agent, out, conditions=["Src"], stream=log)
        written = (out / "per_task.jsonl").read_text()
        cart = next(r for r in attempts(out) if r["key"].startswith("cart|"))
        client.delete_episode(cart["episode"])
        with pytest.raises(SweepIncomplete, match=r"1 of the 2 attempts .* not done \(first: cart"):
            sweep(client, ["home"], agent, out, conditions=["Src"], stream=log)
        assert (out / "per_task.jsonl").read_text() == written
        sweep(client, ["home", "cart"], agent, out, conditions=["Src"], stream=log)
        assert ran == ["home|Src|0|-", "cart|Src|0|-", "cart|Src|0|-"]
        name = json.loads((out / "sweep.json").read_text())["name"]
        client.create_episode(tags={"sweep": name, "uid": "by-hand"})
        with pytest.raises(
            SweepIncomplete, match="reports 3 attempts of sweep .*, more than its 2"
        ):
            sweep(client, ["home", "cart"], agent, out, conditions=["Src"], stream=log)
        # The episode of an attempt is counted only once its result is in.
        unfinished = [
            e for e in client.list_episodes() if e["tags"].get("sweep", "").endswith("/unfinished")
        ]
    assert unfinished == [] and len(ran) == 3


SWEEP_SCRIPT = """
import sys, pathlib, httpx
from skillshift_client import SkillShift
from skillshift_client.sweep import sweep

api, demo, out, gate = sys.argv[1:5]
calls = pathlib.Path(out).parent / "calls.log"

def agent(trial):
    with calls.open("a") as log:
        log.write(trial.cell.key + "\\n")
    if len(calls.read_text().splitlines()) == 4:
        # The fourth attempt waits for the gate: the test kills the process while it does.
        while not pathlib.Path(gate).exists():
            pathlib.Path(gate + ".waiting").touch()
            import time; time.sleep(0.05)
    with httpx.Client(proxy=trial.episode.data["proxy_url"], timeout=30) as http:
        return http.get(demo + "/").status_code == 200

with SkillShift(api) as client:
    sweep(client, ["home", "cart"], agent, out, conditions=["Src", "Src-Perc", "Src-Exec"],
          regimes=["multiple"])
"""


def run_sweep(service: ServiceProcess, tmp_path: Path) -> subprocess.Popen[str]:
    args = [sys.executable, "-c", SWEEP_SCRIPT, service.api, str(service.demo)]
    args += [str(tmp_path / "run"), str(tmp_path / "gate")]
    return subprocess.Popen(
        args, cwd=REPO, env=os.environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_sweep_killed_halfway_resumes_without_running_a_done_attempt_again(
    memory_demo_service: ServiceProcess, tmp_path: Path
) -> None:
    first = run_sweep(memory_demo_service, tmp_path)
    try:
        while not (tmp_path / "gate.waiting").exists():  # the fourth attempt is under way
            assert first.poll() is None, first.communicate()[1]
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    records = list(attempts(tmp_path / "run"))
    done_before = {r["key"] for r in records if r["state"] == "done"}
    (cut_short,) = {r["key"] for r in records if r["state"] == "started"} - done_before
    assert len(done_before) == 3
    (tmp_path / "gate").touch()
    second = run_sweep(memory_demo_service, tmp_path)
    _, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr
    calls = Counter((tmp_path / "calls.log").read_text().splitlines())
    # 2 tasks x 3 conditions: each run once, the one cut short twice.
    assert len(calls) == 6 and calls[cut_short] == 2
    assert all(calls[key] == 1 for key in done_before)
    written = [json.loads(line) for line in (tmp_path / "run" / "per_task.jsonl").open()]
    assert len(written) == 6 and all(r["success"] is True for r in written)
    with SkillShift(memory_demo_service.api) as client:
        name = json.loads((tmp_path / "run" / "sweep.json").read_text())["name"]
        set_aside = [
            e for e in client.list_episodes() if e["tags"].get("sweep") == f"{name}/abandoned"
        ]
    assert [e["tags"]["task"] for e in set_aside] == [cut_short.split("|")[0]]


def test_a_service_it_cannot_reach_stops_the_sweep_with_a_message(tmp_path: Path) -> None:
    ran: list[str] = []
    with (
        SkillShift(f"http://127.0.0.1:{free_port()}") as client,
        pytest.raises(SkillShiftUnreachable, match="unreachable.*SKILLSHIFT_API_URL"),
    ):
        sweep(client, ["home"], lambda trial: ran.append(trial.cell.key), tmp_path / "run")
    assert ran == [] and not (tmp_path / "run" / "per_task.jsonl").exists()


def test_a_wrong_token_is_refused_with_a_message(tmp_path: Path) -> None:
    service = ServiceProcess(tmp_path, env={"SKILLSHIFT_API_TOKEN": "right"}).start()
    try:
        with (
            SkillShift(service.api, token="wrong") as client,
            pytest.raises(SkillShiftError, match="401.*SKILLSHIFT_API_TOKEN"),
        ):
            sweep(client, ["home"], lambda trial: True, tmp_path / "run")
    finally:
        service.stop()
