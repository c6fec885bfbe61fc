"""Real saved pages of GitLab, Magento and WordPress, kept beside the repository (not in it).

Their directory is SKILLSHIFT_FIXTURES_DIR, else the `shared/fixtures` directory next to the
repository's own directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.processes import REPO


def fixtures_dir() -> Path:
    configured = os.environ.get("SKILLSHIFT_FIXTURES_DIR")
    return Path(configured) if configured else REPO.parent / "shared" / "fixtures"


def fixture_pages() -> list[Path]:
    pages = sorted(fixtures_dir().glob("*/*.html"))
    if not pages:
        raise RuntimeError(
            f"no fixture pages under {fixtures_dir()}; set SKILLSHIFT_FIXTURES_DIR to the "
            "directory holding gitlab/, magento/ and wordpress/ saved pages"
        )
    return pages
