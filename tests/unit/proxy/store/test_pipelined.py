"""The pipelined connection, against a real redis-server: replies go to their own commands,
whatever the concurrency and however the bytes arrive; a silent or dropped connection fails
what waits on it, fast, and the next command connects again."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis as sync_redis

from proxy.store.pipelined import PipelinedConnection, ReplyError, _Protocol, encode, parse
from tests.helpers.ports import free_port, wait_for_port
from tests.helpers.processes import RedisProcess
from tests.helpers.tls import make_upstream_tls


@contextmanager
def own_redis_server(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    """A redis-server of the test's own, started with these arguments, stopped after."""
    binary = shutil.which("redis-server") or "redis-server"
    server = subprocess.Popen([binary, "--save", "", *args], stdout=subprocess.DEVNULL)
    try:
        yield server
    finally:
        server.terminate()
        server.wait(timeout=10)


async def leave_while_connecting(connection: PipelinedConnection) -> None:
    """A command whose caller is cancelled while the connection is being made (a flow whose
    client went away): the attempt goes on, with nobody waiting for it."""
    left = asyncio.ensure_future(connection.call("PING"))
    await asyncio.sleep(0)
    left.cancel()


REPLIES = (
    b"+OK\r\n",
    b"-ERR wrong\r\n",
    b":42\r\n",
    b"$5\r\nhello\r\n",
    b"$0\r\n\r\n",
    b"$-1\r\n",
    b"*-1\r\n",
    b"*3\r\n$1\r\na\r\n:7\r\n*2\r\n$2\r\nbc\r\n$-1\r\n",
)


def test_encode_is_an_array_of_bulk_strings() -> None:
    assert encode(("SET", b"k\r\n", 12)) == b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n12\r\n"


def test_each_reply_kind() -> None:
    parsed = [parse(reply, 0) for reply in REPLIES]
    assert all(end == len(reply) for (_, end), reply in zip(parsed, REPLIES, strict=True))
    values = [value for value, _ in parsed]
    assert values[0] == "OK"
    assert isinstance(values[1], ReplyError) and str(values[1]) == "ERR wrong"
    assert values[2:] == [42, b"hello", b"", None, None, [b"a", 7, [b"bc", None]]]


async def test_replies_split_anywhere_reach_their_commands_in_order() -> None:
    stream = b"".join(REPLIES)
    for size in (1, 2, 3, 7, len(stream)):
        protocol = _Protocol()
        futures = [protocol.send(b"") for _ in REPLIES]
        for start in range(0, len(stream), size):
            protocol.data_received(stream[start : start + size])
        assert [future.result() for future in futures][2:] == [
            42,
            b"hello",
            b"",
            None,
            None,
            [b"a", 7, [b"bc", None]],
        ]
        assert protocol.buffer == b""


async def test_garbage_fails_every_waiting_command() -> None:
    protocol = _Protocol()
    futures = [protocol.send(b"") for _ in range(3)]
    protocol.data_received(b":1\r\n?what\r\n")
    assert futures[0].result() == 1
    for future in futures[1:]:
        with pytest.raises(ConnectionError, match="not a reply"):
            future.result()


async def test_concurrent_commands_get_their_own_replies(redis_server: RedisProcess) -> None:
    connection = PipelinedConnection(redis_server.url, timeout=5)
    keys = [f"pipelined:{n}" for n in range(300)]
    await asyncio.gather(*(connection.call("SET", key, key * 3) for key in keys))
    values = await asyncio.gather(*(connection.call("GET", key) for key in keys))
    assert values == [key.encode() * 3 for key in keys]
    counts = await asyncio.gather(*(connection.call("INCR", "pipelined:n") for _ in keys))
    assert sorted(counts) == list(range(1, len(keys) + 1))
    with pytest.raises(ReplyError, match="WRONGTYPE"):
        await connection.call("HGETALL", keys[0])
    assert await connection.call("GET", keys[1]) == keys[1].encode() * 3  # still in step
    connection.close()


async def test_a_silent_connection_fails_fast_and_the_next_command_reconnects(
    redis_server: RedisProcess,
) -> None:
    connection = PipelinedConnection(redis_server.url, timeout=0.3)
    # BLPOP on an empty list answers after 5 s: far past the timeout.
    blocked = asyncio.ensure_future(connection.call("BLPOP", "pipelined:empty", 5))
    queued = asyncio.ensure_future(connection.call("PING"))
    with pytest.raises(ConnectionError, match="did not answer within 0.3 s"):
        await blocked
    with pytest.raises(ConnectionError):  # behind it on the same connection: its reply is lost
        await queued
    assert await connection.call("PING") == "PONG"
    connection.close()


async def test_a_dropped_connection_fails_what_waits_and_reconnects(
    redis_server: RedisProcess,
) -> None:
    connection = PipelinedConnection(redis_server.url, timeout=5)
    client_id = await connection.call("CLIENT", "ID")
    blocked = asyncio.ensure_future(connection.call("BLPOP", "pipelined:empty", 5))
    await asyncio.sleep(0)  # sent
    sync_redis.Redis.from_url(redis_server.url).client_kill_filter(_id=client_id)
    with pytest.raises(ConnectionError, match="lost"):
        await blocked
    assert await connection.call("PING") == "PONG"
    connection.close()


