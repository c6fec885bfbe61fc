"""What a page's inline code references."""

from __future__ import annotations

from lxml import etree

from shifts.references import (
    inline_refs,
)


def test_inline_styles_scripts_handlers_and_data_values_count() -> None:
    root = etree.fromstring(
        "<html><head><style>.styled{}</style></head><body>"
        "<button onclick=\"toggle('panel')\" data-target='#drawer'>x</button>"
        "<script>init('widget')</script><script type='application/json'>{\"k\": 1}</script>"
        "</body></html>",
        etree.HTMLParser(),
    )
    refs = inline_refs(root)
    assert all(refs.references(name) for name in ("styled", "panel", "drawer", "widget"))


def test_attribute_queries_in_data_values_are_read() -> None:
    root = etree.fromstring(
        "<html><body><button data-target='[data-testid=dlg]'>x</button></body></html>",
        etree.HTMLParser(),
    )
    assert inline_refs(root).reads_attribute("data-testid")
