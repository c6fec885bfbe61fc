"""What stylesheets reference, read from their selectors."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from shifts.references import (
    MAX_VARIANTS,
    css_refs,
)
from shifts.references import css as css_reader
from shifts.references.css import joined_css_refs
from tests.helpers.fixtures import fixture_pages
from tests.helpers.joined_texts import texts_left_open
from tests.unit.shifts.references.helpers import element


def test_css_selectors_give_ids_classes_attributes_and_tags() -> None:
    refs = css_refs(
        "/* #not-me */ #root, .nav a.active:hover { color: red }"
        "@media (max-width: 10px) { [data-x='1'] > .card { margin: 0 } }"
        ".u\\:hidden { display: none } a[href$='.pdf']::after { content: '#no {'}"
    )
    assert refs.ids == {"root"}
    assert refs.classes == {"nav", "active", "card", "u:hidden"}
    assert refs.attributes == {"data-x", "href"} and refs.values == {"1", ".pdf"}
    assert {"a"} <= refs.tags
    assert refs.references("root") and not refs.references("not-me")


def test_structural_selectors_are_known_with_their_context() -> None:
    refs = css_refs(
        "blockquote > :first-child {} .list li + li {} .menu > * {} div:has(> img) {}"
        ".x:not(:last-child) {}"
    )
    page = (
        "<html><body><blockquote><p>a</p></blockquote><div class='list'><ul><li>1</li>"
        "<li>2</li></ul></div><p class='x'>y</p><nav class='menu'><a>m</a></nav>"
        "<section><p>free</p></section></body></html>"
    )
    assert refs.structure_matters(element(page, "//blockquote/p"))
    assert refs.structure_matters(element(page, "//li[2]"))
    assert refs.structure_matters(element(page, "//nav/a"))  # `.menu > *`
    assert refs.structure_matters(element(page, "//p[@class='x']"))  # `:not(:last-child)`
    assert not refs.structure_matters(element(page, "//section/p"))  # no rule concerns it
    assert refs.looks_inside(element(page, "//section/..")) is False
    assert css_refs("div:has(> img) {}").looks_inside(element(page, "//div"))


def test_a_universal_compound_keeps_the_context_before_it() -> None:
    # Wagtail's `.w-field__input > * > input`: the input depends on sitting two levels inside
    # a `.w-field__input`, not on sitting inside any element (`* > input`, which held every
    # input of the admin's pages), and `.a * > b` likewise.
    refs = css_refs(".w-field__input > * > input {} .a * > b {} .row > * + * > i {}")
    page = (
        "<html><body><div class='w-field__input'><span><input id='held'></span></div>"
        "<form><div><input id='free'></div></form><div class='a'><p><b id='held-b'>x</b></p>"
        "</div><p><b id='free-b'>y</b></p><div class='row'><p></p><p><i id='held-i'>z</i></p>"
        "</div><p><i id='free-i'>w</i></p></body></html>"
    )
    for held in ("held", "held-b", "held-i"):
        assert refs.structure_matters(element(page, f"//*[@id='{held}']")), held
    for free in ("free", "free-b", "free-i"):
        assert not refs.structure_matters(element(page, f"//*[@id='{free}']")), free
    # The universal compound itself still needs its parent: wrapping it would move the input.
    assert refs.structure_matters(element(page, "//span"))


def test_a_run_of_universal_compounds_keeps_the_context_before_it() -> None:
    # Bootstrap 5's `.table>:not(caption)>*>*` (phpMyAdmin's theme.css): the cells depend on
    # sitting three levels inside a `.table`, not on having any grandparent (`* * > *` held
    # every element of every page loading the stylesheet: shares 0.00-0.33 on its login page).
    refs = css_refs(".table>:not(caption)>*>* {} .a > * > * > b {}")
    page = (
        "<html><body><table class='table'><tbody><tr><td id='held'>x</td></tr></tbody>"
        "</table><div class='a'><p><span><b id='held-b'>y</b></span></p></div>"
        "<form><div class='row'><div><input id='free'></div></div></form>"
        "<p><span><b id='free-b'>z</b></span></p></body></html>"
    )
    for held in ("held", "held-b"):
        assert refs.structure_matters(element(page, f"//*[@id='{held}']")), held
    for free in ("free", "free-b"):
        assert not refs.structure_matters(element(page, f"//*[@id='{free}']")), free


def test_structure_is_read_past_quoted_values_relative_and_nested_selectors() -> None:
    page = (
        "<html><body><div data-k='x.y'><a>1</a><a>2</a></div>"
        "<ul class='a'><li class='b'>b</li></ul><p class='c'>c</p><p class='d'>d</p>"
        "<section><i class='e'>e</i></section><div title='a > b'><em>f</em></div></body></html>"
    )
    # A value that looks like a class or an id (`.y`, `#z`) is a value: these `a` depend on
    # being siblings under that div.
    quoted = css_refs('[data-k="x.y"] > a + a { margin: 0 }')
    assert quoted.structure_matters(element(page, "//div[@data-k]/a[2]"))
    assert css_refs("[data-k='x.y'] > a:first-child {}").structure_matters(
        element(page, "//div[@data-k]/a[1]")
    )
    # Relative selectors in :has() are relative to the compound they belong to.
    assert css_refs(".a:has(> .b) {}").structure_matters(element(page, "//li"))
    assert css_refs(".c:has(+ .d) {}").structure_matters(element(page, "//p[@class='d']"))
    assert css_refs(".c:has(+ .d) {}").structure_matters(element(page, "//p[@class='c']"))
    # A nested rule relative to its parent rule (`> .e` inside a block): relative to anything.
    assert css_refs("section { > .e { color: red } }").structure_matters(element(page, "//i"))
    # A combinator inside a string is text: `a > b` here is no child rule.
    titled = css_refs('[title="a > b"] em { color: red }')
    assert not titled.structure_matters(element(page, "//em"))


def test_is_and_where_are_read_by_their_alternatives() -> None:
    page = (
        "<html><body><div><input id='i'><b class='comment'>c</b></div>"
        "<section><p id='p'>p</p><p id='q'>q</p></section></body></html>"
    )
    # A compound whose only test is `:is()` named nothing: every element beside another one
    # mattered. Read by its alternatives, it is about inputs and textareas beside a comment.
    refs = css_refs(
        ":is(input,textarea,.editor .content):not(:focus,:has(~:where(.comment:hover))) {}"
    )
    assert refs.structure_matters(element(page, "//input"))
    assert refs.structure_matters(element(page, "//b"))
    assert not refs.structure_matters(element(page, "//*[@id='q']"))
    assert css_refs("section > :is(p, ul) {}").structure_matters(element(page, "//*[@id='q']"))
    assert css_refs("a:where(.x, .y) > :is(b) {}").structure_matters(element(page, "//b")) is False
    # An escaped comma is part of a name, not a list's separator.
    escaped = "<html><body><div class='a,b'><p>x</p></div></body></html>"
    assert css_refs(":is(.a\\,b, .c) > p {}").structure_matters(element(escaped, "//p"))


def test_many_lists_in_one_selector_cost_no_more_than_the_cap() -> None:
    """Sixteen `:is()` lists of two are 65,536 selectors: past `MAX_VARIANTS` the selector is
    read as it is (every `p` in place), said as soon as the cap is passed (each list used to
    be expanded anyway: seconds per selector)."""
    page = "<html><body><div><p>x</p></div></body></html>"
    refs = css_refs(" ".join([":is(.a, .b)"] * 16) + " > p {}")
    assert refs.structure_matters(element(page, "//p"))
    calls = []
    original = css_reader._expanded

    def counted(selector: str) -> object:
        calls.append(selector)
        return original(selector)

    css_reader._expanded = counted  # type: ignore[assignment]
    try:
        css_reader._alternatives(" ".join([":is(.a, .b)"] * 16) + " > p")
    finally:
        css_reader._expanded = original
    assert len(calls) < 8 * MAX_VARIANTS  # (it made 131,071 calls)


def test_a_has_about_later_siblings_does_not_look_inside() -> None:
    page = "<html><body><div class='c'><i>x</i></div><p class='d'>d</p></body></html>"
    refs = css_refs(".c:has(~ .d) {}")
    assert not refs.looks_inside(element(page, "//div"))
    assert refs.structure_matters(element(page, "//div"))  # it keeps its later siblings
    assert refs.structure_matters(element(page, "//p"))
    assert css_refs(".c:has(> i) {}").structure_matters(element(page, "//i"))


def test_an_escaped_colon_in_a_has_names_no_pseudo_class() -> None:
    """`.md\\:flex` is a class (Tailwind's responsive ones): a `:has()` of it is a rule of the
    page, which holds the children it names, not a selector that throws."""
    page = "<html><body><div class='c'><i class='md:flex'>x</i></div></body></html>"
    assert css_refs(r".c:has(> .md\:flex) {}").structure_matters(element(page, "//i"))
    assert css_refs(r".c:has(> .hover\:bg-red) {}").structure
    assert not css_refs(".c:has(> :no-such-thing) {}").structure


def test_a_has_is_dropped_only_for_what_throws() -> None:
    """`:is()` and `:where()` read a selector they do not know as one that matches nothing (a
    forgiving list): a `:has()` holding one is valid. A plugin's pseudo-class that pages use
    (jquery.validate's `:filled`) is one an engine defines."""
    assert css_refs("div:has(> :is(:jqfake, a)) {}").structure
    assert css_refs("div:has(> :where(:not(:x), a)) {}").structure
    assert css_refs("form:has(> :filled) {}").structure
    assert not css_refs("div:has(> :not(:jqfake)) {}").structure  # (`:not()` does not forgive)


def test_a_flat_selector_splits_as_one_with_brackets_does() -> None:
    """Selectors with no string, bracket or parenthesis take a shortcut (one regex split);
    the same selector with an attribute test takes the character walk: both must agree."""
    cases = {
        "a  >  b + c ~ d e": (["a", "b", "c", "d", "e"], [">", "+", "~", " "]),
        "> .b": (["*", ".b"], [">"]),
        ".a\t\n.b\u00a0>\u00a0.c": ([".a", ".b", ".c"], [" ", ">"]),
        ".a + > .b ": ([".a", ".b"], [">"]),
        "": ([], []),
    }
    for selector, (compounds, combinators) in cases.items():
        assert css_reader.split_compounds(selector) == (compounds, combinators), selector
        if compounds:  # the last compound with an attribute test: the same split
            walked = css_reader.split_compounds(selector.strip() + "[x]")
            assert walked == ([*compounds[:-1], compounds[-1] + "[x]"], combinators), selector


def test_a_selector_list_splits_at_its_top_level_commas_only() -> None:
    assert list(css_reader.split_top_level(" a , .b ,#c")) == ["a", ".b", "#c"]
    assert list(css_reader.split_top_level(":is(a, b), .c")) == [":is(a, b)", ".c"]
    assert list(css_reader.split_top_level(".a\\,b, .c")) == [".a\\,b", ".c"]


def test_a_childs_rule_keeps_what_its_parent_sits_in() -> None:
    """`.panel div > :not(h1)` (WordPress's admin stylesheet, on every admin page) was read
    as `div > *`: every child of every div held in place, the drift's share 0.06-0.30. It is
    about children of divs inside a `.panel` only; a `P > div > *` alike."""
    page = (
        "<html><body><div class='wrap'><div><a id='free'>x</a></div></div>"
        "<div class='panel'><div><p id='held'>y</p></div></div>"
        "<section class='s'><div><i id='held-too'>z</i></div></section></body></html>"
    )
    refs = css_refs(".panel div > :not(h1) {} section.s > div > * {}")
    assert not refs.structure_matters(element(page, "//*[@id='free']"))
    assert refs.structure_matters(element(page, "//*[@id='held']"))
    assert refs.structure_matters(element(page, "//*[@id='held-too']"))


# A page's inline styles are read one by one (each once for every page that holds it) where that
# reads as the styles joined: what a style may leave open at its end, and what the next may
# start with that reads otherwise after it.
CSS_PIECES = [".a{}", "b { c: d }", "#i > .j {}", "@media x { .k {} }", ";", " ", "\n", ","]
CSS_OPENERS = [".l", ".m,", "/* c", "/* c { } ", "x { y: z", '.n[title="', "p:has(", "}", "/* c */"]
CSS_STARTS = ["{}", ".q{}", "*/ .r{}", "} .s{}", ' "] {}', ") {}", ".t:first-child {}"]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_left_open(CSS_PIECES, CSS_OPENERS, CSS_STARTS, "", 4))
def test_styles_read_alone_and_joined_read_as_the_joined_text(texts: list[str]) -> None:
    assert joined_css_refs(texts) == css_refs(css_reader.JOINER.join(texts))


def test_saved_pages_inline_styles_read_alone_as_joined() -> None:
    from lxml import etree

    from shifts.references.inline import _INLINE_STYLES, _texts

    styled = 0
    for page in fixture_pages():
        texts = _texts(_INLINE_STYLES, etree.fromstring(page.read_bytes(), etree.HTMLParser()))
        assert joined_css_refs(texts) == css_refs(css_reader.JOINER.join(texts)), page.name
        styled += len(texts) > 1
    assert styled >= 3
