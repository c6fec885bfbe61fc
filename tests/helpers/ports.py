from __future__ import annotations

import itertools
import os
import random
import socket
import time

# A port is picked here and bound later by another process. One process cannot be handed twice
# a port the kernel holds for nobody yet, but two test workers (pytest-xdist's) could: each
# picks from ports of its own, below the kernel's ephemeral range (32768-60999 on Linux), in
# turn from a random start so one worker does not soon pick again what it picked just before.
WORKER_PORTS = 2000
FIRST_WORKER_PORT = 20000


def _worker_ports() -> itertools.cycle[int] | None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ...; unset: no workers
    if not worker.startswith("gw") or not worker[2:].isdigit():
        return None
    first = FIRST_WORKER_PORT + int(worker[2:]) * WORKER_PORTS
    if first + WORKER_PORTS > 32768:  # so many workers that the ranges would reach the kernel's
        return None
    start = random.randrange(WORKER_PORTS)
    order = [first + (start + offset) % WORKER_PORTS for offset in range(WORKER_PORTS)]
    return itertools.cycle(order)


_PORTS = _worker_ports()


def free_port() -> int:
    if _PORTS is None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])
    for port in itertools.islice(_PORTS, WORKER_PORTS):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port of this test worker's {WORKER_PORTS} on 127.0.0.1")


def free_port_pair() -> int:
    """A free port whose successor is free too (the demo shop serves its target on N+1)."""
    for _ in range(100):
        port = free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no two consecutive free ports on 127.0.0.1")


def wait_for_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")
