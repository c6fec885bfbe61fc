"""The calibration's names: `--help` lists them without importing the skills (Playwright)."""

from __future__ import annotations

import pytest

from api.calibration import COLUMNS, WORDPRESS_SKILLS, column_name
from api.calibration.wordpress import SKILLS
from api.service.cli import build_parser
from shifts.conditions import CONDITIONS


def test_the_listed_skills_are_the_defined_ones() -> None:
    assert tuple(skill.name for skill in SKILLS) == WORDPRESS_SKILLS


def test_every_condition_has_a_column_and_exec_every_regime() -> None:
    names = [column_name(*column) for column in COLUMNS]
    assert {name.split("/")[0] for name in names} == set(CONDITIONS)
    assert [n for n in names if n.startswith("Src-Exec")] == [
        "Src-Exec/once",
        "Src-Exec/multiple",
        "Src-Exec/random",
    ]


def test_an_unknown_skill_is_refused_with_the_known_ones() -> None:
    parser = build_parser()
    try:
        parser.parse_args(["calibrate", "--wordpress-env", "x", "--skill", "nope"])
    except SystemExit as exit_:
        assert exit_.code == 2
    else:
        raise AssertionError("an unknown skill was accepted")
    help_text = parser._subparsers._group_actions[0].choices["calibrate"].format_help()  # type: ignore[union-attr]
    assert all(name in help_text for name in WORDPRESS_SKILLS)


def test_every_command_names_the_api_alike(capsys: pytest.CaptureFixture[str]) -> None:
    """`--api-url` everywhere; calibrate's old `--api` still works, hidden and with a warning."""
    parser = build_parser()
    for command in (
        ["check", "page.html"],
        ["report"],
        ["episodes", "list"],
        ["episodes", "export", "e1"],
        ["calibrate", "--wordpress-env", "env"],
    ):
        assert parser.parse_args([*command, "--api-url", "http://api:1"]).api_url == "http://api:1"
    old = parser.parse_args(["calibrate", "--wordpress-env", "env", "--api", "http://old:2"])
    assert old.api_url == "http://old:2"
    assert capsys.readouterr().err == "skillshift-proxy: --api is deprecated; use --api-url\n"
    help_text = parser._subparsers._group_actions[0].choices["calibrate"].format_help()  # type: ignore[union-attr]
    assert "--api-url" in help_text and "--api " not in help_text
    # --json is a flag that prints JSON elsewhere; calibrate's file is --output, as for export.
    assert parser.parse_args(["calibrate", "--wordpress-env", "env", "-o", "r.json"]).output == (
        "r.json"
    )
    old = parser.parse_args(["calibrate", "--wordpress-env", "env", "--json", "r.json"])
    assert old.output == "r.json"
    assert capsys.readouterr().err == "skillshift-proxy: --json is deprecated; use --output\n"
    assert "--json" not in help_text and "--output FILE" in help_text
