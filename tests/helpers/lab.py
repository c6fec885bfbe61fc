"""The lab of real apps (deploy/lab/*.sh, deploy/wordpress/wordpress.sh): start one on free
ports for as long as needed, the oracle on its pages, and its scripted task under a condition."""

from __future__ import annotations

import importlib
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.ports import free_port
from tests.helpers.processes import REPO

LAB = REPO / "deploy" / "lab"


@dataclass(frozen=True)
class LabApp:
    """One app of the lab: the script that brings it up (and its arguments), and its pages and
    scripted task (`tests/helpers/lab_<name>.py`)."""

    name: str
    script: Path
    args: tuple[str, ...] = ()

    @property
    def module(self) -> Any:
        return importlib.import_module(f"tests.helpers.lab_{self.name}")

    @property
    def pages(self) -> tuple[str, ...]:
        return tuple(self.module.PAGES)

    @property
    def task(self) -> Callable[..., None]:
        return self.module.task  # type: ignore[no-any-return]


APPS = {
    app.name: app
    for app in (
        LabApp("wordpress", REPO / "deploy" / "wordpress" / "wordpress.sh"),
        LabApp("mediawiki", LAB / "mediawiki.sh"),
        LabApp("wagtail", LAB / "wagtail.sh"),
        LabApp("react", LAB / "spa.sh", ("--app", "react")),
        LabApp("vue", LAB / "spa.sh", ("--app", "vue")),
    )
}


def key_values(text: str) -> dict[str, str]:
    """The `KEY=value` lines of a lab script's output (its env file holds the same)."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


@contextmanager
def lab_app(
    script: Path, state: Path, *extra: str, timeout: float = 1200
) -> Iterator[dict[str, str]]:
    """Bring a lab app up in `state`; yields its KEY=value env; stops it after."""
    args = [
        *extra,
        "--dir",
        str(state),
        "--port",
        str(free_port()),
        "--target-port",
        str(free_port()),
    ]
    result = subprocess.run(
        [str(script), "up", *args], capture_output=True, text=True, timeout=timeout
    )
    try:
        if result.returncode != 0:
            raise RuntimeError(f"{script.name} up failed:\n{result.stdout}\n{result.stderr}")
        env = key_values(result.stdout)
        env["ENV_FILE"] = str(state / "env")
        yield env
    finally:
        subprocess.run([str(script), "down", *args], capture_output=True, timeout=120, check=True)


def popups_already_handled(page: Any) -> int:
    """What the tasks' own `dismiss_popups` calls do under `task_under`: nothing, since its
    locator handler closes a popup whenever one is up before an action."""
    return 0


def oracle(
    api: str, env: dict[str, str], page: str, condition: str, seeds: list[int], **options: Any
) -> dict[str, Any]:
    """The browser oracle (POST /checks/browser) on one lab page: the source variant against
    its shifted versions; `Tgt*` conditions route to the lab's target variant."""
    import httpx  # late: the lab's scripts also use this module without httpx

    body = {
        "url": env["LAB_URL"] + page,
        "condition": condition,
        "seeds": seeds,
        "targets": {env["LAB_URL"]: env["LAB_TARGET_URL"]},
        **options,
    }
    response = httpx.post(f"{api}/checks/browser", json=body, timeout=600)
    if response.status_code != 200:
        raise RuntimeError(f"the oracle answered {response.status_code}: {response.text}")
    result = dict(response.json())
    if result["status"] == "unchecked":  # a page that did not load proves nothing
        raise RuntimeError(f"the oracle could not check {body['url']}: {result['reason']}")
    return result


def task_under(
    browser: Any, api: str, app: LabApp, env: dict[str, str], condition: str, seed: int = 0
) -> dict[str, Any]:
    """The app's scripted task in a fresh browser context bound to a new episode under
    `condition` (popups: every navigation, no delay). Returns the outcome and what it met."""
    import httpx
    from playwright.sync_api import expect

    config = {
        "condition": condition,
        "seed": seed,
        "regime": "multiple",
        "regime_params": {"min_ms": 0, "max_ms": 0},
        "targets": {env["LAB_URL"]: env["LAB_TARGET_URL"]},
        "tags": {"lab": app.name},
    }
    created = httpx.post(f"{api}/episodes", json=config, timeout=10)
    created.raise_for_status()
    episode = created.json()
    context = browser.new_context(
        proxy=episode["proxy"], viewport={"width": 1280, "height": 900}, ignore_https_errors=True
    )
    context.set_default_timeout(15_000)
    # The tasks' expectations wait as long as their actions: a page met for the first time is
    # learnt before it is served (seconds on a busy machine), and an expectation after a click
    # that opens one waits for that, not for a fixed 5 s.
    expect.set_options(timeout=15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # A popup can appear after the task last looked (on a page its own click opened): close
    # it, as an agent that sees it would, whenever it is up before an action. (Escape: the
    # handler must not click, or the task's own clicks would wait on it.)
    page.add_locator_handler(
        page.locator("[role=dialog][aria-modal=true]:visible"),
        lambda: page.keyboard.press("Escape"),
    )
    try:
        app.task(page, env["LAB_URL"], env, popups_already_handled)
        outcome: dict[str, Any] = {"success": True, "error": None}
    except Exception as failure:  # a failed task is a result, reported with its reason
        outcome = {"success": False, "error": f"{type(failure).__name__}: {failure}"[:400]}
    finally:
        context.close()
    events = httpx.get(f"{api}/episodes/{episode['id']}/events?limit=1000", timeout=10).json()
    httpx.delete(f"{api}/episodes/{episode['id']}", timeout=10)
    kinds = [event["type"] for event in events["events"]]
    return {
        **outcome,
        "condition": condition,
        "page_errors": errors,
        "pages_served": kinds.count("page_served"),
        "popups_shown": kinds.count("popup_shown"),
    }
