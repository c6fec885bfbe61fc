"""A sweep: every task under every condition and seed (and regime, for `-Exec`), run with the
agent's own function, resumable, ending in the benchmark's files.

    from skillshift_client import SkillShift
    from skillshift_client.sweep import sweep

    def agent(trial):                      # one task attempt, in its own episode
        context = browser.new_context(**trial.episode.playwright_context_kwargs())
        ...                                # trial.step(), trial.skill_call("search"), ...
        return succeeded                   # or {"success": ..., "steps": ...}

    with SkillShift() as client:
        sweep(client, ["checkout", "search"], agent, out="runs/first", seeds=[0, 1])

Each attempt gets a new episode: its condition, seed and regime, tagged with the sweep's name
(`sweep`: `NAME/unfinished` until the attempt's result is in, then `NAME`, so an attempt cut
short is never in the sweep's reports), the task (`task`, `uid`) and its site when the task
names one. What the agent
returns is posted as the task's result, unless it posted one itself (through the trial's
BrowserGym wrapper, say); an exception is a failure naming it, and the sweep goes on (so is a
call of the agent's that the service refuses: a 400, 413 or 422). The service failing
(unreachable, a refused token) stops the sweep instead: no attempt is counted for it.

`out` keeps the sweep's state: `sweep.json` (its name and cells), `progress.jsonl` (an
attempt started, an attempt done), and at the end `per_task.jsonl` and `table.json` (the
service's `/reports?format=per_task` and `format=benchmark` for the sweep's tag) and
`table.txt`, which is printed. Run it again after a crash and it picks up where it stopped:
done attempts are not run again, and one that was cut short is retagged `sweep=NAME/abandoned`
(so it is out of the sweep's reports) and run anew.

The results come from the service, so they need the sweep's episodes: a done attempt whose
episode is gone (past its `ttl_s`, or in a service restarted without `--record-dir`) is run
again, and results that are not exactly the sweep's attempts, of every cell it was ever run
with, are not written (`SweepIncomplete`, saying why; the files of an earlier run stay as they
were). A sweep longer than its episodes' `ttl_s` (a day by default) needs `--record-dir` or a
longer `ttl_s`.

A task's `site` that names one of the service's site profiles is pinned as its episodes'
`site` (unless `episode` pins one): its `Tgt` attempts then go to that site's target
deployment. Another name is a label for the table only.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from skillshift_client import MAX_REASON, Episode, SkillShift, SkillShiftError, fit_text
from skillshift_client.tables import format_benchmark

__all__ = ["CONDITIONS", "REGIMES", "Cell", "SweepIncomplete", "Task", "Trial", "sweep"]

CONDITIONS = ("Src", "Src-Perc", "Src-Exec", "Tgt", "Tgt-Perc", "Tgt-Exec")
REGIMES = ("once", "multiple", "random")
# Answers to a request the agent made that say the request was wrong (a bad field, too big):
# the attempt's failure. Any other error is the service's (unreachable, a refused token, down).
REFUSED = (400, 413, 422)
UNFINISHED = "unfinished"  # an attempt's episode is tagged `sweep=NAME/unfinished` until counted


class SweepIncomplete(RuntimeError):
    """The service no longer reports some of the sweep's done attempts: results without them
    are not written. Running the sweep again runs them again."""


@dataclass(frozen=True)
class Task:
    """A task of the sweep: its id (`uid` in the benchmark's files), the site it runs on (the
    table's website; else the episode's site as the service matches it), and whatever the
    agent needs to run it (a start URL, a goal)."""

    uid: str
    site: str | None = None
    data: Any = None


@dataclass(frozen=True)
class Cell:
    """One attempt the sweep makes: a task under a condition, a seed and (for `-Exec`) a
    regime."""

    task: Task
    condition: str
    seed: int
    regime: str | None

    @property
    def key(self) -> str:
        return f"{self.task.uid}|{self.condition}|{self.seed}|{self.regime or '-'}"

    def describe(self) -> str:
        regime = f" {self.regime}" if self.regime else ""
        return f"{self.task.uid} {self.condition}{regime} seed={self.seed}"


@dataclass
class Trial:
    """What the agent's function gets for one attempt: its episode, and calls that post to it."""

    client: SkillShift
    cell: Cell
    episode: Episode
    steps: int = field(default=0, init=False)

    @property
    def task(self) -> Task:
        return self.cell.task

    def step(self, action: str | None = None, **fields: Any) -> None:
        """Count and post one step of the agent."""
        self.steps += 1
        self.client.step(self.episode.id, action, **fields)

    def skill_call(self, skill: str, **fields: Any) -> None:
        self.client.skill_call(self.episode.id, skill, **fields)

    def skill_failure(self, skill: str, **fields: Any) -> None:
        self.client.skill_failure(self.episode.id, skill, **fields)

    def browsergym(self, env: Any, **options: Any) -> Any:
        """`env` (a BrowserGym environment) wrapped to run this attempt in its episode: reset
        it once; its steps and the end of its task are posted (`SkillShiftEnv`)."""
        from skillshift_client.browsergym import SkillShiftEnv

        return SkillShiftEnv(env, self.client, episode=self.episode, task=self.task.uid, **options)


