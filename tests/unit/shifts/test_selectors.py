"""The fast path for lists of simple selectors answers exactly what cssselect answers."""

from __future__ import annotations

import pytest
from cssselect import SelectorError
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from lxml.cssselect import CSSSelector

from shifts.document import HtmlDocument
from shifts.selectors import (
    _MixedList,
    _SimpleList,
    compiled,
    descendants,
    elements,
    matched,
    matcher,
    protected_elements,
    select,
    with_any_attribute,
    with_any_attributes,
)
from sites import PROFILES, SiteProfile
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments

PAGE = etree.HTML(
    """<html><head><title>t</title></head><body class="title">
    <h1 class="subtitle">no</h1><div class="title main" id="top">yes</div>
    <span class="titles">no</span><a class="x title" href="#">link</a>
    <button role="button" data-qa="go">b</button><input type="submit" value="ok">
    <ul class="menu nav"><li>1</li></ul><ol class="menu"><li>2</li></ol>
    <p data-x="">empty attr</p><p title="a b">quoted</p></body></html>"""
)
SIMPLE = [
    ".title",
    "h1, .title",
    "div.title.main",
    "#top, a.title",
    "[role=button]",
    "[data-qa]",
    "[data-x]",
    "input[type=submit]",
    "input[type='submit']",
    '[title="a b"]',
    "ul.menu, ol.menu",
    "*",
    "title, h1, .project-title, .title, .x",
]
COMPLEX = ["ul li", "body > h1", "a:not(.main)", "[class~=title]", "li:first-child"]


@pytest.mark.parametrize("selector", SIMPLE)
def test_same_elements_in_the_same_order_as_cssselect(selector: str) -> None:
    query = compiled(selector)
    assert isinstance(query, _SimpleList)
    assert query(PAGE) == CSSSelector(selector)(PAGE)
    assert query(PAGE)  # each selector matches something here, so equality means something


@pytest.mark.parametrize(
    "selector, expected",
    [
        ("ul li", [("li", "1")]),
        ("body > h1", [("h1", "no")]),
        ("a:not(.main)", [("a", "link")]),
        ("[class~=title]", [("body", None), ("div", "yes"), ("a", "link")]),
        ("li:first-child", [("li", "1"), ("li", "2")]),
    ],
)
def test_complex_selectors_select_the_expected_elements(
    selector: str, expected: list[tuple[str, str | None]]
) -> None:
    """Combinators and pseudo-classes go to cssselect: checked against known answers."""
    assert selector in COMPLEX and not isinstance(compiled(selector), _SimpleList)
    found = select(PAGE, selector)
    assert [e.tag for e in found] == [tag for tag, _ in expected]
    for (tag, text), element in zip(expected, found, strict=True):
        if text is not None:
            assert (element.tag, str(element.xpath("string()")).strip()) == (tag, text)


def _class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


# Every selector of a shipped profile that is not a list of simple selectors, with an XPath
# written by hand that means the same: what cssselect answers on real pages is checked
# against it (comparing cssselect with itself would prove nothing).
COMPLEX_IN_PROFILES = {
    "#the-list .column-title": f"//*[@id='the-list']//*[{_class('column-title')}]",
    ".cart .item .product-name": (
        f"//*[{_class('cart')}]//*[{_class('item')}]//*[{_class('product-name')}]"
    ),
    ".product-info-main .product.attribute.sku": (
        f"//*[{_class('product-info-main')}]"
        f"//*[{_class('product')} and {_class('attribute')} and {_class('sku')}]"
    ),
    "[role=navigation] ul": "//*[@role='navigation']//ul",
    "nav ol": "//nav//ol",
    "nav ul": "//nav//ul",
}


def profile_selectors() -> list[str]:
    found: set[str] = set()
    for profile in PROFILES.values():
        for group in (
            profile.protected_selectors,
            profile.nav_lists,
            profile.sidebars,
            profile.synthetic_target.reorder_selectors,
        ):
            found.update(group)
    return sorted(found)


PAGES = {page.name: page for page in fixture_pages()}
TREES = {name: HtmlDocument(page.read_bytes()).tree for name, page in PAGES.items()}


