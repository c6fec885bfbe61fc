"""The tree a page is shifted on is the tree Chromium builds of the same bytes: every saved page,
its elements counted by tag, with scripting off (Chromium then reads `<noscript>` as markup, as
the shifts' parser does). A divergence moves every later sibling's element path: a `</p>` that
closes nothing is an empty `<p>` in a browser, and libxml2 dropped it (GitLab's project page
had 26 paragraphs fewer, django-oscar's product page one); a table's rows in no section are in
a `<tbody>` the browser adds, and libxml2 left them in the table (`table/tr` for the browser's
`table/tbody/tr`)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Route

from shifts.document import HtmlDocument
from tests.helpers.fixtures import FIXTURES

pytestmark = pytest.mark.browser

PAGES = sorted([*FIXTURES.glob("*/*.html"), *FIXTURES.glob("excerpts/*/*.html")])


@pytest.mark.parametrize("path", PAGES, ids=lambda path: str(path.relative_to(FIXTURES)))
def test_the_parsed_tree_has_the_elements_chromium_builds(browser: Browser, path: Path) -> None:
    raw = path.read_bytes()

    def serve(route: Route) -> None:
        if route.request.url == "http://page.test/":
            route.fulfill(status=200, body=raw, headers={"content-type": "text/html"})
        else:
            route.abort()

    context = browser.new_context(java_script_enabled=False)
    try:
        tab = context.new_page()
        tab.route("**/*", serve)
        tab.goto("http://page.test/", wait_until="domcontentloaded")
        built: dict[str, int] = tab.evaluate(  # (SVG keeps its case: feColorMatrix)
            "() => { const counts = {}; for (const e of document.querySelectorAll('*')) {"
            " const tag = e.localName.toLowerCase(); counts[tag] = (counts[tag] || 0) + 1; }"
            " return counts; }"
        )
    finally:
        context.close()
    parsed = Counter(
        str(element.tag).lower()
        for element in HtmlDocument(raw).tree.iter()
        if isinstance(element.tag, str)
    )
    differs = {
        tag: (built.get(tag, 0), parsed.get(tag, 0))
        for tag in set(built) | set(parsed)
        if built.get(tag, 0) != parsed.get(tag, 0)
    }
    assert differs == {}, f"(Chromium, parsed) per tag: {differs}"
