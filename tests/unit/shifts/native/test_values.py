"""A value taken out of the cyclic collector's sight (`shifts.native.untrack`) against its
definition here (`atoms_only`): each container of atoms, and only those, untracked; the value
itself unchanged; a cycle, and anything that may join one, left in sight. And a frozen
document's state, which the shifted-page cache keeps, out of sight once frozen."""

from __future__ import annotations

import gc

from hypothesis import given
from hypothesis import strategies as st

from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import ShiftedPages, shift_offline
from shifts import native
from shifts.references import EMPTY
from tests.helpers.fixtures import fixture_pages

MOST_DEPTH = 64  # (values.c's)


class Thing:
    """An object that may take part in a cycle (it has attributes)."""


def atoms_only(value: object, depth: int = 0) -> bool:
    """The definition: whether `value` is an atom or an exact dict, list or tuple of such
    values, no deeper than `MOST_DEPTH`."""
    if not gc.is_tracked(value) and type(value) not in (dict, list, tuple):
        return not isinstance(value, (set, Thing))  # (untracked at birth: an atom)
    if depth >= MOST_DEPTH:
        return False
    if type(value) is dict:
        items = [*value.keys(), *value.values()]  # type: ignore[attr-defined]
    elif type(value) in (list, tuple):
        items = list(value)  # type: ignore[call-overload]
    else:
        return False
    return all([atoms_only(item, depth + 1) for item in items])


def containers(value: object, depth: int = 0) -> list[tuple[object, int]]:
    """Every dict, list and tuple in `value`, with its depth."""
    found: list[tuple[object, int]] = []
    if type(value) is dict:
        found.append((value, depth))
        for item in [*value.keys(), *value.values()]:  # type: ignore[attr-defined]
            found += containers(item, depth + 1)
    elif type(value) in (list, tuple):
        found.append((value, depth))
        for item in value:  # type: ignore[attr-defined]
            found += containers(item, depth + 1)
    return found


atoms = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3)
)
keys = st.one_of(st.text(max_size=3), st.integers(), st.tuples(st.text(max_size=2)))
values = st.recursive(
    st.one_of(atoms, st.builds(Thing), st.builds(set, st.lists(st.integers(), max_size=2))),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=4),
    ),
    max_leaves=30,
)


def test_it_is_built_here() -> None:
    assert native.untrack is not None, native.why_not


@given(values)
def test_each_container_of_atoms_and_only_those_is_untracked(value: object) -> None:
    assert native.untrack is not None
    before = snapshot(value)
    expected = [(c, atoms_only(c, depth)) for c, depth in containers(value)]
    tracked_before = sum(1 for c, untrack in expected if untrack and gc.is_tracked(c))
    assert native.untrack(value) == tracked_before
    for container, untracked in expected:
        assert gc.is_tracked(container) is not untracked, (container, untracked)
    assert snapshot(value) == before


def snapshot(value: object) -> object:
    """What `value` holds, as a value to compare with `==` (a `Thing` by its identity)."""
    if type(value) is dict:
        return ("dict", [(snapshot(k), snapshot(v)) for k, v in value.items()])  # type: ignore[attr-defined]
    if type(value) in (list, tuple):
        return (type(value).__name__, [snapshot(item) for item in value])  # type: ignore[attr-defined]
    if isinstance(value, Thing):
        return ("thing", id(value))
    return ("atom", repr(value))


def test_a_value_deeper_than_the_walk_stays_in_sight_whole() -> None:
    assert native.untrack is not None
    deep: list[object] = ["leaf"]
    for _ in range(MOST_DEPTH + 5):
        deep = [deep]
    assert native.untrack(deep) == 0
    assert all(gc.is_tracked(c) for c, _ in containers(deep)[:MOST_DEPTH])


def test_a_cycle_stays_in_sight_and_is_collected() -> None:
    """A list holding itself is walked no deeper than the walk goes, left tracked, and
    collected once dropped; so is a dict beside atoms that holds one."""
    assert native.untrack is not None
    cycle: list[object] = []
    cycle.append(cycle)
    value = {"atoms": [1, "two"], "cycle": cycle}
    assert native.untrack(value) == 1  # (the atoms' list alone)
    assert gc.is_tracked(cycle) and gc.is_tracked(value) and not gc.is_tracked(value["atoms"])
    del cycle, value
    gc.collect()
    assert gc.collect() == 0  # (nothing left over: the cycle went in the first)


def test_a_frozen_documents_state_is_out_of_sight() -> None:
    """Each saved page's first load, as the service keeps it: its change map, notes and
    runtime rules hold nothing the collector must see, and it has none of them to walk."""
    assert native.untrack is not None
    episode = new_episode(EpisodeConfig(condition="Src-Perc", seed=2))
    for page in fixture_pages():
        pages = ShiftedPages()
        shift_offline(
            episode, "http://app.test/page", page.read_bytes(), assets=EMPTY, shifted=pages
        )
        [entry] = pages._entries.values()
        frozen = entry.frozen
        assert frozen.changes, page.name
        state = (frozen.notes, frozen.changes, frozen.runtime)
        assert not any(gc.is_tracked(c) for c, _ in containers(state)[1:]), page.name
