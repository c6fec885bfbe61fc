"""Every shift on real saved pages of the benchmark's apps: aligned, deterministic, seeded."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.check import check_page
from proxy.episode import EpisodeConfig, new_episode
from proxy.pipeline import shift_offline
from shifts.conditions import CONDITIONS
from tests.helpers.fixtures import fixture_pages

PAGES = fixture_pages()
SEEDS = range(10)
EXPECTED_SITE = {"gitlab": "gitlab", "magento": "magento", "wordpress": "wordpress"}


def shifted(page: Path, condition: str, seed: int) -> dict:  # type: ignore[type-arg]
    episode = new_episode(EpisodeConfig(condition=condition, seed=seed))
    return check_page(episode, "http://app.test/page", page.read_bytes())


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name[:30])
def test_every_condition_and_seed_keeps_the_task_intact(page: Path) -> None:
    for condition in CONDITIONS:
        for seed in SEEDS:
            result = shifted(page, condition, seed)
            assert result["violations"] == [], (condition, seed, result["violations"])
            assert result["site"] == EXPECTED_SITE[page.parent.name]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name[:30])
def test_same_seed_same_bytes_other_seed_other_choices(page: Path) -> None:
    raw = page.read_bytes()

    def render(condition: str, seed: int) -> bytes:
        # The same episode: id and token fixed (the beacon key and nonces derive from them).
        episode = new_episode(EpisodeConfig(condition=condition, seed=seed), "fixed-id")
        episode = episode.model_copy(update={"token": "fixed-token"})
        return shift_offline(episode, "http://app.test/page", raw)[1].to_bytes()

    for condition in ("Src-Perc", "Tgt-Perc"):
        assert render(condition, 3) == render(condition, 3)
        assert len({render(condition, seed) for seed in range(4)}) > 1
    # Tgt is the site's target variant: the same for every episode, whatever the seed.
    assert render("Tgt", 1) == render("Tgt", 2) != raw
    assert render("Src", 5) == raw


def test_perceptual_shift_changes_each_page_visibly() -> None:
    for page in PAGES:
        notes = shifted(page, "Src-Perc", 0)["shifts"]
        assert notes.get("restyle"), page.name
        changed = sum(
            value for note in notes.values() for value in note.values() if isinstance(value, int)
        )
        assert changed > 6, (page.name, notes)
