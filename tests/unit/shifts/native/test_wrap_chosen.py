"""The first pass of the wrap decisions in C (`shifts.native.wrap_chosen`, asked by
`locators._wrap_chosen`) against its definition, `wrap_if_safe` of each element the coins
chose: the same page out of the whole locator drift, with it and without it, on every saved
page under references that ask each of `wrap_refusal`'s questions (a script's names, its steps
to siblings, a widget's attributes, structural rules)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import pytest
from lxml import etree

from shifts import ShiftContext, apply_shifts, native
from shifts.document import HtmlDocument
from shifts.perceptual import locators
from shifts.perceptual.locators import LocatorDrift, WrapQuestions
from shifts.references import EMPTY, AssetRefs, PageRefs, css_refs, js_refs, merge_refs
from shifts.references.inline import inline_refs
from sites import GENERIC
from tests.helpers.fixtures import fixture_pages


def context(seed: int, wrap_rate: float) -> ShiftContext:
    return ShiftContext(
        episode_id="e",
        seed=seed,
        site=GENERIC,
        is_navigation=True,
        shift_params={"locator_drift": {"wrap_rate": wrap_rate}},
        assets=EMPTY,
    )


def drifted(raw: bytes, ctx: ShiftContext) -> tuple[bytes, object]:
    doc = apply_shifts([LocatorDrift.name], HtmlDocument(raw), ctx)
    return doc.to_bytes(), doc.notes[LocatorDrift.name]


def references_of(raw: bytes) -> Iterator[tuple[str, AssetRefs]]:
    """References that ask each question of some of the page's elements: its own classes and
    ids named by a script, stepped from, read as a widget's; structural rules on its tags."""
    classes = sorted(set(re.findall(rb'class="([\w-]+)', raw)))[::4][:12]
    ids = sorted(set(re.findall(rb'id="([\w-]+)', raw)))[::3][:12]
    names = [n.decode() for n in classes + ids]
    held = "; ".join(f"$('.{n}').show(); document.getElementById('{n}')" for n in names)
    yield "none", EMPTY
    yield "names", js_refs(held)
    yield "steps", js_refs(held + "; $(x).next('div'); $(y).prevAll('p'); $(z).nextAll('a')")
    yield "widget", js_refs(held + '; el.getAttribute("role"); el.getAttribute("data-id")')
    yield (
        "structure",
        merge_refs(
            [
                js_refs(held),
                css_refs(
                    "li > a { x: 1 } div > p:first-child { x: 1 } .%s + div { x: 1 }"
                    " section ~ span { x: 1 } ul li:nth-of-type(2) { x: 1 }"
                    % (names[0] if names else "none")
                ),
            ]
        ),
    )


def test_it_is_built_here() -> None:
    assert native.wrap_chosen is not None, native.why_not