@pytest.mark.parametrize("selector", profile_selectors())
def test_every_profile_selector_on_real_pages(selector: str) -> None:
    query = compiled(selector)
    if isinstance(query, _SimpleList):
        for name, root in TREES.items():
            assert query(root) == CSSSelector(selector)(root), name
    else:
        reference = etree.XPath(COMPLEX_IN_PROFILES[selector])
        for name, root in TREES.items():
            assert query(root) == elements(reference, root), name


def test_the_complex_profile_selectors_are_all_covered() -> None:
    complex_ones = {s for s in profile_selectors() if not isinstance(compiled(s), _SimpleList)}
    assert complex_ones == set(COMPLEX_IN_PROFILES)


def test_real_pages_give_the_comparisons_something_to_compare() -> None:
    matched = {s for s in profile_selectors() for root in TREES.values() if select(root, s)}
    assert {"h1", "title", ".price", ".page-title", "nav ul", "nav ol"} <= matched
    assert "[role=navigation] ul" in matched and len(matched) >= 15
    [breadcrumb] = select(TREES["15.x-webarena__project-page.html"], "nav ol")
    assert breadcrumb.get("class") == "breadcrumb repo-breadcrumb"


# Class attributes split where XPath's `normalize-space` splits them (spaces, tabs, line ends)
# and nowhere else (a no-break space is part of a name).
ODD_CLASSES = etree.HTML(
    "<html><body><p class='a\u00a0b'>1</p><p class='a\tb\nc\rd'>2</p><p class=' a  b '>3</p>"
    "<p class='ab'>4</p><p class=''>5</p><p class='a' id='x' data-k='v'>6</p>"
    "<span class='b a'>7</span><p class='a x\u00a0b'>8</p></body></html>"
)


@pytest.mark.parametrize(
    "selector",
    [*SIMPLE, ".a", ".b", ".d", "p.a.b", "span.a", ".a#x", ".a[data-k=v]", ".ab"],
)
def test_matched_is_the_set_cssselect_selects(selector: str) -> None:
    """`matched` tests classes in Python, not in libxml2's XPath: the same elements."""
    for root in (PAGE, ODD_CLASSES):
        assert matched(root, selector) == set(CSSSelector(selector)(root))
    assert matched(PAGE, selector) or matched(ODD_CLASSES, selector)


def test_matched_splits_class_names_as_xpath_does() -> None:
    texts = {
        selector: sorted(e.text for e in matched(ODD_CLASSES, selector))
        for selector in (".a", ".b", ".c", ".d", ".ab", "p.a.b", ".a[data-k=w]")
    }
    assert texts == {
        ".a": ["2", "3", "6", "7", "8"],
        ".b": ["2", "3", "7"],
        ".c": ["2"],
        ".d": ["2"],
        ".ab": ["4"],
        "p.a.b": ["2", "3"],  # (not 8: its classes read again as XPath reads them)
        ".a[data-k=w]": [],
    }


@pytest.mark.parametrize("selector", profile_selectors())
def test_matched_on_real_pages(selector: str) -> None:
    for name, root in TREES.items():
        assert matched(root, selector) == set(select(root, selector)), name


@pytest.mark.parametrize("profile", list(PROFILES.values()), ids=lambda p: p.name)
def test_protected_lists_on_real_pages(profile: SiteProfile) -> None:
    """The joined list protected_elements uses, element for element, on every page."""
    joined = ", ".join(profile.protected_selectors)
    for name, root in TREES.items():
        expected: set[etree._Element] = set()
        for selector in profile.protected_selectors:
            query = compiled(selector)
            matches = (
                elements(CSSSelector(selector), root)
                if isinstance(query, _SimpleList)
                else elements(etree.XPath(COMPLEX_IN_PROFILES[selector]), root)
            )
            for element in matches:
                expected.update(element.iter())
        assert protected_elements(root, profile.protected_selectors) == expected, name
        assert set(select(root, joined)) <= expected


