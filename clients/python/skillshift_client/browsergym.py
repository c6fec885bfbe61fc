"""A gymnasium wrapper that runs any BrowserGym environment under skillshift episodes.

    import gymnasium as gym
    import browsergym.core  # registers browsergym/openended
    from skillshift_client import SkillShift
    from skillshift_client.browsergym import SkillShiftEnv

    env = SkillShiftEnv(gym.make("browsergym/openended", task_kwargs={"start_url": url}),
                        SkillShift(), condition="Src-Perc", seed=3)
    obs, info = env.reset()         # a fresh episode, the browser bound to it
    obs, reward, terminated, truncated, info = env.step('click("12")')   # posted as a step
    ...                             # the end of the task posts its result (the reward)

Each `reset` creates a new episode from the wrapper's settings (`condition`, `seed`, `regime`,
`tags`... as `POST /episodes` takes them; the task's id is added as the `task` tag, and as
`uid` unless the tags have one), and points the environment's browser at it: BrowserGym
launches a new browser and context at every reset, with the proxy settings this wrapper puts
in its `pw_context_kwargs`. Every `step` is posted with its action; when the task terminates
the result is posted, a success when `success(reward, info)` says so (by default: a positive
reward), and a truncated task is a failure. Skill calls and failures go through
`skill_call`/`skill_failure`, or the `skill` decorator on the agent's skill functions.

A task that never ends (an open-ended one, or an agent that stops before its task does) is
closed by `finish(success)`, which posts the result the agent decided. One left open when the
next `reset` comes, or `close()`, is posted as a failure saying so: an attempt without a
result would be missing from the success rate without anyone noticing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import gymnasium

from skillshift_client import Episode, SkillShift, fit_text
from skillshift_client.chromium import system_chromium, use_system_chromium

__all__ = ["SkillShiftEnv", "use_system_chromium"]

F = TypeVar("F", bound=Callable[..., Any])
# Event fields are at most 2,048 characters once encoded: an action or a reason is cut short.
MAX_TEXT = 500


def _positive_reward(reward: float, info: dict[str, Any]) -> bool:
    return reward > 0


def _browser_env(env: gymnasium.Env[Any, Any]) -> Any:
    """The BrowserGym environment under any wrappers, or a TypeError saying what was given."""
    base = getattr(env, "unwrapped", None)  # (None: not a gymnasium environment at all)
    # Its browser settings, read at every reset: what binding needs (duck-typed, so the client
    # imports nothing of BrowserGym and follows its releases).
    if not all(hasattr(base, name) for name in ("pw_context_kwargs", "pw_chromium_kwargs")):
        given = type(env if base is None else base).__name__
        raise TypeError(
            "SkillShiftEnv wraps a BrowserGym environment (browsergym.core.env.BrowserEnv, "
            f"e.g. gym.make('browsergym/openended', ...)); got {given}"
        )
    return base


class SkillShiftEnv(gymnasium.Wrapper):  # type: ignore[misc]  # gymnasium is untyped here
    """`env` under a new skillshift episode at each reset; steps and the result posted."""

    def __init__(
        self,
        env: gymnasium.Env[Any, Any],
        client: SkillShift,
        *,
        task: str | None = None,
        success: Callable[[float, dict[str, Any]], bool] = _positive_reward,
        episode: Episode | None = None,
        keep: bool = True,
        **config: Any,
    ) -> None:
        """`config` is the episode's (`POST /episodes`). `task` names the task in the episode's
        tags (default: the environment's registered id). `episode`: run one attempt in this
        existing episode instead (a sweep's); a second reset is then refused. `keep=False`
        deletes each episode once its result is posted."""
        self._base = _browser_env(env)
        super().__init__(env)
        self.client = client
        self.task = task or getattr(env.spec, "id", None) or "browsergym"
        self._success = success
        self._config = config
        self._given = episode
        self._keep = keep
        self._own_context_kwargs = dict(self._base.pw_context_kwargs)
        self.episode: Episode | None = None
        self.steps = 0
        self._open = False  # the current episode still waits for its result
        self._deleted = False  # keep=False: the current episode is gone with its result

    # -- the gymnasium interface -------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        self._end_open_attempt("reset before the task ended")
        self.episode = self._new_episode(seed)
        self.steps, self._deleted = 0, False
        self._bind(self.episode)
        try:
            obs, info = self.env.reset(seed=seed, options=options)
        except BaseException:
            # The attempt never started: it is no task attempt, so an episode of ours leaves
            # nothing behind (a given one is its owner's, who counts the failure).
            if self._given is None:
                self.client.delete_episode(self.episode.id, missing_ok=True)
                self.episode = None
            raise
        self._open = True
        return obs, {**info, "skillshift_episode": self.episode.id}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        episode = self._current()
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        if self._deleted:  # keep=False, and the result is in: nothing to post to
            return obs, reward, terminated, truncated, {**info, "skillshift_episode": episode.id}
        error = obs.get("last_action_error") if isinstance(obs, dict) else None
        self.client.step(
            episode.id,
            fit_text(str(action), MAX_TEXT),
            **({"error": fit_text(str(error), MAX_TEXT)} if error else {}),
        )
        if self._open and terminated:
            self._post_result(self._success(float(reward), info), reward=float(reward))
        elif self._open and truncated:
            self._post_result(False, reward=float(reward), reason="truncated")
        return obs, reward, terminated, truncated, {**info, "skillshift_episode": episode.id}

    def close(self) -> None:
        try:
            self._end_open_attempt("closed before the task ended")
        finally:
            super().close()

    # -- what the agent reports --------------------------------------------------------------

    def finish(self, success: bool, **fields: Any) -> None:
        """Post the task's result now (a task that does not end by itself, or an agent that
        decides it is done); later steps are still posted, the result is not posted again."""
        self._current()
        if not self._open:
            raise RuntimeError(f"episode {self.episode.id} already has its result")  # type: ignore[union-attr]
        self._post_result(success, **fields)

    def skill_call(self, skill: str, **fields: Any) -> None:
        self.client.skill_call(self._current().id, skill, **fields)

    def skill_failure(self, skill: str, **fields: Any) -> None:
        self.client.skill_failure(self._current().id, skill, **fields)

    def skill(self, name: str | None = None) -> Callable[[F], F]:
        """Decorate an agent's skill: each call is posted as a `skill_call`, and an exception
        it raises as a `skill_failure` (then raised on)."""

        def decorate(function: F) -> F:
            skill = name or function.__name__

            @functools.wraps(function)
            def posted(*args: Any, **kwargs: Any) -> Any:
                self.skill_call(skill)
                try:
                    return function(*args, **kwargs)
                except Exception as error:
                    self.skill_failure(
                        skill, error=fit_text(f"{type(error).__name__}: {error}", MAX_TEXT)
                    )
                    raise

            return posted  # type: ignore[return-value]

        return decorate

    # -- the episode -------------------------------------------------------------------------

    def _new_episode(self, seed: int | None) -> Episode:
        if self._given is not None:
            if self.episode is not None:
                raise RuntimeError(
                    f"this SkillShiftEnv was given episode {self._given.id} for one task "
                    "attempt; wrap the environment again for the next one"
                )
            return self._given
        config = dict(self._config)
        if seed is not None:
            config.setdefault("seed", seed)  # the task's seed, unless the episode has its own
        # `uid` too (unless given): the benchmark's per_task records name the task by it.
        config["tags"] = {"uid": self.task, **config.get("tags", {}), "task": self.task}
        return self.client.create_episode(**config)

    def _bind(self, episode: Episode) -> None:
        """BrowserGym launches its browser and context anew at each reset, from these."""
        self._base.pw_context_kwargs = {
            **self._own_context_kwargs,
            **episode.playwright_context_kwargs(),
        }
        if "executable_path" not in self._base.pw_chromium_kwargs:
            chromium = system_chromium()
            if chromium:
                self._base.pw_chromium_kwargs = {
                    **self._base.pw_chromium_kwargs,
                    "executable_path": chromium,
                }

    def _current(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self.episode

    def _post_result(self, success: bool, **fields: Any) -> None:
        episode = self._current()
        self._open = False
        self.client.task_result(episode.id, success=success, steps=self.steps, **fields)
        if not self._keep:
            self.client.delete_episode(episode.id, missing_ok=True)
            self._deleted = True

    def _end_open_attempt(self, reason: str) -> None:
        if self._open:
            self._post_result(False, reason=reason)
