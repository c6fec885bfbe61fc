"""One digest of what the shifts do to every saved page, to prove a refactoring changes nothing.

    .venv/bin/python -m tools.behaviour_hash [--seeds 3] [--json FILE]

Shifts every saved page of tests/fixtures under every condition, both perceptual sets, each
execution regime of the `-Exec` conditions, `--seeds` seeds, and two states of what the page's
assets reference (none, as a saved page has; unknown, as before a first read), in a fixed
episode (id and token fixed: nonces and the beacon key derive from them). Prints the digest of
every page's shifted bytes and alignment report, and one digest over all of them: equal before
and after a change means the change is neutral on these pages. `--json` writes every case's
digest, to find which cases a non-neutral change moved.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from api.analysis.page_check import check_page
from proxy.episode import Episode, EpisodeConfig, new_episode
from proxy.page_shift import shift_offline
from shifts.conditions import CONDITIONS
from shifts.references import EMPTY, AssetRefs

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
PERCEPTUAL_SETS = ("benchmark", "extended")
REGIMES = ("once", "multiple", "random")
ASSET_STATES: dict[str, AssetRefs | None] = {"none": EMPTY, "unknown": None}
URL = "http://app.test/page"


def cases(seeds: int) -> Iterator[tuple[str, EpisodeConfig, str]]:
    """Every (label, episode config, asset state) the digest covers, in a fixed order."""
    for condition in CONDITIONS:
        regimes = REGIMES if condition.endswith("-Exec") else ("once",)
        sets = PERCEPTUAL_SETS if condition.endswith("-Perc") else ("benchmark",)
        for perceptual in sets:
            for regime in regimes:
                for seed in range(seeds):
                    for state in ASSET_STATES:
                        config = EpisodeConfig(
                            condition=condition, perceptual=perceptual, regime=regime, seed=seed
                        )
                        label = f"{condition} {perceptual} {regime} seed={seed} assets={state}"
                        yield label, config, state


def fixed_episode(config: EpisodeConfig) -> Episode:
    episode = new_episode(config, "fixed-id")
    return episode.model_copy(update={"token": "fixed-token"})


def case_digest(page: bytes, config: EpisodeConfig, state: str) -> str:
    episode = fixed_episode(config)
    assets = ASSET_STATES[state]
    shifted = shift_offline(episode, URL, page, assets=assets)[1].to_bytes()
    report = check_page(episode, URL, page, assets=assets)
    digest = hashlib.sha256(shifted)
    digest.update(json.dumps(report, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per case (default 3)")
    parser.add_argument("--json", type=Path, help="write every case's digest to this file")
    args = parser.parse_args(argv)
    pages = sorted(FIXTURES.glob("*/*.html"))
    if not pages:
        parser.error(f"no saved pages under {FIXTURES}")
    everything = hashlib.sha256()
    by_case: dict[str, str] = {}
    for path in pages:
        name = f"{path.parent.name}/{path.name}"
        page_hash = hashlib.sha256()
        for label, config, state in cases(args.seeds):
            digest = case_digest(path.read_bytes(), config, state)
            by_case[f"{name} {label}"] = digest
            page_hash.update(digest.encode())
        everything.update(page_hash.digest())
        sys.stdout.write(f"{page_hash.hexdigest()[:16]}  {name}\n")
        sys.stdout.flush()
    sys.stdout.write(f"{everything.hexdigest()}  all {len(pages)} pages, {len(by_case)} cases\n")
    if args.json:
        args.json.write_text(json.dumps(by_case, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