@pytest.mark.parametrize(
    "profile",
    [
        p
        for p in PROFILES.values()
        if isinstance(compiled(", ".join(p.protected_selectors)), _MixedList)
    ],
    ids=lambda p: p.name,
)
def test_a_list_mixing_simple_and_other_selectors_is_cssselects_list(
    profile: SiteProfile,
) -> None:
    """Same elements in the same order as the reference XPaths united (document order)."""
    joined = ", ".join(profile.protected_selectors)
    reference = etree.XPath(
        " | ".join(
            COMPLEX_IN_PROFILES.get(selector) or CSSSelector(selector).path
            for selector in profile.protected_selectors
        )
    )
    matched = 0
    for name, root in TREES.items():
        assert compiled(joined)(root) == elements(reference, root), name
        matched += len(elements(reference, root))
    assert matched


@pytest.mark.parametrize("selector", ['[title="\\41"]', "[data-x=1]", "", " "])
def test_what_the_fast_path_would_read_differently_goes_to_cssselect(selector: str) -> None:
    """An escape, an unquoted value that is no identifier, an empty selector: cssselect's
    answer (or its error), never a test of its own."""
    from shifts.selectors import _parse_simple

    assert _parse_simple(selector) is None
    listed = f"{selector}, h1"
    try:
        expected: object = CSSSelector(listed)(PAGE)
    except SelectorError as error:
        expected = type(error)
    try:
        found: object = select(PAGE, listed)
    except SelectorError as error:
        found = type(error)
    assert found == expected


def test_a_mixed_list_is_what_its_parts_select_and_a_comma_inside_falls_back() -> None:
    mixed = compiled("h1, ul li, .title")
    assert isinstance(mixed, _MixedList)
    assert [e.tag for e in mixed(PAGE)] == ["body", "h1", "div", "a", "li"]  # document order
    assert mixed(PAGE) == CSSSelector("h1, ul li, .title")(PAGE)
    inside = "a:is(.x, .main), h1"  # the split leaves halves that are no selectors
    assert not isinstance(compiled(inside), _MixedList)
    assert select(PAGE, inside) == CSSSelector(inside)(PAGE)


@pytest.mark.parametrize("selector", ["a, button, [role=button]", "ul li"])
def test_select_containing_keeps_elements_whose_text_holds_a_needle(selector: str) -> None:
    from shifts.selectors import select_containing

    texts = ["lin", "1", "it's"]
    found = select(PAGE, selector)
    expected = [e for e in found if any(t in str(e.xpath("string()")) for t in texts)]
    assert select_containing(PAGE, selector, texts) == expected and expected


def test_with_any_attribute_selects_what_an_or_of_the_attributes_selects() -> None:
    names = ("for", "aria-labelledby", "aria-controls", "form", "data-testid", "role")
    page = b"<p for=x><i aria-controls=y></i><b data-testid></b><u forx=1></u><s data-test=2></s>"
    for raw in [page, *(path.read_bytes() for path in fixture_pages())]:
        root = etree.fromstring(raw, etree.HTMLParser())
        by_or = descendants(root, "*[" + " or ".join(f"@{name}" for name in names) + "]")
        assert with_any_attribute(root, names) == by_or
    root = etree.fromstring(page, etree.HTMLParser())
    assert [e.tag for e in with_any_attribute(root, names)] == ["p", "i", "b"]


def test_with_any_attributes_is_one_walk_for_each_set_of_names() -> None:
    hooks, references = ("data-testid", "data-test"), ("for", "aria-controls", "form")
    page = b"<p for=x><i aria-controls=y data-test=1></i><b data-testid></b><u forx=1></u>"
    for raw in [page, *(path.read_bytes() for path in fixture_pages())]:
        root = etree.fromstring(raw, etree.HTMLParser())
        found = with_any_attributes(root, hooks, references, ())
        assert found == (
            with_any_attribute(root, hooks),
            with_any_attribute(root, references),
            [],
        )
    root = etree.fromstring(page, etree.HTMLParser())
    holding, referring = with_any_attributes(root, hooks, references)
    assert [e.tag for e in holding] == ["i", "b"]
    assert [e.tag for e in referring] == ["p", "i"]


