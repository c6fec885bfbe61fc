"""The calibration's names: `--help` lists them without importing the skills (Playwright)."""

from __future__ import annotations

from api.calibration import COLUMNS, WORDPRESS_SKILLS, column_name
from api.calibration.wordpress import SKILLS
from api.cli import build_parser
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
