"""The lab of real apps (deploy/lab/*.sh, deploy/wordpress/wordpress.sh): start one on free
ports for as long as needed, and what every scripted task needs under every condition."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers.ports import free_port
from tests.helpers.processes import REPO

LAB = REPO / "deploy" / "lab"


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
        env = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
        env["ENV_FILE"] = str(state / "env")
        yield env
    finally:
        subprocess.run([str(script), "down", *args], capture_output=True, timeout=120, check=True)


def dismiss_popups(page: Any) -> int:
    """Close every blocking dialog the execution shift put up (by its labelled close button),
    as an agent that sees the popup would. Returns how many it closed."""
    closed = 0
    # Apps keep hidden modal dialogs of their own in the page (Wagtail's admin): only a
    # visible one blocks.
    dialogs = page.locator("[role=dialog][aria-modal=true]:visible")
    while dialogs.count():
        dialogs.first.get_by_role("button", name="Close").click()
        closed += 1
    return closed
