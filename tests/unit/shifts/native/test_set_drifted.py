"""The compiled `set_drifted` against its definition (`locators._set_drifted_read`): on two
copies of a page, the same attributes set to the same values, the same count and the same
elements of `among` returned, the same values asked of `drifted` in the same order, protected
elements left alone; or None with nothing set where the C one declines. The C sets a value
through lxml the first time (lxml checks it) and through libxml2 after: both are asked here."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import native
from shifts.perceptual.locators import _set_drifted_read
from tests.helpers.fixtures import fixture_pages
from tests.helpers.twins import protected_twins


class Drifted:
    """A drift of class attributes that keeps the values it was asked, in order: each name
    renamed by a hash of it (so some keep theirs), memoized as `_drift_classes` memoizes."""

    def __init__(self) -> None:
        self.asked: list[str] = []  # (each value the first time it was asked)
        self.calls = 0
        self.known: dict[str, str | None] = {}

    def __call__(self, value: str) -> str | None:
        self.calls += 1
        if value not in self.known:
            self.asked.append(value)
            names = value.split()
            new = [n + "-x" if hashlib.sha1(n.encode()).digest()[0] % 2 else n for n in names]
            self.known[value] = None if new == names else " ".join(new)
        return self.known[value]


def set_both(
    page: str | bytes, name: str, protect: float, seed: int, drifted: type = Drifted
) -> int:
    """Parse the page twice, protect the same elements of each, set in C and in Python, with
    the same share of each tree's elements `among` (a set in one case, a dict in the other):
    how many were set."""
    assert native.set_drifted is not None, native.why_not
    trees, protected = protected_twins(page, protect, seed)
    chosen = random.Random(seed + 1)
    picks = [chosen.random() < 0.5 for _ in trees[0].iter()]
    among = [[e for e, pick in zip(tree.iter(), picks, strict=True) if pick] for tree in trees]
    kept_as = set if seed % 2 else dict.fromkeys
    drifts = [drifted(), drifted()]
    compiled = native.set_drifted(trees[0], name, protected[0], drifts[0], kept_as(among[0]))
    assert compiled is not None
    read = _set_drifted_read(trees[1], name, protected[1], drifts[1], kept_as(among[1]))
    assert compiled[1] == read[1]
    paths = [
        [tree.getroottree().getpath(e) for e in found]
        for tree, (found, _) in zip(trees, (compiled, read), strict=True)
    ]
    assert paths[0] == paths[1]
    assert drifts[0].asked == drifts[1].asked
    assert drifts[0].calls == len(drifts[0].asked)  # (the C asks each value once)
    assert etree.tostring(trees[0]) == etree.tostring(trees[1])
    assert all(e not in protected[0] and e in among[0] for e in compiled[0])
    return compiled[1]


def test_values_are_set_by_libxml2_after_lxml_checked_them() -> None:
    # (else every value is set by lxml, and the other way is never asked here)
    assert native._modules["_walks"].sets_directly == 1


class Everything(Drifted):
    """A drift that renames every class, so that each value is set (and set again later)."""

    def __call__(self, value: str) -> str | None:
        self.calls += 1
        if value not in self.known:
            self.asked.append(value)
            self.known[value] = " ".join(name + "-x" for name in value.split()) or None
        return self.known[value]


def test_more_values_than_the_c_keeps_decided_are_set_alike() -> None:
    """Forty values in turn, each on many elements: the C keeps the last sixteen decided,
    and decides the others again from what it asked (`drifted` is asked once per value)."""
    body = "".join(f"<p class='c{index % 40} t'>{index}</p>" for index in range(400))
    page = f"<html><body>{body}</body></html>"
    for seed in range(4):
        assert set_both(page, "class", protect=0.1, seed=seed, drifted=Everything) > 300


def test_a_value_lxml_reads_its_own_way_is_set_alike() -> None:
    """What lxml's `set` takes besides a plain string (bytes, a QName, a string's subclass):
    set by lxml at each element, as the Python sets it, not by libxml2 after the first."""

    class Text(str):
        pass

    for new_value in (b"new", etree.QName("qn"), Text("sub")):
        page = "<html><body>" + "<p class='a'>x</p>" * 3 + "</body></html>"
        trees = [etree.fromstring(page, etree.HTMLParser()) for _ in range(2)]
        for tree, setter in zip(trees, (native.set_drifted, _set_drifted_read), strict=True):
            assert setter is not None
            assert setter(tree, "class", set(), lambda _, new=new_value: new, set()) == ([], 3)
        assert etree.tostring(trees[0]) == etree.tostring(trees[1]), new_value


def test_a_value_lxml_refuses_fails_alike() -> None:
    class Refused(Drifted):
        def __call__(self, value: str) -> str | None:
            return "bad\x01value"

    for setter in (native.set_drifted, _set_drifted_read):
        root = etree.fromstring("<html><body><p class='a'>x</p></body></html>", etree.HTMLParser())
        with pytest.raises(ValueError, match="XML compatible"):
            setter(root, "class", set(), Refused(), set())  # type: ignore[misc]


def test_every_saved_page_is_set_alike() -> None:
    for index, page in enumerate(fixture_pages()):
        raw = page.read_bytes()
        set_both(raw, "class", protect=0.0, seed=index)
        set_both(raw, "class", protect=0.3, seed=index)
        set_both(raw, "id", protect=0.1, seed=index)


def test_a_value_of_no_single_text_sets_nothing_and_is_left_to_the_python() -> None:
    parser = etree.XMLParser(resolve_entities=False)
    root = etree.fromstring(
        '<!DOCTYPE r [<!ENTITY e "b">]><r><p class="a"/><q class="a &e;"/></r>', parser
    )
    assert native.set_drifted is not None
    before = etree.tostring(root)
    assert native.set_drifted(root, "class", set(), Drifted(), set()) is None
    assert etree.tostring(root) == before  # (the first, a single text, was not set either)


CLASSES = st.lists(
    st.sampled_from(["a", "b", "nav", "x1", "é", "🙂", "", " ", "\t", "js-x", "&amp;", "q r"]),
    max_size=4,
).map(" ".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.one_of(st.none(), CLASSES), min_size=1, max_size=12),
    protect=st.floats(0, 1),
    seed=st.integers(0, 1000),
)
def test_generated_pages_are_set_alike(values: list[str | None], protect: float, seed: int) -> None:
    body = "".join(
        f"<div><span{'' if value is None else f' class="{value}"'}>t</span></div>"
        for value in values
    )
    set_both(f"<html><body class='top'>{body}</body></html>", "class", protect, seed)