Agent = Callable[[Trial], Any]


def cells(
    tasks: Iterable[Task],
    conditions: Sequence[str] = CONDITIONS,
    seeds: Sequence[int] = (0,),
    regimes: Sequence[str] = REGIMES,
) -> list[Cell]:
    """Tasks x conditions x seeds, and x regimes for the `-Exec` conditions, task by task."""
    return [
        Cell(task, condition, seed, regime)
        for task in tasks
        for condition in conditions
        for seed in seeds
        for regime in (regimes if condition.endswith("-Exec") else (None,))
    ]


class Progress:
    """`progress.jsonl`: one line when an attempt starts (with its episode), one when it is
    done; a line cut short by a crash is ignored."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.started: dict[str, str] = {}  # cell key -> episode id, attempts not done
        self.done: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # the last line of a killed run
                if record.get("state") == "started":
                    self.started[record["key"]] = record["episode"]
                elif record.get("state") == "done":
                    self.started.pop(record["key"], None)
                    self.done[record["key"]] = record
                elif record.get("state") in ("gone", "abandoned"):  # to be run (again)
                    self.started.pop(record["key"], None)
                    self.done.pop(record["key"], None)

    def write(self, record: dict[str, Any]) -> None:
        with self.path.open("a") as out:
            out.write(json.dumps(record) + "\n")
            out.flush()


class Bar:
    """A one-line progress bar on a terminal, one line per attempt elsewhere (a log file)."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.stream = total, stream
        self.tty = stream.isatty()

    def show(self, done: int, text: str) -> None:
        width = 24
        filled = width * done // max(self.total, 1)
        line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} {text}"
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty:
            self.stream.write("\n")


def sweep(
    client: SkillShift,
    tasks: Iterable[Task | str],
    agent: Agent,
    out: str | Path,
    *,
    conditions: Sequence[str] = CONDITIONS,
    seeds: Sequence[int] = (0,),
    regimes: Sequence[str] = REGIMES,
    episode: dict[str, Any] | None = None,
    stream: TextIO | None = None,
) -> dict[str, Any]:
    """Run every attempt not done yet, write the benchmark's files to `out`, print the table
    and return it (the service's `format=benchmark`). `episode`: settings every attempt's
    episode shares (targets, regime_params, perceptual, ttl_s, tags)."""
    stream = stream or sys.stderr
    given = [_task(task) for task in tasks]
    planned = cells(given, conditions, seeds, regimes)
    if not planned:
        raise ValueError("the sweep has no attempt to make: no task, condition or seed")
    uids = [task.uid for task in given]
    twice = next((uid for uid in uids if uids.count(uid) > 1), None)
    if twice is not None:
        # A cell is known by its task's uid: the two would share attempts, and the results,
        # wanting both, could never be written.
        raise ValueError(f"task {twice} is given twice: each task of a sweep needs its own uid")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    name, every_cell = _name(folder, planned, stream)
    progress = Progress(folder / "progress.jsonl")
    _set_aside_cut_short(client, progress, name)
    _forget_gone(client, progress, stream)
    profiles = {site["name"] for site in client.sites()}
    bar = Bar(len(planned), stream)
    done = sum(cell.key in progress.done for cell in planned)
    for cell in planned:
        if cell.key in progress.done:
            continue
        outcome = _attempt(client, cell, agent, progress, name, episode or {}, profiles)
        done += 1
        said = "success" if outcome["success"] else f"failure ({outcome.get('reason') or '-'})"
        bar.show(done, f"{cell.describe()}: {said}")
    bar.end()
    return _write_results(client, folder, name, every_cell, progress, stream)


def _task(task: Task | str) -> Task:
    return task if isinstance(task, Task) else Task(str(task))


