"""An element of a small page, for the questions references answer about it."""

from __future__ import annotations

from lxml import etree


def element(markup: str, path: str) -> etree._Element:
    root = etree.fromstring(markup, etree.HTMLParser())
    found = root.xpath(path)
    assert isinstance(found, list) and found
    node = found[0]
    assert isinstance(node, etree._Element)
    return node
