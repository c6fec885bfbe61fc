"""The Redis stores' errors, against a real redis-server: they go to the log and to /health,
which answers without the API token, so they never show the URL's password."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis as sync_redis

from proxy.knowledge.store import KnowledgeStoreUnavailable, RedisKnowledge
from proxy.store.base import StoreUnavailable, without_password
from proxy.store.redis import RedisStore
from tests.helpers.processes import RedisProcess


def test_a_password_in_the_url_is_left_out_of_what_is_shown() -> None:
    assert without_password("redis://:s3cret@h:6379/0") == "redis://:***@h:6379/0"
    assert without_password("rediss://me:s3cret@h/1") == "rediss://me:***@h/1"
    assert without_password("redis://h/0?password=s3cret&db=1") == "redis://h/0?password=***&db=1"
    assert without_password("redis://h:6379/0") == "redis://h:6379/0"
    assert without_password("unix:///run/r.sock?db=2") == "unix:///run/r.sock?db=2"
    assert without_password("unix:///r.sock?password=s3cret") == "unix:///r.sock?password=***"


async def test_a_refused_password_is_not_in_the_stores_errors(tmp_path: Path) -> None:
    server = RedisProcess(tmp_path).start()
    try:
        sync_redis.Redis.from_url(server.url).config_set("requirepass", "right-one")
        url = f"redis://:wrong-one@127.0.0.1:{server.port}/0"
        store, knowledge = RedisStore(url), RedisKnowledge(url)
        with pytest.raises(StoreUnavailable) as refused:
            await store.ping()
        with pytest.raises(KnowledgeStoreUnavailable) as refused_too:
            await knowledge.ping()
        for error in (refused.value, refused_too.value):
            assert "wrong-one" not in str(error)
            assert f"redis at redis://:***@127.0.0.1:{server.port}/0 failed" in str(error)
        await store.close()
        await knowledge.close()
    finally:
        server.stop()
