"""Episode stores: MemoryStore (embedded default) and RedisStore (shared, for many processes)."""

from proxy.store.base import EpisodeStore, StoreUnavailable
from proxy.store.memory import MemoryStore
from proxy.store.redis import RedisStore


def open_store(redis_url: str | None, prefix: str = "skillshift:") -> EpisodeStore:
    """RedisStore when a URL is given, else the embedded MemoryStore."""
    return RedisStore(redis_url, prefix=prefix) if redis_url else MemoryStore()


__all__ = ["EpisodeStore", "MemoryStore", "RedisStore", "StoreUnavailable", "open_store"]
