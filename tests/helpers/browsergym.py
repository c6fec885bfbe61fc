"""BrowserGym's own venv (it pins its own Playwright), built once and kept in .venv-browsergym:
by the test of the BrowserGym example when it gets there first, else ahead of it, in the
background, by ./scripts/test (`python -m tests.helpers.browsergym`), which takes the build
off the suite's critical path. Either waits for the other's build by the same lock."""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import sys
from pathlib import Path

from tests.helpers.processes import REPO

VENV = REPO / ".venv-browsergym"
# The example imports the client as an agent's environment would: installed from clients/python.
REQUIREMENTS = ["browsergym-core==0.14.3", str(REPO / "clients" / "python")]
LOCK = REPO / ".cache" / "browsergym-venv.lock"  # not in the venv: --clear would remove it


def browsergym_python() -> Path:
    """The venv's Python, once the venv is built (here, or by whoever holds the lock)."""
    python = VENV / "bin" / "python"
    # Built again when what it needs changes (the name of its stamp says what it holds).
    wanted = hashlib.sha256("\n".join(REQUIREMENTS).encode()).hexdigest()[:12]
    ready = VENV / f".ready-{wanted}"
    if ready.exists():
        return python
    LOCK.parent.mkdir(exist_ok=True)
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not ready.exists():  # a half-built venv (no stamp) is built again from scratch
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
            subprocess.run(
                [str(python), "-m", "pip", "install", "-q", *REQUIREMENTS],
                check=True,
                timeout=900,
            )
            ready.touch()
    return python


if __name__ == "__main__":
    print(browsergym_python())  # noqa: T201 - where it is, for the log
