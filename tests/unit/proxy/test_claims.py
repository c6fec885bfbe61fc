"""Claimed flags are asked of the store once per run of an episode, and only once."""

from __future__ import annotations

from typing import Any

from proxy.claims import ClaimedFlags
from proxy.episode import EpisodeConfig, new_episode
from proxy.store import MemoryStore


class CountingStore(MemoryStore):
    """The embedded store, counting the claims it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    async def claim_flag(self, episode_id: str, flag: str, expires_at: int) -> bool:
        self.asked.append(flag)
        return await super().claim_flag(episode_id, flag, expires_at)


async def stored(store: MemoryStore, **changes: Any):  # type: ignore[no-untyped-def]
    episode = new_episode(EpisodeConfig(condition="Src-Exec")).model_copy(update=changes)
    await store.create_episode(episode.id, episode.model_dump(), episode.expires_at)
    return episode


async def test_a_flag_is_claimed_once_then_known() -> None:
    store = CountingStore()
    claims = ClaimedFlags(store)
    episode = await stored(store)
    assert await claims.claim(episode, "popup_once")
    assert not await claims.claim(episode, "popup_once")
    assert not await claims.claim(episode, "popup_once")
    assert await claims.claim(episode, "page:x")  # another flag: its own claim
    assert store.asked == ["popup_once", "page:x"]


async def test_another_process_claim_is_learnt_on_the_first_try() -> None:
    store = CountingStore()
    episode = await stored(store)
    assert await ClaimedFlags(store).claim(episode, "popup_once")
    elsewhere = ClaimedFlags(store)
    assert not await elsewhere.claim(episode, "popup_once")
    assert not await elsewhere.claim(episode, "popup_once")
    assert store.asked == ["popup_once", "popup_once"]


async def test_a_reset_or_a_new_episode_of_the_same_id_claims_again() -> None:
    store = CountingStore()
    claims = ClaimedFlags(store)
    episode = await stored(store)
    assert await claims.claim(episode, "popup_once")
    await store.reset_episode(episode.id)
    reset = episode.model_copy(update={"generation": episode.generation + 1})
    assert await claims.claim(reset, "popup_once")
    await store.delete_episode(episode.id)
    again = await stored(store, id=episode.id, created_at=episode.created_at + 1)
    assert await claims.claim(again, "popup_once")


async def test_only_the_most_recent_are_kept() -> None:
    store = CountingStore()
    claims = ClaimedFlags(store, limit=2)
    episode = await stored(store)
    for flag in ("a", "b", "c"):
        await claims.claim(episode, flag)
    await claims.claim(episode, "a")  # forgotten: asked again (and not claimed again)
    assert store.asked == ["a", "b", "c", "a"]
