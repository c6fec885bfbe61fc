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
CLIENT = REPO / "clients" / "python"
# The examples import the client as an agent's environment would: installed from clients/python.
REQUIREMENTS = ["browsergym-core==0.14.3", str(CLIENT)]
LOCK = REPO / ".cache" / "browsergym-venv.lock"  # not in the venv: --clear would remove it


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def _client_code() -> bytes:
    files = sorted([*CLIENT.rglob("*.py"), CLIENT / "pyproject.toml"])
    return b"".join(path.read_bytes() for path in files)


def browsergym_python() -> Path:
    """The venv's Python, once the venv is built (here, or by whoever holds the lock).

    Built again when what it holds changes; the name of each stamp says what: the requirements
    (a new venv), and the client's code, which pip copied in (the client installed again)."""
    python = VENV / "bin" / "python"
    ready = VENV / f".ready-{_digest('\n'.join(REQUIREMENTS).encode())}"
    client = VENV / f".client-{_digest(_client_code())}"
    if ready.exists() and client.exists():
        return python
    LOCK.parent.mkdir(exist_ok=True)
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not ready.exists():  # a half-built venv (no stamp) is built again from scratch
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
            pip(python, *REQUIREMENTS)
            ready.touch()
        elif not client.exists():
            pip(python, "--force-reinstall", "--no-deps", str(CLIENT))
        for stale in VENV.glob(".client-*"):
            stale.unlink()
        client.touch()
    return python


def pip(python: Path, *args: str) -> None:
    subprocess.run([str(python), "-m", "pip", "install", "-q", *args], check=True, timeout=900)


if __name__ == "__main__":
    print(browsergym_python())  # noqa: T201 - where it is, for the log