async def test_a_dead_server_is_a_connection_error() -> None:
    connection = PipelinedConnection(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
    with pytest.raises(ConnectionError):
        await connection.call("PING")


async def test_password_and_database_from_the_url(tmp_path: Path) -> None:
    server = RedisProcess(tmp_path).start()
    try:
        admin = sync_redis.Redis.from_url(server.url)
        admin.config_set("requirepass", "s3cret")
        admin = sync_redis.Redis(port=server.port, password="s3cret", db=2)
        admin.set("in-db-2", "yes")
        connection = PipelinedConnection(f"redis://:s3cret@127.0.0.1:{server.port}/2", 2)
        assert await connection.call("GET", "in-db-2") == b"yes"
        connection.close()
        wrong = PipelinedConnection(f"redis://:nope@127.0.0.1:{server.port}/2", 2)
        with pytest.raises(ConnectionError, match="refused AUTH"):
            await wrong.call("PING")
    finally:
        server.stop()


async def test_an_acl_user_from_the_url_with_or_without_a_password(tmp_path: Path) -> None:
    server = RedisProcess(tmp_path).start()
    try:
        admin = sync_redis.Redis.from_url(server.url)
        admin.acl_setuser("agent", enabled=True, passwords=["+pw"], keys="*", commands=["+@all"])
        admin.acl_setuser("open", enabled=True, nopass=True, keys="*", commands=["+@all"])
        admin.acl_setuser("default", enabled=False)  # a command without AUTH is refused
        for user, credentials in (("agent", "agent:pw"), ("open", "open"), (None, "")):
            url = f"redis://{credentials}{'@' if credentials else ''}127.0.0.1:{server.port}/0"
            connection = PipelinedConnection(url, 2)
            try:
                if user is None:  # no user, no password: the disabled default user
                    with pytest.raises(ReplyError, match="NOAUTH"):
                        await connection.call("PING")
                else:
                    assert await connection.call("ACL", "WHOAMI") == user.encode()
            finally:
                connection.close()
    finally:
        server.stop()


async def test_tls_as_the_url_asks(tmp_path: Path) -> None:
    ca, cert, key = make_upstream_tls(tmp_path)
    port = free_port()
    tls = ("--tls-port", str(port), "--tls-cert-file", str(cert), "--tls-key-file", str(key))
    trust = ("--tls-ca-cert-file", str(ca), "--tls-auth-clients", "no")
    with own_redis_server("--port", "0", "--bind", "127.0.0.1", "127.0.0.2", *tls, *trust):
        wait_for_port(port)
        trusted = PipelinedConnection(f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={ca}", 5)
        assert await trusted.call("PING") == "PONG"
        trusted.close()
        unchecked = PipelinedConnection(f"rediss://127.0.0.1:{port}/0?ssl_cert_reqs=none", 5)
        assert await unchecked.call("PING") == "PONG"
        unchecked.close()
        with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            await PipelinedConnection(f"rediss://127.0.0.1:{port}/0", 5).call("PING")
        # 127.0.0.2 is not a name the certificate holds: only without the host name check.
        other = f"rediss://127.0.0.2:{port}/0?ssl_ca_certs={ca}"
        with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
            await PipelinedConnection(other, 5).call("PING")
        unnamed = PipelinedConnection(other + "&ssl_check_hostname=false", 5)
        assert await unnamed.call("PING") == "PONG"
        unnamed.close()


async def test_a_unix_socket_url(tmp_path: Path) -> None:
    socket_path = tmp_path / "redis.sock"
    with own_redis_server(
        "--port", "0", "--unixsocket", str(socket_path), "--dir", str(tmp_path)
    ) as server:
        connection = PipelinedConnection(f"unix://{socket_path}?db=1", 5)
        deadline = time.monotonic() + 15
        while not socket_path.exists():  # until the server listens
            assert time.monotonic() < deadline and server.poll() is None
            await asyncio.sleep(0.05)
        assert await connection.call("SET", "k", "v") == "OK"
        assert await connection.call("SELECT", 0) == "OK"  # it was in database 1
        assert await connection.call("GET", "k") is None
        connection.close()


async def test_a_connection_made_for_a_caller_that_went_away_is_not_answered_stale(
    redis_server: RedisProcess,
) -> None:
    # Its caller cancelled while connecting (a flow whose client left): the connection is made
    # all the same; once it drops, the next command connects again, without waiting its timeout.
    connection = PipelinedConnection(redis_server.url, timeout=5)
    await leave_while_connecting(connection)
    while connection._protocol is None:  # made, with nobody waiting for it
        await asyncio.sleep(0.01)
    client_id = await connection.call("CLIENT", "ID")
    sync_redis.Redis.from_url(redis_server.url).client_kill_filter(_id=client_id)
    while connection._protocol is not None and connection._protocol.lost is None:
        await asyncio.sleep(0.01)  # until the loop has seen the drop
    assert await connection.call("PING") == "PONG"
    connection.close()


async def test_a_refused_connection_is_tried_again_at_the_next_command(tmp_path: Path) -> None:
    port = free_port()
    connection = PipelinedConnection(f"redis://127.0.0.1:{port}/0", timeout=5)
    with pytest.raises(ConnectionError):  # refused
        await connection.call("PING")
    # Refused again, its caller gone meanwhile: nobody saw the attempt end.
    await leave_while_connecting(connection)
    while connection._connecting is not None and not connection._connecting.done():
        await asyncio.sleep(0.01)
    with own_redis_server("--port", str(port)):
        wait_for_port(port)
        assert await connection.call("PING") == "PONG"
        connection.close()


async def test_closed_while_connecting_fails_the_waiting_commands_and_makes_none(
    redis_server: RedisProcess,
) -> None:
    connection = PipelinedConnection(redis_server.url, timeout=5)
    waiting = asyncio.ensure_future(connection.call("PING"))
    await asyncio.sleep(0)
    connection.close()
    with pytest.raises(ConnectionError, match="closed"):
        await waiting
    with pytest.raises(ConnectionError, match="closed"):
        await connection.call("PING")
    assert connection._protocol is None