def _name(folder: Path, planned: list[Cell], stream: TextIO) -> tuple[str, list[str]]:
    """The sweep's name (its episodes' `sweep` tag), made on the first run and kept, and every
    cell it was ever run with: a run with more (another seed, a task) extends it, and says so
    (its results are every attempt the sweep made)."""
    settings = folder / "sweep.json"
    keys = [cell.key for cell in planned]
    if not settings.exists():
        record = {"name": f"{folder.name}-{secrets.token_hex(4)}", "cells": keys}
        settings.write_text(json.dumps(record, indent=2) + "\n")
        return str(record["name"]), keys
    record = json.loads(settings.read_text())
    known = list(record.get("cells", []))
    added = [key for key in keys if key not in known]
    if added:
        record["cells"] = known + added
        settings.write_text(json.dumps(record, indent=2) + "\n")
        stream.write(
            f"{len(added)} cells added to sweep {record['name']} in {folder}: its results are "
            f"all {len(record['cells'])} cells it was run with\n"
        )
    return str(record["name"]), list(record["cells"])


def _set_aside_cut_short(client: SkillShift, progress: Progress, name: str) -> None:
    """Attempts a crash cut short: one whose result is in is counted and done; the others are
    run again (retagged `NAME/abandoned` where the service still has them live)."""
    for key, episode_id in list(progress.started.items()):
        del progress.started[key]
        try:
            posted = _posted_result(client, episode_id)
            if posted is not None:
                _count(client, episode_id, name)
                record = {"key": key, "episode": episode_id, "state": "done", **posted}
                progress.write(record)
                progress.done[key] = record
                continue
            tags = client.get_episode(episode_id)["tags"]
            client.patch_episode(episode_id, tags={**tags, "sweep": f"{name}/abandoned"})
            progress.write({"key": key, "episode": episode_id, "state": "abandoned"})
        except SkillShiftError as error:
            if error.status != 404:
                raise
            # Gone, or archived (which takes no change): not counted, so run again.
            progress.write({"key": key, "episode": episode_id, "state": "gone"})


def _forget_gone(client: SkillShift, progress: Progress, stream: TextIO) -> None:
    """Done attempts (of any cell the sweep was run with) whose episodes the service no longer
    has: not done any more (the results are the service's reports of the episodes, which would
    leave them out), so run again."""
    gone = []
    for key, record in list(progress.done.items()):
        try:
            client.get_episode(record["episode"])
        except SkillShiftError as error:
            if error.status != 404:
                raise
            progress.write({"key": key, "episode": record["episode"], "state": "gone"})
            del progress.done[key]
            gone.append(key)
    if gone:
        stream.write(
            f"{len(gone)} done attempts run again: their episodes are gone (past their ttl_s, "
            "or in a service restarted without --record-dir)\n"
        )


def _attempt(
    client: SkillShift,
    cell: Cell,
    agent: Agent,
    progress: Progress,
    name: str,
    shared: dict[str, Any],
    profiles: set[str],
) -> dict[str, Any]:
    # Tagged `NAME/unfinished` until its result is in: an attempt cut short, or an episode
    # made just before a crash, is never in the sweep's reports.
    tags = {
        **shared.get("tags", {}),
        "sweep": f"{name}/{UNFINISHED}",
        "task": cell.task.uid,
        "uid": cell.task.uid,
    }
    config = {**shared, "condition": cell.condition, "seed": cell.seed, "tags": tags}
    if cell.task.site:
        tags["site"] = cell.task.site
        if cell.task.site in profiles and "site" not in shared:
            # Routing to a target is decided before a page is seen: by the pinned site's.
            config["site"] = cell.task.site
    if cell.regime:
        config["regime"] = cell.regime
    trial = Trial(client, cell, client.create_episode(**config))
    progress.write({"key": cell.key, "episode": trial.episode.id, "state": "started"})
    try:
        returned = agent(trial)
        result = _result(returned, trial.steps)
    except SkillShiftError as error:
        if error.status not in REFUSED:
            raise  # the service failed, not the task: stop, and a rerun makes this attempt again
        # The service refused what the agent sent: the agent's doing, as any exception of its
        # own (stopping would stop every rerun at this attempt too).
        result = _failure(trial, f"{type(error).__name__}: {error}")
    except Exception as error:
        result = _failure(trial, f"{type(error).__name__}: {error}")
    posted = _posted_result(client, trial.episode.id)
    if posted is None:
        try:
            client.task_result(trial.episode.id, **result)
        except SkillShiftError as error:
            if error.status not in REFUSED:
                raise
            # The service refused what the agent returned (a detail over the API's limit): a
            # failure saying why, as for a call of its own refused.
            result = _failure(trial, f"the service refused the agent's result: {error}")
            client.task_result(trial.episode.id, **result)
    else:
        result = posted  # the agent's own (through the BrowserGym wrapper, say) is the one
    _count(client, trial.episode.id, name, tags)
    record = {"key": cell.key, "episode": trial.episode.id, "state": "done", **result}
    progress.write(record)
    progress.done[cell.key] = record
    return result