def test_an_element_matches_a_simple_selector_and_any_other_matches_all() -> None:
    page = b"<p><span class='a b' data-x='1'>x</span><b>y</b></p>"
    root = etree.fromstring(page, etree.HTMLParser())
    span, bold = root.find(".//span"), root.find(".//b")
    assert matcher("span")(span) and matcher("span.a.b")(span) and matcher("[data-x]")(span)
    assert not matcher("span")(bold) and not matcher(".c")(span) and not matcher("b.a")(bold)
    assert matcher("p > span:first-child")(bold)  # (not simple: kept in place, as any)


def test_matched_holds_the_element_asked_of_as_cssselect_does() -> None:
    # (`descendant-or-self`: a tag alone is found by lxml's walk, which starts at `root`)
    root = etree.HTML("<html><body><div id='a'><div>1</div><h1>t</h1></div><p/></body></html>")
    top = root.find(".//div")
    assert top is not None
    for selector in ("div", "h1, div", "div[id], h1", "*", "p"):
        assert matched(top, selector) == set(CSSSelector(selector)(top)), selector
    assert top in matched(top, "div")


# Selector lists with chains of simple compounds (descendant combinators alone): `matched`
# finds those from their last compound's matches, asked of their ancestors.
CHAINS = [
    ".product-info-main .product.attribute.sku",
    ".cart .item .product-name",
    "#the-list .column-title",
    "body .gl-link",
    "div .gl-icon",
    "nav ul li a",
    "[role=navigation] li",
    "DIV .menu-item",  # (an element's name as XPath reads it: in its case)
    "html body  div\t.btn",
    ".menu-item .menu-item",
    "ul.menu li.menu-item",
    "header a[href]",
    "li li",
]


@pytest.mark.parametrize(
    "selector", ["li\xa0 div", "\xa0li div", "ul li\u3000", "ul\u2003 .a", "li\u2028 div", "li\xa0"]
)
def test_a_space_beyond_ascii_is_part_of_a_name_as_cssselect_reads_it(selector: str) -> None:
    """No CSS whitespace (`str.strip` would take it for one): `li\xa0` names no `li`."""
    root = etree.HTML("<html><body><ul><li><div class='a'>x</div></li></ul><h1/></body></html>")
    listed = f"h1,{selector}"
    assert matched(root, listed) == set(CSSSelector(listed)(root)) == set(root.iter("h1"))
    assert select(root, listed) == CSSSelector(listed)(root)


@pytest.mark.parametrize("chain", CHAINS)
def test_a_chain_in_a_list_matches_what_cssselect_selects(chain: str) -> None:
    listed = f"h1, {chain}"
    assert compiled(listed).unordered.chains  # type: ignore[union-attr]
    for name, root in TREES.items():
        assert matched(root, listed) == set(CSSSelector(listed)(root)), name


def test_the_chains_find_something_on_the_saved_pages() -> None:
    found = {
        chain
        for chain in CHAINS
        for root in TREES.values()
        if matched(root, f"h1, {chain}") - set(root.iter("h1"))
    }
    assert len(found) >= 8, found


CHAIN_TREE_TAGS = ["div", "ul", "li", "a"]


@settings(max_examples=300, deadline=None)
@given(
    fragment=fragments(CHAIN_TREE_TAGS, ["class", "id", "role"], ["a", "b", "a b", "x", ""]),
    chain=st.lists(
        st.sampled_from(["div", "li", "a", ".a", ".b", "#x", "[role=a]", "li.a", ".a.b", "*"]),
        min_size=2,
        max_size=4,
    ),
    from_below=st.booleans(),
)
def test_generated_chains_match_what_cssselect_selects(
    fragment: str, chain: list[str], from_below: bool
) -> None:
    """From the root, and from an element below it (whose ancestors the chain may not use)."""
    root = etree.fromstring(f"<html><body class='a'>{fragment}</body></html>", etree.HTMLParser())
    listed = "h1, " + " ".join(chain)
    top = root[-1][0] if from_below and len(root[-1]) else root
    assert matched(top, listed) == set(CSSSelector(listed)(top))
