"""The fast path for lists of simple selectors answers exactly what cssselect answers."""

from __future__ import annotations

import pytest
from lxml import etree
from lxml.cssselect import CSSSelector

from shifts.selectors import _SimpleList, compiled

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


@pytest.mark.parametrize("selector", SIMPLE + COMPLEX)
def test_same_elements_in_the_same_order_as_cssselect(selector: str) -> None:
    query = compiled(selector)
    assert isinstance(query, _SimpleList) == (selector in SIMPLE)
    assert query(PAGE) == CSSSelector(selector)(PAGE)
    assert query(PAGE)  # each selector matches something here, so equality means something


@pytest.mark.parametrize("selector", ["a, button, [role=button]", "ul li"])
def test_select_containing_keeps_elements_whose_text_holds_a_needle(selector: str) -> None:
    from shifts.selectors import select, select_containing

    texts = ["lin", "1", "it's"]
    expected = [e for e in select(PAGE, selector) if any(t in e.xpath("string()") for t in texts)]
    assert select_containing(PAGE, selector, texts) == expected and expected
