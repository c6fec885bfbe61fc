"""A scripted agent in BrowserGym (browsergym-core) under a skillshift episode.

    pip install browsergym-core ./clients/python
    python examples/browsergym_agent.py http://127.0.0.1:8090/

BrowserGym pins its own Playwright, so it lives in its own environment; `skillshift_client`
(`pip install ./clients/python`) needs only httpx. The agent reads BrowserGym's accessibility
tree, closes a popup when one is there, opens "Products", and reports steps, skill calls and the
result.

Debian's Chromium instead of a downloaded one: `episode.browsergym_kwargs()` passes its path
for the task's browser, but BrowserGym's chat window launches Playwright's default Chromium with
no way to pass a path; `use_system_chromium()` (from the client) points Playwright's browser
directory at the system's Chromium for that.
"""

from __future__ import annotations

import argparse
import json
import re

from skillshift_client import SkillShift
from skillshift_client.browsergym import use_system_chromium


def find(axtree: str, role: str, name: str) -> str | None:
    """The BrowserGym id of the first element with this role and accessible name."""
    match = re.search(rf"\[([^\]]+)\] {role} '{re.escape(name)}'", axtree)
    return match.group(1) if match else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("start_url")
    parser.add_argument("--condition", default="Src-Exec")
    parser.add_argument("--regime", default="multiple")
    parser.add_argument("--max-steps", type=int, default=6)
    args = parser.parse_args()
    use_system_chromium()
    from browsergym.core.env import BrowserEnv
    from browsergym.core.task import OpenEndedTask
    from browsergym.utils.obs import flatten_axtree_to_str

    with (
        SkillShift() as skillshift,
        skillshift.episode(
            condition=args.condition,
            regime=args.regime,
            regime_params={"min_ms": 0, "max_ms": 0},
            tags={"method": "scripted-browsergym"},
        ) as episode,
    ):
        env = BrowserEnv(
            task_entrypoint=OpenEndedTask,
            task_kwargs={"start_url": args.start_url},
            headless=True,
            **episode.browsergym_kwargs(),
        )
        obs, _ = env.reset()
        steps, popups_closed = 0, 0
        while steps < args.max_steps and not obs["url"].rstrip("/").endswith("/products"):
            axtree = flatten_axtree_to_str(obs["axtree_object"])
            close = find(axtree, "button", "Close") if "dialog '" in axtree else None
            target = close or find(axtree, "link", "Products")
            skill = "close_popup" if close else "open_products"
            skillshift.skill_call(episode.id, skill)
            if target is None:
                skillshift.skill_failure(episode.id, skill, error="element not found")
                break
            obs, _, _, _, _ = env.step(f'click("{target}")')
            steps += 1
            popups_closed += bool(close)
            if obs["last_action_error"]:
                skillshift.skill_failure(episode.id, skill, error=obs["last_action_error"][:200])
        success = obs["url"].rstrip("/").endswith("/products")
        skillshift.task_result(episode.id, success=success, steps=steps)
        report = skillshift.report(episode.id)
        env.close()
        print(json.dumps({"success": success, "popups_closed": popups_closed, "report": report}))


if __name__ == "__main__":
    main()
