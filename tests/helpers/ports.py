from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path


def reservations(run: str) -> Path:
    """Where the workers of the xdist run `run` mark the ports they handed out. The kernel picks
    a free port at random, and another worker may be given it again between this one's pick and
    its service's bind; a port marked here is never handed out twice in the run."""
    return Path(tempfile.gettempdir()) / f"skillshift-test-ports-{run}"


def _reservations() -> Path | None:
    """This worker's run's folder of marks (None: one process, nobody to share ports with)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        return None
    folder = reservations(run)
    folder.mkdir(exist_ok=True)
    return folder


def _reserve(port: int) -> bool:
    """Mark `port` as handed out in this run; False if a worker had it already."""
    folder = _reservations()
    if folder is None:
        return True
    try:
        os.close(os.open(folder / str(port), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _kernel_free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_port() -> int:
    for _ in range(100):
        port = _kernel_free_port()
        if _reserve(port):
            return port
    raise RuntimeError("no free port on 127.0.0.1 that no test worker was given")


def free_port_pair() -> int:
    """A free port whose successor is free too (the demo shop serves its target on N+1), both
    reserved."""
    for _ in range(100):
        port = free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        if _reserve(port + 1):
            return port
    raise RuntimeError("no two consecutive free ports on 127.0.0.1")


def forget_reservations(run: str) -> None:
    """Remove the run's marks (the controller, at the end of the run)."""
    shutil.rmtree(reservations(run), ignore_errors=True)


def wait_for_port(port: int, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")
