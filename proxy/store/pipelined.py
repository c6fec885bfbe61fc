"""One pipelined Redis connection for the per-request commands.

Every proxied request reads its episode, and every page load counts itself and writes its
events: a few small commands per request, from many concurrent flows. redis-py sends each one
on a connection taken from its pool and released after, under a lock, a timeout context and its
reply parser's layers: about 0.1-0.3 ms of CPU per command here, more than the command itself.
This sends them all on one connection, in order, and matches the replies to them in order (Redis
answers a connection's commands in the order it got them). The commands one loop iteration
issues go out in one write, so under load a syscall carries several.

Failure is closed and fast: a command that gets no reply within the timeout, or a connection
that drops, fails every command waiting on that connection (their replies can no longer be told
apart) with `ConnectionError`; the next command connects again.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any

from redis.asyncio.connection import SSLConnection, parse_url

Reply = Any  # bytes | int | str (a status) | list[Reply] | None


class ReplyError(Exception):
    """An error reply (`-ERR ...`): the command was wrong, the connection is fine."""


class _Incomplete(Exception):
    """The buffer ends inside a reply: wait for more bytes."""


def encode(args: tuple[str | bytes | int, ...]) -> bytes:
    """A command as RESP: an array of bulk strings."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def parse(buffer: bytearray | bytes, start: int) -> tuple[Reply, int]:
    """The reply at `start` and where the next begins; `_Incomplete` when it is not all there."""
    end = buffer.find(b"\r\n", start)
    if end < 0:
        raise _Incomplete
    kind, line = buffer[start : start + 1], bytes(buffer[start + 1 : end])
    after = end + 2
    if kind == b"$":
        length = int(line)
        if length < 0:
            return None, after
        if len(buffer) < after + length + 2:
            raise _Incomplete
        return bytes(buffer[after : after + length]), after + length + 2
    if kind == b":":
        return int(line), after
    if kind == b"+":
        return line.decode(), after
    if kind == b"-":
        return ReplyError(line.decode(errors="replace")), after
    if kind == b"*":
        count = int(line)
        if count < 0:
            return None, after
        items = []
        for _ in range(count):
            item, after = parse(buffer, after)
            items.append(item)
        return items, after
    raise ValueError(f"not a RESP reply: {bytes(buffer[start : start + 16])!r}")


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.waiting: deque[asyncio.Future[Reply]] = deque()
        self.buffer = bytearray()
        self.outgoing: list[bytes] = []
        self.lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def send(self, command: bytes) -> asyncio.Future[Reply]:
        future: asyncio.Future[Reply] = self.loop.create_future()
        if self.lost is not None:  # (no reply would ever come: fail it now, not at the timeout)
            future.set_exception(self.lost)
            return future
        if not self.outgoing:
            self.loop.call_soon(self._flush)
        self.outgoing.append(command)
        self.waiting.append(future)
        return future

    def _flush(self) -> None:
        data, self.outgoing = b"".join(self.outgoing), []
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        position = 0
        try:
            while position < len(self.buffer) and self.waiting:
                reply, position = parse(self.buffer, position)
                future = self.waiting.popleft()
                if not future.done():
                    future.set_result(reply)
        except _Incomplete:
            pass
        except ValueError as error:
            self.fail(ConnectionError(f"Redis sent what is not a reply: {error}"))
            return
        del self.buffer[:position]

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(ConnectionError(f"the connection to Redis was lost: {exc or 'closed'}"))

    def fail(self, error: Exception) -> None:
        """Fail every command still waiting, and close: their replies cannot be matched now."""
        self.lost = error
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(error)
        if self.transport is not None:
            self.transport.close()


def _tls(params: dict[str, Any]) -> ssl.SSLContext:
    """A `rediss://` URL's TLS, with the query parameters redis-py reads for it."""
    context = ssl.create_default_context(cafile=params.get("ssl_ca_certs"))
    if params.get("ssl_certfile"):
        context.load_cert_chain(params["ssl_certfile"], params.get("ssl_keyfile"))
    if params.get("ssl_check_hostname") is False:  # (parse_url has read it as redis-py does)
        context.check_hostname = False
    required = str(params.get("ssl_cert_reqs", "required")).lower()
    if required in ("none", "optional"):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE if required == "none" else ssl.CERT_OPTIONAL
    return context


