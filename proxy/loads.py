"""The episode's page loads, counted in the store: every navigation gets the next index, which
the execution regimes, the recording and replay key on."""

from __future__ import annotations

from proxy.episode import Episode
from proxy.store import EpisodeStore

LOADS = "loads"  # the store counter


class EpisodeGone(LookupError):
    """The episode was deleted or expired while one of its requests was in flight."""


async def next_load(store: EpisodeStore, episode: Episode) -> int:
    """The episode's next page load index (1, 2, ...), counted in the store so every replica
    agrees."""
    load_index = await store.incr_counter(episode.id, LOADS, episode.expires_at)
    if not load_index:  # deleted (or expired) since the request was bound
        raise EpisodeGone(episode.id)
    return load_index
