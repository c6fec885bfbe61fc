"""The lab WordPress (deploy/wordpress/wordpress.sh) on free ports, up for as long as needed."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.ports import free_port
from tests.helpers.processes import REPO

SCRIPT = REPO / "deploy" / "wordpress" / "wordpress.sh"


@contextmanager
def wordpress_lab(state: Path) -> Iterator[dict[str, str]]:
    """Bring the lab up in `state`; yields its env (URLs, DB socket, ENV_FILE); stops it after."""
    args = ["--dir", str(state), "--port", str(free_port()), "--target-port", str(free_port())]
    result = subprocess.run([str(SCRIPT), "up", *args], capture_output=True, text=True, timeout=600)
    try:
        if result.returncode != 0:
            raise RuntimeError(f"wordpress.sh up failed:\n{result.stdout}\n{result.stderr}")
        env = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
        env["ENV_FILE"] = str(state / "env")
        yield env
    finally:
        subprocess.run([str(SCRIPT), "down", *args], capture_output=True, timeout=120, check=True)