class PipelinedConnection:
    """A Redis URL's connection (`redis://`, `rediss://`, `unix://`, with its credentials and
    database), made on first use, for the event loop it was made on: the service's one loop
    (on another loop, as a test's next one, it is made again)."""

    def __init__(self, url: str, timeout: float) -> None:
        self.params: dict[str, Any] = dict(parse_url(url))
        self.timeout = timeout
        self._protocol: _Protocol | None = None
        self._connecting: asyncio.Future[_Protocol] | None = None
        self._closed = False

    async def call(self, *args: str | bytes | int) -> Reply:
        """Send one command and return its reply; `ReplyError` for an error reply,
        `ConnectionError` when the connection failed or timed out."""
        protocol = await self._connected()
        future = protocol.send(encode(args))
        try:
            async with asyncio.timeout(self.timeout):
                reply = await future
        except TimeoutError:
            protocol.fail(ConnectionError(f"Redis did not answer within {self.timeout} s"))
            raise ConnectionError(f"Redis did not answer within {self.timeout} s") from None
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    async def _connected(self) -> _Protocol:
        """The live connection, made (once, for every caller waiting) if there is none. A
        connection lost between its making and a caller's turn is made again, once."""
        for _ in range(2):
            if self._closed:
                raise ConnectionError("the connection to Redis was closed")
            protocol = self._protocol
            if protocol is not None and protocol.loop is not asyncio.get_running_loop():
                # Made on a loop that has since ended (a test's, an embedding app's).
                self._protocol = self._connecting = protocol = None
            if protocol is not None and protocol.lost is None:
                return protocol
            if self._connecting is None:
                self._connecting = asyncio.ensure_future(self._connect())
                self._connecting.add_done_callback(self._connect_done)
            connecting = self._connecting
            try:
                protocol = await asyncio.shield(connecting)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if connecting.cancelled() and not (task and task.cancelling()):
                    raise ConnectionError("the connection to Redis was closed") from None
                raise  # this caller was cancelled
            if protocol.lost is None:
                return protocol
        raise ConnectionError("the connection to Redis was lost as soon as it was made")

    def _connect_done(self, connecting: asyncio.Future[_Protocol]) -> None:
        # Cleared by the attempt itself, not by a caller: callers may all have been cancelled
        # meanwhile, and a finished attempt left here would answer the next caller.
        if self._connecting is connecting:
            self._connecting = None
        if not connecting.cancelled():
            connecting.exception()  # (seen: every waiting caller got it already)

    async def _connect(self) -> _Protocol:
        try:
            return await self._open()
        except ConnectionError:
            raise
        except TimeoutError:
            raise ConnectionError(f"could not connect to Redis within {self.timeout} s") from None
        except OSError as error:  # refused, unreachable, timed out, a certificate refused
            raise ConnectionError(f"could not connect to Redis: {error}") from error

    async def _open(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        params = self.params
        protocol: _Protocol | None = None
        try:
            async with asyncio.timeout(self.timeout):
                if "path" in params:
                    _, protocol = await loop.create_unix_connection(_Protocol, params["path"])
                else:
                    tls = params.get("connection_class") is SSLConnection
                    _, protocol = await loop.create_connection(
                        _Protocol,
                        params.get("host", "localhost"),
                        int(params.get("port", 6379)),
                        ssl=_tls(params) if tls else None,
                    )
                for command in _setup(params):
                    reply = await protocol.send(encode(command))
                    if isinstance(reply, ReplyError):
                        raise ConnectionError(f"Redis refused {command[0]}: {reply}")
        except BaseException:
            if protocol is not None and protocol.transport is not None:
                protocol.transport.close()
            raise
        if self._closed:  # closed while it was being made
            if protocol.transport is not None:
                protocol.transport.close()
            raise ConnectionError("the connection to Redis was closed")
        self._protocol = protocol
        return protocol

    def close(self) -> None:
        """Close the connection, and make no other: a later command fails."""
        self._closed = True
        if self._connecting is not None:
            self._connecting.cancel()  # (the attempt closes what it had opened)
        protocol = self._protocol
        if (
            protocol is not None
            and protocol.transport is not None
            and not protocol.loop.is_closed()
        ):
            protocol.transport.close()


def _setup(params: dict[str, Any]) -> list[tuple[str, ...]]:
    """What a new connection sends first: the URL's credentials and database."""
    commands: list[tuple[str, ...]] = []
    user, password = params.get("username"), params.get("password")
    if user:
        # A user with no password is an ACL user marked `nopass`: any password is taken.
        commands.append(("AUTH", user, password or ""))
    elif password is not None:
        commands.append(("AUTH", password))
    if int(params.get("db", 0)):
        commands.append(("SELECT", str(params["db"])))
    return commands
