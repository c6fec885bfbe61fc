"""Building and loading the compiled shifts (`shifts.native`): a build lands whole or not at
all, under a key of what it was built from, and a machine that cannot build says why and keeps
the Python functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from shifts import native


def test_the_modules_are_built_under_the_key_of_their_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, source in native.SOURCES.items():
        path = native.built_path(name)
        assert path.exists() and path.name.startswith(f"{name}.")
        # Another source (or Python, or lxml, or compiler) is another key: built anew.
        changed = tmp_path / source
        changed.write_bytes((native.HERE / source).read_bytes() + b"\n/* changed */\n")
        key = native._key(native.HERE / source)
        assert native._key(changed) != key
        monkeypatch.setenv("CC", "cc -O3")
        assert native._key(native.HERE / source) != key
        monkeypatch.delenv("CC")


def test_a_build_is_renamed_into_place_and_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "key" / "_walks.so"
    monkeypatch.setattr(native, "built_path", lambda name: target)
    module, why_not = native._load("_walks")
    assert why_not is None and module is not None
    assert module.interactive_elements is not None
    assert [p.name for p in target.parent.iterdir()] == ["_walks.so"]  # (no part left behind)
    # Readable by every user: an image builds as root and serves as another.
    assert target.stat().st_mode & 0o555 == 0o555


def test_a_build_that_does_not_load_is_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "key" / "_signature.so"
    target.parent.mkdir()
    target.write_bytes(b"not a shared object")
    monkeypatch.setattr(native, "built_path", lambda name: target)
    module, why_not = native._load("_signature")
    assert why_not is None and module is not None and module.signature is not None


def test_a_compiler_that_hangs_is_given_up_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "built_path", lambda name: tmp_path / "key" / f"{name}.so")
    monkeypatch.setattr(native, "BUILD_SECONDS", 1)
    monkeypatch.setenv("CC", "sh -c 'exec sleep 600' sh")
    module, why_not = native._load("_walks")
    assert module is None and why_not == "walks.c: the C compiler took more than 1 s"
    assert list((tmp_path / "key").iterdir()) == []


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


def test_either_asks_the_c_twin_first_and_the_python_where_it_declines() -> None:
    asked: list[str] = []

    def read(x: int) -> int:
        asked.append("python")
        return x + 1

    def declines(x: int) -> None:
        asked.append("c")

    assert native.either(lambda x: x * 10, read, 2) == 20 and asked == []
    assert native.either(declines, read, 2) == 3 and asked == ["c", "python"]
    assert native.either(None, read, 2) == 3  # (not built)