@pytest.mark.parametrize("page", fixture_pages(), ids=lambda page: page.name)
def test_every_saved_page_drifts_the_same_with_it_and_without(
    page, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = page.read_bytes()
    compiled = native.wrap_chosen
    assert compiled is not None
    decided: list[int] = []

    def counted(*args: object) -> list[etree._Element] | None:
        wrapped = compiled(*args)
        decided.append(-1 if wrapped is None else len(args[0]))  # type: ignore[arg-type]
        return wrapped

    for label, assets in references_of(raw):
        for seed, rate in ((1, 0.5), (7, 0.9)):
            ctx = replace(context(seed, rate), assets=assets)
            monkeypatch.setattr(native, "wrap_chosen", counted)
            with_it = drifted(raw, ctx)
            monkeypatch.setattr(native, "wrap_chosen", None)
            without = drifted(raw, ctx)
            assert with_it == without, (label, seed)
    # (the C pass decided for every page, each time the drift wrapped: none declined)
    assert decided and -1 not in decided and sum(decided) > 0, decided


def test_each_question_is_asked_as_the_python_asks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # A page where each refusal has an element to refuse: a slot, a custom element's child,
    # SVG, a structural rule's match and its siblings, a name a script holds, a parent a
    # script walks, a sibling a script steps to, an element with an entity in its class.
    page = (
        b"<html><body><div id='held'><p>walked</p><p>children</p></div>"
        b"<div class='named'>n</div><section><div slot='s'>slotted</div></section>"
        b"<x-card><div>in a custom element</div></x-card><svg><g><div>foreign</div></g></svg>"
        b"<ul><li><a href='/'>a link</a></li></ul><div class='menu'><a href='/x'>x</a>"
        b"<span>after</span></div><p class='t&#1;x'>odd</p><div role='tab'>tab</div>"
        b"<article><p>first</p><p>second</p></article></body></html>"
    )
    assets = merge_refs(
        [
            js_refs(
                "document.getElementById('held'); $('.named'); $('.menu a').next('span');"
                " el.getAttribute('role')"
            ),
            css_refs("article > p:first-child { x: 1 }"),
        ]
    )
    for seed in range(6):
        ctx = replace(context(seed, 1.0), assets=assets)
        with_it = drifted(page, ctx)
        monkeypatch.setattr(native, "wrap_chosen", None)
        without = drifted(page, ctx)
        monkeypatch.undo()
        assert with_it == without, seed


def test_a_wrapper_a_structural_rule_matches_keeps_its_siblings_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A rule naming the episode's wrapper under `.box`: no child of the box matches it until
    # the first is wrapped; from then on its siblings stay (`WrapQuestions.wrapped`).
    page = b"<html><body><div class='box'><p>1</p><p>2</p><p>3</p></div></body></html>"
    for seed in range(3):
        assets = css_refs(f".box > {locators.wrapper_tag(seed)} {{ x: 1 }}")
        ctx = replace(context(seed, 1.0), assets=assets)
        with_it = drifted(page, ctx)
        tag = locators.wrapper_tag(seed).encode()
        assert b"<%s><p>1</p></%s><p>2</p><p>3</p>" % (tag, tag) in with_it[0]
        monkeypatch.setattr(native, "wrap_chosen", None)
        assert drifted(page, ctx) == with_it
        monkeypatch.undo()


def test_what_it_cannot_read_is_left_to_wrap_if_safe() -> None:
    page = etree.fromstring("<div><p>a</p><p>b</p></div>", etree.HTMLParser())
    chosen = list(page.iter("p"))
    refs = PageRefs(EMPTY, inline_refs(page))
    ask = WrapQuestions.of(refs)
    assert native.wrap_chosen is not None
    assert locators._wrap_chosen(chosen, "w-x", ask, refs) == chosen  # (decided in C)
    namespaced = etree.fromstring('<r xmlns="urn:x"><d><p/></d></r>')
    assert locators._wrap_chosen([namespaced[0][0]], "w-x", ask, refs) is None
    args = (chosen, "w-x", (), (), None, None, None, (None, None), str)
    assert native.wrap_chosen(*args) is not None
    for wrong in (
        (tuple(chosen), *args[1:]),  # (no list)
        (chosen, "w-x", [], *args[3:]),  # (tags not in a tuple)
        (*args[:4], (len, len, {}, {}), *args[5:]),  # (names of the wrong shape)
        (*args[:4], (len, None, {}, {}, len), *args[5:]),  # (one of them missing)
        (*args[:4], (len, len, [], {}, len), *args[5:]),  # (an answers' memo no dict)
        (*args[:6], (len, None, None), *args[7:]),  # (structure without its other questions)
        (*args[:6], (len, len, None), *args[7:]),
    ):
        assert native.wrap_chosen(*wrong) is None
    with pytest.raises(TypeError):
        native.wrap_chosen(*args[:8])


def test_a_subtree_with_a_namespace_is_placed_by_lxml() -> None:
    # A document with a namespace somewhere (no HTML parse makes one): each moved subtree is
    # looked at, and the one that declares a namespace is lxml's to move (it strips what an
    # ancestor declares again).
    raw = b'<r xmlns:x="u"><d><p/></d><d><q xmlns:x="u"/></d></r>'
    trees = [etree.fromstring(raw), etree.fromstring(raw)]
    placed_by_lxml: list[etree._Element] = []

    def place(element: etree._Element, tag: str) -> etree._Element:
        placed_by_lxml.append(element)
        return locators._place_wrapper_read(element, tag)

    assert native.wrap_chosen is not None
    chosen = list(trees[0])
    args = ("w-x", locators._FIXED_PARENT_TAGS, locators._FOREIGN_TAGS, None, None, None)
    assert native.wrap_chosen(chosen, *args, (None, None), place) == chosen
    assert placed_by_lxml == [chosen[1]]
    for element in list(trees[1]):
        locators._place_wrapper_read(element, "w-x")
    assert etree.tostring(trees[0]) == etree.tostring(trees[1])
    assert b'<q xmlns:x="u"/>' not in etree.tostring(trees[0])  # (lxml's move stripped it)