def _failure(trial: Trial, why: str) -> dict[str, Any]:
    """The attempt's result when it failed: `why`, cut to what a result's reason holds."""
    return {"success": False, "steps": trial.steps, "reason": fit_text(why, MAX_REASON)}


def _count(
    client: SkillShift, episode_id: str, name: str, tags: dict[str, str] | None = None
) -> None:
    """The attempt's episode into the sweep's reports (tagged `sweep=NAME`), its result in.
    `tags`: the episode's, when the caller made them (else they are read)."""
    tags = client.get_episode(episode_id)["tags"] if tags is None else tags
    if tags.get("sweep") != name:
        client.patch_episode(episode_id, tags={**tags, "sweep": name})


def _posted_result(client: SkillShift, episode_id: str) -> dict[str, Any] | None:
    """The task result posted to the episode (its last), if any: success, steps, reason."""
    posted = None
    for event in client.iter_events(episode_id):
        if event["type"] == "task_result":
            posted = event
    if posted is None:
        return None
    return {key: posted[key] for key in ("success", "steps", "reason") if key in posted}


def _result(returned: Any, steps: int) -> dict[str, Any]:
    """The task result an agent's return value stands for."""
    if isinstance(returned, bool):
        return {"success": returned, "steps": steps}
    if isinstance(returned, dict) and isinstance(returned.get("success"), bool):
        return {"steps": steps, **returned}
    # None (or anything else) says nothing: counted as a failure that says why, rather than
    # an attempt missing from the success rate.
    return {"success": False, "steps": steps, "reason": f"the agent returned {returned!r:.100}"}


def _write_results(
    client: SkillShift,
    folder: Path,
    name: str,
    every_cell: list[str],
    progress: Progress,
    stream: TextIO,
) -> dict[str, Any]:
    records = client.reports(tags={"sweep": name}, format="per_task")
    missing = [key for key in every_cell if key not in progress.done]
    if missing or len(records) != len(every_cell):
        raise SweepIncomplete(_incomplete(name, folder, len(records), every_cell, missing))
    table = client.reports(tags={"sweep": name}, format="benchmark")
    (folder / "per_task.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "table.json").write_text(json.dumps(table, indent=2) + "\n")
    text = format_benchmark(table)
    (folder / "table.txt").write_text(text + "\n")
    stream.write(text + "\n")
    return dict(table)


def _incomplete(
    name: str, folder: Path, reported: int, every_cell: list[str], missing: list[str]
) -> str:
    """Why the results of sweep `name` are not written, and what to do."""
    kept = f"The results in {folder} were left as they were"
    why_gone = "past their ttl_s, or in a service restarted without --record-dir"
    longer = (
        "A sweep longer than its episodes' ttl_s (a day by default) needs --record-dir, or a "
        "longer ttl_s (episode={'ttl_s': ...})"
    )
    if missing:
        return (
            f"{len(missing)} of the {len(every_cell)} attempts of sweep {name} are not done "
            f"(first: {missing[0]}): their episodes are gone ({why_gone}), or their cells "
            f"were not in this call. {kept}; run the sweep again with all its tasks, seeds and "
            f"regimes. {longer}"
        )
    if reported < len(every_cell):
        return (
            f"the service reports {reported} of the {len(every_cell)} attempts of sweep "
            f"{name}: the others' episodes are gone ({why_gone}). {kept}; run the sweep "
            f"again to run those attempts again. {longer}"
        )
    return (
        f"the service reports {reported} attempts of sweep {name}, more than its "
        f"{len(every_cell)}: episodes tagged sweep={name} that it did not count (an attempt "
        f"run again after its first episode came back, one tagged by hand). {kept}; retag "
        "the extra ones and run the sweep again"
    )


def attempts(folder: str | Path) -> Iterator[dict[str, Any]]:
    """The records of `progress.jsonl` (for a look at what ran, and in which episode)."""
    path = Path(folder) / "progress.jsonl"
    for line in path.read_text().splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue
