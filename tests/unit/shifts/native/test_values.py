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


HAVE_GC = 1 << 14  # (`Py_TPFLAGS_HAVE_GC`: a type whose objects the collector may track)


def is_atom(value: object) -> bool:
    """An object the collector never tracks: of a type without `HAVE_GC` (a string, a
    number, None)."""
    return not type(value).__flags__ & HAVE_GC


def atoms_only(value: object, depth: int = 0) -> bool:
    """The definition, for a value that shares no container: whether `value` is an atom or
    an exact dict, list or tuple of such values, no deeper than `MOST_DEPTH`."""
    if is_atom(value):
        return True
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


def test_a_value_as_deep_as_the_walk_goes_is_untracked_and_a_deeper_one_stays_in_sight() -> None:
    assert native.untrack is not None
    for depth, untracked in ((MOST_DEPTH - 1, MOST_DEPTH), (MOST_DEPTH + 5, 0)):
        deep: object = ["leaf"]
        for level in range(depth):
            deep = [deep] if level % 2 else {"in": deep}  # (each kind counts a level)
        assert native.untrack(deep) == untracked
        assert all(gc.is_tracked(c) is not bool(untracked) for c, _ in containers(deep))


class Dict(dict):  # type: ignore[type-arg]
    pass


class List(list):  # type: ignore[type-arg]
    pass


class Tuple(tuple):  # type: ignore[type-arg]
    __slots__ = ()


def test_a_subclass_or_a_key_that_may_join_a_cycle_stays_in_sight() -> None:
    """Only exact dicts, lists and tuples are untracked: a subclass's instance may take
    attributes; and a dict whose key may take part in a cycle stays in sight too."""
    assert native.untrack is not None
    for odd in (Dict(a=1), List([1]), Tuple((1,)), {(Thing(),): 1}):
        value = [odd, ["atoms"]]
        assert native.untrack(value) == 1, odd  # (the atoms' list alone)
        assert gc.is_tracked(value) and gc.is_tracked(odd) and not gc.is_tracked(value[1])
    key = tuple(["a", 1])  # (made at run time: a constant one is untracked already)
    value = {key: [2.5, None]}
    assert native.untrack(value) == 3
    assert not any(gc.is_tracked(c) for c in (value, key, value[key]))


GUARD_SECONDS = 120  # (a walk that stopped being linear runs for hours: fail, not hang)
SHARED = """
import gc
from shifts import native
looped = []
looped += [looped, looped]
chain = ["leaf"]
for _ in range(60):
    chain = [chain, chain]  # (each list twice below the next: 2**60 paths to the leaf)
class Thing:
    pass
held = [Thing()]
for _ in range(60):
    held = [held, held]
print(native.untrack(looped), gc.is_tracked(looped), native.untrack(chain), native.untrack(held))
"""


def test_containers_held_twice_are_walked_once() -> None:
    """A list that holds itself twice, and 60 lists each held twice by the next: each walked
    once (per path, they were 2**60 walks and a walk that never ended)."""
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [sys.executable, "-c", SHARED],
        capture_output=True,
        text=True,
        timeout=GUARD_SECONDS,
        cwd=Path(__file__).resolve().parents[4],
        check=True,
    )
    assert done.stdout.split() == ["0", "True", "61", "0"]


@st.composite
def graphs(draw: st.DrawFn) -> list[object]:
    """Containers that hold one another in any way (cycles, shared ones), and atoms and
    objects that may join a cycle."""
    count = draw(st.integers(1, 8))
    nodes: list[object] = [draw(st.sampled_from([list, dict]))() for _ in range(count)]
    for node in nodes:
        for _ in range(draw(st.integers(0, 3))):
            item = draw(st.one_of(st.sampled_from(nodes), atoms, st.builds(Thing), st.just(None)))
            if isinstance(node, list):
                node.append(item)
            else:
                node[draw(st.text(max_size=2))] = item  # type: ignore[index]
    return nodes


def reaches(start: object, goal: object) -> bool:
    """Whether `goal` is held by `start` or by what it holds, at any depth."""
    pending, seen = list(_items(start)), set()
    while pending:
        node = pending.pop()
        if node is goal:
            return True
        if id(node) not in seen:
            seen.add(id(node))
            pending += _items(node)
    return False


def _items(value: object) -> list[object]:
    if type(value) is dict:
        return [*value.keys(), *value.values()]  # type: ignore[attr-defined]
    return list(value) if type(value) in (list, tuple) else []  # type: ignore[call-overload]


@given(graphs())
def test_what_is_untracked_holds_atoms_only_and_no_cycle(nodes: list[object]) -> None:
    """Whatever holds what: each container untracked holds nothing but atoms and containers
    untracked, none is on a cycle (the collector must see those), and one that holds atoms
    only is untracked."""
    assert native.untrack is not None
    native.untrack(nodes[0])
    for node in nodes:
        items = _items(node)
        if not gc.is_tracked(node):
            assert all(is_atom(item) or not gc.is_tracked(item) for item in items)
            assert not reaches(node, node)
        elif node is nodes[0] or reaches(nodes[0], node):  # (walked, and left in sight)
            assert not all(is_atom(item) for item in items)


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
