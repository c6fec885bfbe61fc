"""Compiled parts of the shifts: per-element work a first load does thousands of times.

Each is the C twin of a Python function that stays the definition: the C one returns None where
it would have to guess, and the caller then asks the Python one, so a page is shifted the same
with or without it (the tests compare the two on every saved page and on generated ones).

The C source is built on first import with the machine's C compiler, against this Python and
the installed lxml (whose element struct and libxml2 headers it reads), into `build/` beside it
under a key of all three: a changed source, Python or lxml builds anew, and processes that build
at once each write their own file and rename it into place. `scripts/bootstrap` builds it ahead.
Without a compiler the Python functions do the work, slower, and `why_not` says why.

    python -m shifts.native    builds it if needed, and says where or why not
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import lxml
from lxml import etree

log = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("signature.c")
NAME = "_signature"  # (its `PyInit__signature`)


def _key() -> str:
    """What the built module depends on: its source, this Python, the installed lxml."""
    material = b"\0".join(
        (
            SOURCE.read_bytes(),
            sys.version.encode(),
            repr(etree.LXML_VERSION).encode(),
            str(Path(lxml.__file__).resolve()).encode(),
        )
    )
    return hashlib.sha256(material).hexdigest()[:16]


def _built_path() -> Path:
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return SOURCE.parent / "build" / _key() / f"{NAME}{suffix}"


def build(path: Path) -> None:
    """Compile the source into `path` (written aside, then renamed: atomic for other readers).
    Raises OSError or CalledProcessError with the compiler's output."""
    path.parent.mkdir(parents=True, exist_ok=True)
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    # (lxml's own headers, and libxml2's that it ships: its element struct is read in C.)
    includes = [sysconfig.get_paths()["include"], *lxml.get_include()]  # type: ignore[attr-defined]
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".so.part")
    os.close(descriptor)
    try:
        subprocess.run(
            [
                *compiler.split(),
                "-O2",
                "-shared",
                "-fPIC",
                "-Wall",
                *(f"-I{directory}" for directory in includes),
                str(SOURCE),
                "-o",
                temporary,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _load() -> tuple[ModuleType | None, str | None]:
    """The built module (built first if need be), or None and why not."""
    try:
        path = _built_path()
        if not path.exists():
            build(path)
        loader = importlib.machinery.ExtensionFileLoader(f"{__name__}.{NAME}", str(path))
        spec = importlib.util.spec_from_file_location(loader.name, path, loader=loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        return module, None
    except subprocess.CalledProcessError as error:
        return None, f"the C compiler failed: {(error.stderr or error.stdout).strip()[-2000:]}"
    except (OSError, ImportError) as error:
        return None, f"{type(error).__name__}: {error}"


_module, why_not = _load()
if _module is None:
    log.warning("skillshift: compiled shifts unavailable, the Python ones run (%s)", why_not)

# `_module.signature(element) -> str | None`: `locators._signature(element)` for an element
# with no keyed names, or None where only the Python reads it.
signature: Callable[[etree._Element], str | None] | None = (
    None if _module is None else _module.signature
)


def main() -> None:
    """Say where the compiled shifts are, or why they are not (exit 1)."""
    if _module is None:
        raise SystemExit(f"compiled shifts unavailable: {why_not}")
    sys.stdout.write(f"compiled shifts: {_module.__file__}\n")
