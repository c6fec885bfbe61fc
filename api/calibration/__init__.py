"""Skill calibration: reference skills recorded against Src, run under every condition."""

# Named here so `--help` can list them without importing Playwright (a test keeps this list
# equal to the skills api/calibration/wordpress.py defines).
WORDPRESS_SKILLS = (
    "log_in",
    "create_post",
    "add_category",
    "approve_comment",
    "search_post",
    "edit_post_title",
)

# The calibration table's columns: every condition, and every regime of the -Exec ones.
COLUMNS: list[tuple[str, str | None]] = [
    ("Src", None),
    ("Src-Perc", None),
    ("Src-Exec", "once"),
    ("Src-Exec", "multiple"),
    ("Src-Exec", "random"),
    ("Tgt", None),
    ("Tgt-Perc", None),
    ("Tgt-Exec", "once"),
    ("Tgt-Exec", "multiple"),
    ("Tgt-Exec", "random"),
]


def column_name(condition: str, regime: str | None) -> str:
    return f"{condition}/{regime}" if regime else condition
