"""The alignment checker catches what it must: each hand-made change to a real saved page (a
form's action, method, field name or type; a link target; a protected entity's text; an
interactive element gone or added) gives exactly the violation kind it should, and the
untouched page gives none."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from lxml import etree

from shifts.alignment import Violation, check_alignment
from shifts.document import HtmlDocument
from shifts.selectors import elements
from sites import MAGENTO, WORDPRESS, SiteProfile
from tests.helpers.fixtures import FIXTURES

WP_LOGIN = FIXTURES / "wordpress" / "5.0.3__wp-login.html"
MAGENTO_PRODUCT = FIXTURES / "magento" / "2.4-unknown__product-page.html"
SITES = {WP_LOGIN: WORDPRESS, MAGENTO_PRODUCT: MAGENTO}

Checker = Callable[[HtmlDocument, HtmlDocument, SiteProfile], list[Violation]]
Edit = Callable[[etree._Element], None]


def one(root: etree._Element, xpath: str) -> etree._Element:
    """The single element `xpath` names: an edit that misses its target would prove nothing."""
    found = elements(etree.XPath(xpath), root)
    assert len(found) == 1, (xpath, len(found))
    return found[0]


def set_attribute(xpath: str, name: str, value: str) -> Edit:
    def edit(root: etree._Element) -> None:
        element = one(root, xpath)
        assert element.get(name) != value
        element.set(name, value)

    return edit


def set_text(xpath: str, text: str) -> Edit:
    def edit(root: etree._Element) -> None:
        element = one(root, xpath)
        assert element.text != text
        element.text = text

    return edit


def remove(xpath: str) -> Edit:
    def edit(root: etree._Element) -> None:
        element = one(root, xpath)
        parent = element.getparent()
        assert parent is not None
        parent.remove(element)

    return edit


def append(xpath: str, markup: str) -> Edit:
    def edit(root: etree._Element) -> None:
        one(root, xpath).append(etree.fromstring(markup))

    return edit


def swap_children(xpath: str) -> Edit:
    """Reverse the element children of one element (order changes, nothing else)."""

    def edit(root: etree._Element) -> None:
        parent = one(root, xpath)
        children = list(parent)
        assert len(children) > 1
        for child in children:
            parent.remove(child)
        for child in reversed(children):
            parent.append(child)

    return edit


@dataclass(frozen=True)
class Mutation:
    name: str
    page: Path
    edit: Edit
    # The violation kinds expected, one entry per violation. A changed form or link is two:
    # the old one is gone (1 before, 0 after) and a new one appeared (0 before, 1 after).
    kinds: tuple[str, ...]


WP_FORM = "//form[@id='loginform']"
MG_SEARCH = "//form[@id='search_mini_form']"
MG_CART = "//form[@id='product_addtocart_form']"
MUTATIONS = [
    # (a) forms
    Mutation(
        "wp form action",
        WP_LOGIN,
        set_attribute(WP_FORM, "action", "/elsewhere"),
        ("form", "form"),
    ),
    Mutation("wp form method", WP_LOGIN, set_attribute(WP_FORM, "method", "get"), ("form", "form")),
    Mutation(
        "wp field name",
        WP_LOGIN,
        set_attribute("//input[@name='pwd']", "name", "password"),
        ("form", "form"),
    ),
    Mutation(
        "wp field type",
        WP_LOGIN,
        set_attribute("//input[@name='pwd']", "type", "text"),
        ("form", "form"),
    ),
    Mutation(
        # A hidden field made visible: the form differs and one more control is interactive.
        "wp hidden field shown",
        WP_LOGIN,
        set_attribute("//input[@name='testcookie']", "type", "text"),
        ("form", "form", "interactive"),
    ),
    Mutation(
        "magento form action",
        MAGENTO_PRODUCT,
        set_attribute(MG_SEARCH, "action", "https://ke.oraimo.com/catalogsearch/advanced/"),
        ("form", "form"),
    ),
    Mutation(
        "magento form method",
        MAGENTO_PRODUCT,
        set_attribute(MG_SEARCH, "method", "post"),
        ("form", "form"),
    ),
    Mutation(
        "magento field name",
        MAGENTO_PRODUCT,
        set_attribute(f"{MG_CART}//input[@name='product']", "name", "product_id"),
        ("form", "form"),
    ),
    Mutation(
        "magento field type",
        MAGENTO_PRODUCT,
        set_attribute(f"{MG_SEARCH}//input[@name='q']", "type", "search"),
        ("form", "form"),
    ),
    # (b) links
    Mutation(
        "wp link href",
        WP_LOGIN,
        set_attribute("//p[@id='nav']/a", "href", "https://ex.lo/wp-login.php?action=register"),
        ("link", "link"),
    ),
    Mutation(
        "magento link href",
        MAGENTO_PRODUCT,
        set_attribute("//a[@href='https://ke.oraimo.com/checkout/cart/']", "href", "/cart"),
        ("link", "link"),
    ),
    # (c) protected entities
    Mutation("wp title", WP_LOGIN, set_text("//title", "Sign In WP Lab"), ("entity",)),
    Mutation("wp h1", WP_LOGIN, set_text("//h1/a", "WP Lab!"), ("entity",)),
    Mutation(
        # The price is protected by `.price` and, around it, by `.price-box`.
        "magento price",
        MAGENTO_PRODUCT,
        set_text("//span[@class='price'][.='KES2,200']", "KES1,200"),
        ("entity", "entity"),
    ),
    Mutation(
        # The product name is the h1 and the .page-title.
        "magento product name",
        MAGENTO_PRODUCT,
        set_text("//h1[contains(@class, 'page-title')]/span", "oraimo SmartScale 2"),
        ("entity", "entity"),
    ),
    # (d) interactive elements
    Mutation(
        "wp button appears",
        WP_LOGIN,
        append("//div[@id='login']", "<button type='button'>Help</button>"),
        ("interactive",),
    ),
    Mutation(
        "wp role=button appears",
        WP_LOGIN,
        append("//p[@id='nav']", "<span role='button'>Help</span>"),
        ("interactive",),
    ),
    Mutation(
        # A nameless button is no form field: only the count of controls changes.
        "magento add-to-cart button disappears",
        MAGENTO_PRODUCT,
        remove("//button[@id='product-addtocart-button']"),
        ("interactive",),
    ),
    Mutation(
        # A link gone: its target leaves the multiset and a control is gone.
        "wp link disappears",
        WP_LOGIN,
        remove("//p[@id='backtoblog']/a"),
        ("link", "interactive"),
    ),
]


def page(path: Path) -> HtmlDocument:
    return HtmlDocument(path.read_bytes())


def mutated(mutation: Mutation) -> HtmlDocument:
    doc = page(mutation.page)
    mutation.edit(doc.tree)
    doc.mark_changed()
    return doc


def assert_caught(checker: Checker, mutation: Mutation) -> None:
    violations = checker(page(mutation.page), mutated(mutation), SITES[mutation.page])
    assert violations, f"{mutation.name}: not caught"
    assert sorted(v.kind for v in violations) == sorted(mutation.kinds), violations


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_each_change_gives_exactly_the_expected_violation(mutation: Mutation) -> None:
    assert_caught(check_alignment, mutation)


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_the_change_also_shows_through_the_serialized_bytes(mutation: Mutation) -> None:
    """The checker on bytes (as the CLI and the API call it) sees the same differences."""
    shifted = mutated(mutation).to_bytes()
    violations = check_alignment(mutation.page.read_bytes(), shifted, SITES[mutation.page])
    assert sorted(v.kind for v in violations) == sorted(mutation.kinds), violations


@pytest.mark.parametrize("path", [WP_LOGIN, MAGENTO_PRODUCT], ids=lambda p: p.name)
def test_the_unmodified_page_has_no_violation(path: Path) -> None:
    raw = path.read_bytes()
    assert check_alignment(raw, raw, SITES[path]) == []
    # Parsed and serialized again, nothing a task needs differs either.
    reserialized = page(path)
    reserialized.mark_changed()
    assert check_alignment(raw, reserialized.to_bytes(), SITES[path]) == []


def test_links_are_a_multiset_so_reordering_is_no_violation() -> None:
    doc = page(MAGENTO_PRODUCT)
    swap_children("(//ul[count(li/a[@href]) > 2])[1]")(doc.tree)
    assert check_alignment(page(MAGENTO_PRODUCT), doc, MAGENTO) == []


def test_a_link_is_its_target_as_a_browser_requests_it() -> None:
    # A control character, a space, a quote or a non-ASCII one on a UTF-8 page, written raw or
    # percent-encoded, is the same request (a browser's URL parser encodes them in every part of
    # a URL), and so are blanks at the ends, which it drops; a backslash is not its escape (a
    # browser reads `\` in an http URL as `/`), nor is a bracket or a pipe, nor a blank at an
    # end encoded, nor a non-ASCII one in a query of a page in another encoding.
    def linked(href: str, action: str = "/s", charset: str = "utf-8") -> bytes:
        href, action = html.escape(href), html.escape(action)
        page = f'<meta charset="{charset}"><form action="{action}"></form><a href="{href}">a</a>'
        return page.encode(charset)

    site = WORDPRESS
    alike = [("/x\x03y z", "/x%03y%20z"), ('/a"<é>', "/a%22%3C%C3%A9%3E"), ("\x01 /a\n", "/a")]
    for raw, encoded in alike:
        assert check_alignment(linked(raw), linked(encoded), site) == [], raw
        assert check_alignment(linked("/", raw), linked("/", encoded), site) == [], raw
    for raw, encoded in [
        ("/a\\b", "/a%5Cb"),
        ("/a[1]", "/a%5B1%5D"),
        ("/a|b", "/a%7Cb"),
        ("/a\x01 ", "/a%01%20"),
        ("/a\x01\nb", "/a%01%0Ab"),
    ]:
        # (each a target gone and one come)
        links = check_alignment(linked(raw), linked(encoded), site)
        assert [v.kind for v in links] == ["link", "link"], raw
        forms = check_alignment(linked("/", raw), linked("/", encoded), site)
        assert [v.kind for v in forms] == ["form", "form"], raw
    other = [
        linked("/s?q=д", charset="windows-1251"),
        linked("/s?q=%D0%B4", charset="windows-1251"),
    ]
    assert [v.kind for v in check_alignment(*other, site)] == ["link", "link"]


def test_violations_name_what_differs() -> None:
    found = check_alignment(page(WP_LOGIN), mutated(MUTATIONS[2]), WORDPRESS)
    [gone] = [v for v in found if "('pwd', 'password')" in v.detail]
    [new] = [v for v in found if "('password', 'password')" in v.detail]
    assert len(found) == 2 and gone.detail.endswith("1 before, 0 after")
    assert new.detail.endswith("0 before, 1 after")
    assert gone.as_dict() == {"kind": "form", "detail": gone.detail}
    [entity] = check_alignment(page(WP_LOGIN), mutated(MUTATIONS[11]), WORDPRESS)
    assert entity.detail == "title: ['Log In WP Lab'] became ['Sign In WP Lab']"
    interactive = check_alignment(page(WP_LOGIN), mutated(MUTATIONS[15]), WORDPRESS)
    assert [v.detail for v in interactive] == ["7 interactive elements before, 8 after"]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_a_checker_that_finds_nothing_fails_these_tests(mutation: Mutation) -> None:
    """The mutation tests cannot pass vacuously: a checker answering [] is rejected by each."""
    with pytest.raises(AssertionError, match="not caught"):
        assert_caught(lambda source, shifted, site: [], mutation)
