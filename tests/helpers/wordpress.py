"""The lab WordPress (deploy/wordpress/wordpress.sh) on free ports, up for as long as needed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.lab import APPS, lab_app


@contextmanager
def wordpress_lab(state: Path) -> Iterator[dict[str, str]]:
    """Bring the lab up in `state`; yields its env (URLs, DB socket, ENV_FILE); stops it after."""
    with lab_app(APPS["wordpress"].script, state, timeout=600) as env:
        yield env
