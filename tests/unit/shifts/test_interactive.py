"""shifts.interactive: the CSS the oracle's page script runs and the XPath the drift and the
checker run select the same elements."""

from __future__ import annotations

from lxml import etree
from lxml.cssselect import CSSSelector

from api.oracle.load import page_script
from shifts import interactive
from shifts.selectors import elements
from tests.helpers.fixtures import fixture_pages

PAGE = (
    "<html><body><a href='/x'>link</a><a name='anchor'>not a link</a><button>b</button>"
    "<input type='text'><input type='hidden' name='h'><select><option>o</option></select>"
    "<textarea></textarea><details><summary>s</summary></details><div role='button'>r</div>"
    "<span role='link'>l</span><div role='tab'>t</div><li role='menuitem'>m</li>"
    "<span role='checkbox'>c</span><div role='region'>no</div><p tabindex='0'>no</p>"
    "<noscript><a href='/fallback'>no</a></noscript><template><button>no</button></template>"
    "</body></html>"
)


def test_the_css_and_the_xpath_select_the_same_rendered_elements() -> None:
    root = etree.fromstring(PAGE, etree.HTMLParser())
    by_xpath = elements(interactive.XPATH, root)
    rendered = [
        element
        for element in elements(CSSSelector(interactive.CSS), root)
        if not any(ancestor.tag in ("noscript", "template") for ancestor in element.iterancestors())
    ]
    assert set(by_xpath) == set(rendered)
    assert [e.text or e.get("type") for e in by_xpath] == [
        "link", "b", "text", None, None, "s", "r", "l", "t", "m", "c",
    ]  # fmt: skip


def test_the_one_walk_selects_what_the_xpath_selects_in_the_same_order() -> None:
    odd = (
        "<html><body><a>no href</a><a href=''>empty href</a><a role='button'>a role</a>"
        "<input type='HIDDEN'><input type='hidden' role='checkbox'><svg><a href='#s'>s</a></svg>"
        "<template><p><span role='tab'>inert</span></p></template><!-- <a href='c'> -->"
        "<noscript><div><button>no</button></div></noscript><div role='Button'>case</div>"
        "</body></html>"
    )
    pages = [PAGE.encode(), odd.encode(), *(path.read_bytes() for path in fixture_pages())]
    for page in pages:
        root = etree.fromstring(page, etree.HTMLParser())
        by_xpath = elements(interactive.XPATH, root)
        assert by_xpath, page[:80]
        assert interactive.interactive_elements(root) == by_xpath


def test_the_oracles_page_script_counts_by_it() -> None:
    script = page_script()
    assert '"__INTERACTIVE__"' not in script
    assert f"const INTERACTIVE = {interactive.CSS!r}".replace("'", '"') in script
