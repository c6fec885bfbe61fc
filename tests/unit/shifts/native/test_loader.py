"""Building and loading the compiled shifts (`shifts.native`): a build lands whole or not at
all, under a key of what it was built from, and a machine that cannot build says why and keeps
the Python functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from shifts import native


def test_the_modules_are_built_under_the_key_of_their_source(tmp_path: Path) -> None:
    for name, source in native.SOURCES.items():
        path = native.built_path(name)
        assert path.exists() and path.name.startswith(f"{name}.")
        # Another source (or Python, or lxml) is another key: it is built anew, not reused.
        changed = tmp_path / source
        changed.write_bytes((native.HERE / source).read_bytes() + b"\n/* changed */\n")
        assert native._key(changed) != native._key(native.HERE / source)


def test_a_build_is_renamed_into_place_and_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "key" / "_walks.so"
    monkeypatch.setattr(native, "built_path", lambda name: target)
    module, why_not = native._load("_walks")
    assert why_not is None and module is not None
    assert module.interactive_elements is not None
    assert [p.name for p in target.parent.iterdir()] == ["_walks.so"]  # (no part left behind)


def test_a_failing_compiler_is_said_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "key" / "_signature.so"
    monkeypatch.setattr(native, "built_path", lambda name: target)
    monkeypatch.setenv("CC", "cc -DSKILLSHIFT_BROKEN=1 -include /nonexistent/header.h")
    module, why_not = native._load("_signature")
    assert module is None
    assert why_not is not None and "signature.c: the C compiler failed" in why_not
    assert "/nonexistent/header.h" in why_not  # (the compiler's own words)
    assert list(target.parent.iterdir()) == []


def test_no_compiler_at_all_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "built_path", lambda name: tmp_path / "key" / f"{name}.so")
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    module, why_not = native._load("_walks")
    assert module is None and why_not is not None
    assert why_not.startswith("walks.c: FileNotFoundError")
