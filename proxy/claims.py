"""Flags an episode claims in the store (`once`'s popup, the page records its loads used),
remembered once claimed: a flag stays claimed until the episode is reset, so the loads after
the first need no store call to learn it."""

from __future__ import annotations

from proxy.episode import Episode
from proxy.recent import Recent
from proxy.store import EpisodeStore

RECENT_FLAGS = 16384  # a few per episode: the last few thousand episodes'


class ClaimedFlags:
    """The flags this process knows are claimed, per run of an episode (a reset starts another
    run, a deleted episode's id may name a new one). Another replica's claim is learnt on this
    process's first try."""

    def __init__(self, store: EpisodeStore, limit: int = RECENT_FLAGS) -> None:
        self.store = store
        self._claimed: Recent[tuple[str, float, int, str], bool] = Recent(limit)

    async def claim(self, episode: Episode, flag: str) -> bool:
        """Whether this call claimed `flag` (False: it was claimed before, here or elsewhere)."""
        run = (episode.id, episode.created_at, episode.generation, flag)
        if self._claimed.recall(run):
            return False
        claimed = await self.store.claim_flag(episode.id, flag, episode.expires_at)
        self._claimed.keep(run, True)
        return claimed
