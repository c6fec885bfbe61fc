"""A small round-robin TCP balancer, to run several skillshift replicas behind one address.

    python -m tools.tcp_balancer --listen 127.0.0.1:3128 \
        --backend 127.0.0.1:18080 --backend 127.0.0.1:28080

Stands in for a Kubernetes Service or HAProxy in local tests and benchmarks of the scaled-out
topology (replicas sharing one redis-server). Each client connection goes to the next backend;
a backend that refuses the connection is skipped, so a dead replica costs no failed request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import signal

logger = logging.getLogger(__name__)
CHUNK = 64 * 1024


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.write_eof()


class TcpBalancer:
    def __init__(self, backends: list[tuple[str, int]]) -> None:
        if not backends:
            raise ValueError("at least one backend")
        self.backends = backends
        self._next = itertools.cycle(range(len(backends)))
        self.connections = [0] * len(backends)  # per backend, for tests and benchmarks
        self._server: asyncio.Server | None = None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        for _ in range(len(self.backends)):
            index = next(self._next)
            host, port = self.backends[index]
            try:
                streams = await asyncio.open_connection(host, port)
            except OSError as error:
                logger.warning("backend %s:%s refused: %s", host, port, error)
                continue
            self.connections[index] += 1
            return streams
        raise ConnectionError("no backend accepted the connection")

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await self._connect()
        except ConnectionError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        for stream in (writer, upstream_writer):
            stream.close()

    async def start(self, host: str, port: int) -> int:
        """Listen; returns the bound port (pass 0 for any free one)."""
        self._server = await asyncio.start_server(self._handle, host, port)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    return host or "127.0.0.1", int(port)


async def _main(listen: tuple[str, int], backends: list[tuple[str, int]]) -> None:
    balancer = TcpBalancer(backends)
    await balancer.start(*listen)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await balancer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=_address, required=True, help="HOST:PORT")
    parser.add_argument("--backend", type=_address, action="append", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    asyncio.run(_main(args.listen, args.backend))


if __name__ == "__main__":
    main()
