"""One task attempt in a Playwright browser context bound to a new episode.

    from playwright.sync_api import sync_playwright
    from skillshift_client import SkillShift
    from skillshift_client.playwright import task_attempt

    with SkillShift() as client, sync_playwright() as p:
        browser = p.chromium.launch()
        with task_attempt(client, browser, "checkout", condition="Src-Perc", seed=3) as attempt:
            page = attempt.context.new_page()
            ...                      # the agent; attempt.step() counts a step
            attempt.fail("no basket")  # or leave the block: success

The episode is created for the block (tagged with the task: `task`, and `uid` unless given),
the context is bound to it, and when the block ends the task result is posted: a success,
unless the block raised (a failure naming the exception, which is raised on) or called
`fail()`. The context is closed and nothing stays bound to the episode; the episode itself is
kept for the reports (its `ttl_s` ends it), unless `keep=False`. `task_attempt_async` is the
same for `playwright.async_api` and `AsyncSkillShift`. Playwright is the agent's own: this
module never imports it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from skillshift_client import MAX_REASON, AsyncSkillShift, Episode, SkillShift, fit_text


@dataclass
class Attempt:
    """What the block works with: the bound context, its episode, and how the task is going."""

    context: Any  # playwright's BrowserContext (sync or async)
    episode: Episode
    steps: int = 0
    reason: str | None = field(default=None, init=False)  # set by `fail()`

    def step(self) -> None:
        """Count one step of the agent (posted with the result, as `steps`; to log what each
        step did, post it too: `client.step(attempt.episode.id, "click")`)."""
        self.steps += 1

    def fail(self, reason: str) -> None:
        """The task failed without an exception (the agent gave up, or checked and lost)."""
        self.reason = fit_text(reason, MAX_REASON)

    def _result(self, error: BaseException | None) -> dict[str, Any]:
        if error is not None:
            reason = fit_text(f"{type(error).__name__}: {error}", MAX_REASON)
            return {"success": False, "steps": self.steps, "reason": reason}
        if self.reason is not None:
            return {"success": False, "steps": self.steps, "reason": self.reason}
        return {"success": True, "steps": self.steps}


def _config(task: str, config: dict[str, Any]) -> dict[str, Any]:
    if not task:
        raise ValueError("task_attempt needs the task's name (it tags the episode: `task`)")
    # `uid` too (unless given): the benchmark's per_task records name the task by it, as a
    # sweep's attempts do; without it they would name the episode.
    return {**config, "tags": {"uid": task, **config.get("tags", {}), "task": task}}


@contextmanager
def task_attempt(
    client: SkillShift, browser: Any, task: str, *, keep: bool = True, **config: Any
) -> Iterator[Attempt]:
    """A new episode (`config`: condition, seed, regime, tags...) and a context of `browser`
    bound to it, for one attempt at `task`; the result is posted when the block ends."""
    episode = client.create_episode(**_config(task, config))
    try:
        context = browser.new_context(**episode.playwright_context_kwargs())
    except BaseException:
        client.delete_episode(episode.id, missing_ok=True)
        raise
    attempt = Attempt(context, episode)
    error: BaseException | None = None
    try:
        yield attempt
    except BaseException as raised:
        error = raised
        raise
    finally:
        try:
            context.close()
        finally:
            client.task_result(episode.id, **attempt._result(error))
            if not keep:
                client.delete_episode(episode.id, missing_ok=True)


@asynccontextmanager
async def task_attempt_async(
    client: AsyncSkillShift, browser: Any, task: str, *, keep: bool = True, **config: Any
) -> AsyncIterator[Attempt]:
    """`task_attempt` for `playwright.async_api` and `AsyncSkillShift`."""
    episode = await client.create_episode(**_config(task, config))
    try:
        context = await browser.new_context(**episode.playwright_context_kwargs())
    except BaseException:
        await client.delete_episode(episode.id, missing_ok=True)
        raise
    attempt = Attempt(context, episode)
    error: BaseException | None = None
    try:
        yield attempt
    except BaseException as raised:
        error = raised
        raise
    finally:
        try:
            await context.close()
        finally:
            await client.task_result(episode.id, **attempt._result(error))
            if not keep:
                await client.delete_episode(episode.id, missing_ok=True)


__all__ = ["Attempt", "task_attempt", "task_attempt_async"]
