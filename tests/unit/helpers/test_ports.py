"""The tests' port picker: within one run of several workers, a port is handed out once."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.helpers import ports


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    run = uuid.uuid4().hex
    monkeypatch.setenv("PYTEST_XDIST_TESTRUNUID", run)
    yield run
    ports.forget_reservations(run)
    assert not ports.reservations(run).exists()


def test_a_port_the_kernel_offers_again_is_not_handed_out_twice(
    run: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = ports.free_port()
    # The kernel offers the same port again (another worker's service has not bound it yet).
    offers = iter([first, first, first + 7])
    monkeypatch.setattr(ports, "_kernel_free_port", lambda: next(offers))
    assert ports.free_port() == first + 7
    assert {mark.name for mark in ports.reservations(run).iterdir()} == {
        str(first),
        str(first + 7),
    }


def test_a_pair_reserves_both_ports(run: str, monkeypatch: pytest.MonkeyPatch) -> None:
    port = ports.free_port_pair()
    # Either port of the pair, offered alone later, is taken already.
    offers = iter([port, port + 1, port + 9])
    monkeypatch.setattr(ports, "_kernel_free_port", lambda: next(offers))
    assert ports.free_port() == port + 9


def test_one_process_reserves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_TESTRUNUID", raising=False)
    assert ports.free_port() != 0
