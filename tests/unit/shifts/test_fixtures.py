"""Every shift on real saved pages of the benchmark's apps: aligned, deterministic, seeded."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from api.analysis.page_check import check_page
from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import shift_offline
from shifts.conditions import CONDITIONS
from shifts.references import EMPTY
from tests.helpers.fixtures import fixture_pages

PAGES = fixture_pages()
SEEDS = range(10)
# Saved pages come without their stylesheets and scripts: the tests take them to reference
# nothing beyond the page's own inline ones, the strongest drift a page allows (the proxy reads
# the real assets first; without them it drifts nothing, see test_locators).
ASSETS = EMPTY
PERCEPTUAL_SETS = ("benchmark", "extended")
EXPECTED_SITE = {"gitlab": "gitlab", "magento": "magento", "wordpress": "wordpress"}


def shifted(page: Path, condition: str, seed: int, perceptual: str = "benchmark") -> dict:  # type: ignore[type-arg]
    config = EpisodeConfig(condition=condition, seed=seed, perceptual=perceptual)
    return check_page(new_episode(config), "http://app.test/page", page.read_bytes(), assets=ASSETS)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name[:30])
def test_every_condition_and_seed_keeps_the_task_intact(page: Path) -> None:
    for perceptual in PERCEPTUAL_SETS:
        for condition in CONDITIONS:
            for seed in SEEDS:
                result = shifted(page, condition, seed, perceptual)
                assert result["violations"] == [], (condition, seed, result["violations"])
                assert result["site"] == EXPECTED_SITE[page.parent.name]


def render(page: Path, condition: str, seed: int) -> bytes:
    # The same episode: id and token fixed (the beacon key and nonces derive from them).
    episode = new_episode(EpisodeConfig(condition=condition, seed=seed), "fixed-id")
    episode = episode.model_copy(update={"token": "fixed-token"})
    return shift_offline(episode, "http://app.test/page", page.read_bytes(), assets=ASSETS)[
        1
    ].to_bytes()


SAME_SEED = [("Src-Perc", 3), ("Tgt-Perc", 3), ("Tgt", 1)]
# Renders every page in a fresh interpreter with another hash salt and prints the digests.
OTHER_PROCESS = """
import hashlib, json
from tests.unit.shifts.test_fixtures import PAGES, SAME_SEED, render
digests = {}
for page in PAGES:
    for condition, seed in SAME_SEED:
        rendered = render(page, condition, seed)
        digests[f"{page.name} {condition} {seed}"] = hashlib.sha256(rendered).hexdigest()
print(json.dumps(digests))
"""


@pytest.fixture(scope="module")
def other_process_digests() -> dict[str, str]:
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONHASHSEED": "4242", "PYTHONPATH": str(root)}
    result = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env=env,
        timeout=600,
    )
    digests: dict[str, str] = json.loads(result.stdout)
    return digests


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name[:30])
def test_same_seed_same_bytes_in_another_process(
    page: Path, other_process_digests: dict[str, str]
) -> None:
    """Determinism across processes: another interpreter (another hash salt) renders each page
    to the very same bytes for the same episode."""
    for condition, seed in SAME_SEED:
        digest = hashlib.sha256(render(page, condition, seed)).hexdigest()
        assert other_process_digests[f"{page.name} {condition} {seed}"] == digest, condition


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name[:30])
def test_other_seed_other_choices(page: Path) -> None:
    raw = page.read_bytes()
    for condition in ("Src-Perc", "Tgt-Perc"):
        assert len({render(page, condition, seed) for seed in range(4)}) > 1
    # Tgt is the site's target variant: the same for every episode, whatever the seed.
    assert render(page, "Tgt", 1) == render(page, "Tgt", 2) != raw
    assert render(page, "Src", 5) == raw


def test_the_benchmark_drift_changes_a_third_of_each_pages_locators() -> None:
    """The benchmark's set only drifts locators; on every saved page at least 30% of the
    non-protected interactive elements get another id, class, hook or element path."""
    for page in PAGES:
        for seed in range(5):
            notes = shifted(page, "Src-Perc", seed)["shifts"]
            assert set(notes) == {"locator_drift"}, page.name
            assert notes["locator_drift"]["share"] >= 0.3, (page.name, seed, notes)


def test_the_extended_set_relabels_and_restyles_too() -> None:
    for page in PAGES:
        notes = shifted(page, "Src-Perc", 0, "extended")["shifts"]
        assert {"locator_drift", "restyle"} <= set(notes), (page.name, notes)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name[:30])
def test_a_shift_leaves_no_reference_cycle(page: Path) -> None:
    """What a shift makes is freed by reference counting as it ends. One reference cycle
    among the shift's objects (a bound method of an object kept on that object did it) holds
    the page's whole tree, and every node a question was asked of, until Python's next
    collection, which then pays for them: 1 ms of a 20 ms first load of GitLab's project
    page. Each condition's second shift of the page (the first may fill caches of its own)."""
    raw = page.read_bytes()
    gc.collect()
    gc.disable()
    gc.freeze()  # (what the test process holds, out of each collection's sight: no cycle)
    try:
        for perceptual in PERCEPTUAL_SETS:
            for condition in CONDITIONS:
                config = EpisodeConfig(condition=condition, seed=3, perceptual=perceptual)
                episode = new_episode(config)
                for _ in range(2):
                    gc.collect()
                    shift_offline(episode, "http://app.test/page", raw, assets=ASSETS)
                assert gc.collect() == 0, (condition, perceptual)
    finally:
        gc.unfreeze()
        gc.enable()
