"""A BrowserGym agent swept over the benchmark's six conditions, with an AgentLab-style loop.

    pip install browsergym-core ./clients/python
    python examples/browsergym_sweep.py http://127.0.0.1:5173/ --out runs/counter \\
        [--target http://127.0.0.1:5174/] [--task counter|openended] [--seeds 0 1]

The app is the lab's React starter (`deploy/lab/spa.sh --app react`; `--target` its newer
release, for the `Tgt` conditions): a button that counts its clicks. The task is to make it
show 3. `--task counter` is a task registered with BrowserGym whose reward says when it is
done; `--task openended` is BrowserGym's own open-ended task, which never ends by itself, so
the agent decides and says so with `env.finish()`.

What skillshift adds to an agent loop is three lines: the sweep, the wrapper around the
environment (`trial.browsergym(env)`), and the skill decorator. The sweep resumes if killed
(run the same command again) and writes `per_task.jsonl` and the benchmark's table to `--out`.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

import gymnasium as gym
from browsergym.core.registration import register_task
from browsergym.core.task import AbstractBrowserTask, OpenEndedTask
from browsergym.utils.obs import flatten_axtree_to_str

from skillshift_client import SkillShift
from skillshift_client.browsergym import use_system_chromium
from skillshift_client.sweep import Task, Trial, sweep

CLICKS = 3
COUNTER = re.compile(r"\[([^\]]+)\] button '[Cc]ount is (\d+)'")
CLOSE = re.compile(r"\[([^\]]+)\] button 'Close'")


class CounterTask(AbstractBrowserTask):
    """Click the counter until it shows 3: a reward of 1 and the end of the task then."""

    @classmethod
    def get_task_id(cls) -> str:
        return "skillshift-counter"

    def __init__(self, seed: int, start_url: str) -> None:
        super().__init__(seed)
        self.start_url = start_url
        self.slow_mo = 0  # no pause after each action: this task is timed by nobody

    def setup(self, page: Any) -> tuple[str, dict[str, Any]]:
        # A page the service meets for the first time is learnt before it is served: seconds.
        page.goto(self.start_url, timeout=60_000)
        return f"Click the counter button until it shows {CLICKS}.", {}

    def validate(self, page: Any, chat_messages: list[Any]) -> tuple[float, bool, str, dict]:
        counter = page.get_by_role("button", name=re.compile("count is", re.IGNORECASE))
        shown = counter.first.inner_text() if counter.count() else ""
        done = bool(re.search(rf"count is {CLICKS}\b", shown, re.IGNORECASE))
        return (1.0 if done else 0.0), done, "", {}


class CounterAgent:
    """AgentLab's agent interface (`get_action(obs) -> (action, info)`): close a popup if one
    is up, else click the counter until it shows 3 (then `None`: the agent is done)."""

    def get_action(self, obs: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
        axtree = flatten_axtree_to_str(obs["axtree_object"])
        close = CLOSE.search(axtree) if "dialog '" in axtree else None
        if close:
            return f'click("{close[1]}")', {"skill": "close_popup"}
        counter = COUNTER.search(axtree)
        if counter is None:
            return "noop(200)", {"skill": "find_counter"}
        if int(counter[2]) >= CLICKS:
            return None, {"done": True}
        return f'click("{counter[1]}")', {"skill": "press_counter"}


def make_env(task: str, start_url: str) -> Any:
    if task == "counter":
        return gym.make("browsergym/skillshift-counter", task_kwargs={"start_url": start_url})
    return gym.make(
        "browsergym/openended", task_kwargs={"start_url": start_url}, slow_mo=0, headless=True
    )


def run_attempt(trial: Trial, task: str, max_steps: int) -> bool:
    """AgentLab's loop, with the environment wrapped for the trial's episode."""
    env = trial.browsergym(make_env(task, trial.task.data))
    agent = CounterAgent()
    try:
        obs, _ = env.reset()
        for _ in range(max_steps):
            action, info = agent.get_action(obs)
            if action is None:  # the agent is done (the open-ended task never says so)
                env.finish(success=True)
                return True
            env.skill_call(info["skill"])
            obs, reward, terminated, truncated, _ = env.step(action)
            if obs["last_action_error"]:
                env.skill_failure(info["skill"], error=obs["last_action_error"][:200])
            if terminated or truncated:  # the wrapper posted the result (the reward)
                return bool(terminated and reward > 0)
        return False
    finally:
        env.close()  # a task still open here (out of steps) is posted as a failure


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("start_url")
    parser.add_argument("--target", help="the app's target variant, for the Tgt conditions")
    parser.add_argument("--out", required=True, help="the sweep's folder (resumed if it exists)")
    parser.add_argument("--task", choices=["counter", "openended"], default="counter")
    parser.add_argument("--conditions", nargs="+", default=None)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--regimes", nargs="+", default=["multiple"])
    parser.add_argument("--max-steps", type=int, default=10)
    args = parser.parse_args()
    use_system_chromium()
    register_task(CounterTask.get_task_id(), CounterTask)
    assert issubclass(OpenEndedTask, AbstractBrowserTask)  # the other task is BrowserGym's own
    episode: dict[str, Any] = {"regime_params": {"min_ms": 0, "max_ms": 0}}
    if args.target:
        episode["targets"] = {args.start_url.rstrip("/"): args.target.rstrip("/")}
    with SkillShift() as client:
        sweep(
            client,
            [Task(f"{args.task}-to-{CLICKS}", site="react", data=args.start_url)],
            lambda trial: run_attempt(trial, args.task, args.max_steps),
            args.out,
            seeds=args.seeds,
            regimes=args.regimes,
            episode=episode,
            **({"conditions": args.conditions} if args.conditions else {}),
        )


if __name__ == "__main__":
    main()
