"""The distributions as users install them (tests/integration/test_wheel.py): a wheel built
from a copy of the checkout, installed into a really fresh venv (no --system-site-packages,
nothing from the checkout).

Building and installing take most of a minute, so ./scripts/test does it ahead, in the
background while the first tests run (`python -m tests.helpers.wheels`), into a directory of
its own run, outside the checkout, named by SKILLSHIFT_WHEEL_VENVS; the tests then take the
venvs from there, waiting for a build under way by the same lock, or build them there
themselves if nothing did. Without that variable each test run builds its own, as before.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.processes import REPO

# What a checkout holds that a user's copy of the sources does not.
NOT_SOURCES = shutil.ignore_patterns(
    ".git",
    ".venv*",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
)
# Each distribution: the directory its pyproject.toml is in.
SOURCES = {"proxy": REPO, "client": REPO / "clients" / "python"}
# As the README installs them: the proxy with the `browser` extra (`serve` learns in a browser
# by default), the client alone.
EXTRAS = {"proxy": "[browser]", "client": ""}
AHEAD = "SKILLSHIFT_WHEEL_VENVS"


def run(*args: str | Path, cwd: Path, timeout: float = 300) -> str:
    # No PYTHONPATH: nothing may come from the checkout or the test's own venv.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    result = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def wheel(source: Path, out: Path) -> Path:
    """`pip wheel --no-deps` on a copy of `source`: the build never writes into the checkout."""
    copy = out / "src"
    shutil.copytree(source, copy, ignore=NOT_SOURCES)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", copy, "-w", out, cwd=out)
    (built,) = out.glob("*.whl")
    return built


def fresh_venv(path: Path, *wheels: Path | str) -> Path:
    """A venv with nothing in it but the wheels and their dependencies (pip may use its cache)."""
    run(sys.executable, "-m", "venv", path, cwd=path.parent)
    run(path / "bin" / "python", "-m", "pip", "install", "-q", *wheels, cwd=path.parent)
    return path


def build(name: str, where: Path) -> tuple[Path, Path]:
    """The wheel of distribution `name` and a fresh venv with it, both under `where` (new)."""
    where.mkdir(parents=True)
    (where / "wheel").mkdir()
    built = wheel(SOURCES[name], where / "wheel")
    return built, fresh_venv(where / "venv", f"{built}{EXTRAS[name]}")


def built_and_installed(name: str, scratch: Path) -> tuple[Path, Path]:
    """The wheel of distribution `name` and its fresh venv: built ahead in SKILLSHIFT_WHEEL_VENVS
    when it names a directory (waiting for a build under way there, or building there now),
    else built under `scratch`."""
    ahead = os.environ.get(AHEAD)
    if not ahead:
        return build(name, scratch / name)
    where = Path(ahead) / name
    where.parent.mkdir(parents=True, exist_ok=True)
    with (Path(ahead) / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (where / ".ready").exists():
            shutil.rmtree(where, ignore_errors=True)  # a build that did not finish
            build(name, where)
            (where / ".ready").touch()
    (built,) = (where / "wheel").glob("*.whl")
    return built, where / "venv"


if __name__ == "__main__":
    if not os.environ.get(AHEAD):
        sys.exit(f"{AHEAD} names the directory to build in")
    for name in SOURCES:
        print(*built_and_installed(name, Path()))  # noqa: T201 - what was built, for the log
