"""Compiled CSS selectors and the protected (task-critical) parts of a page."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from lxml import etree
from lxml.cssselect import CSSSelector


@lru_cache(maxsize=256)
def compiled(selector: str) -> CSSSelector:
    return CSSSelector(selector)


def protected_elements(root: etree._Element, selectors: Iterable[str]) -> set[etree._Element]:
    """Every element matched by a protected selector, and all of its descendants."""
    protected: set[etree._Element] = set()
    for selector in selectors:
        for match in compiled(selector)(root):
            protected.update(match.iter())
    return protected
