"""Compiled CSS selectors and the protected (task-critical) parts of a page."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import cast

from lxml import etree
from lxml.cssselect import CSSSelector

from shifts.document import HtmlDocument


@lru_cache(maxsize=256)
def compiled(selector: str) -> CSSSelector:
    return CSSSelector(selector)


def select(root: etree._Element, selector: str) -> list[etree._Element]:
    """Elements of `root` matching a CSS selector, in document order."""
    return elements(compiled(selector), root)


def elements(query: etree.XPath, root: etree._Element) -> list[etree._Element]:
    """Run a compiled XPath that selects elements (lxml's types cannot say so)."""
    return cast(list[etree._Element], query(root))


def protected_elements(root: etree._Element, selectors: Iterable[str]) -> set[etree._Element]:
    """Every element matched by a protected selector, and all of its descendants."""
    protected: set[etree._Element] = set()
    selector = ", ".join(selectors)
    if selector:
        for match in select(root, selector):
            protected.update(match.iter())
    return protected


def protected_in(doc: HtmlDocument, selectors: tuple[str, ...]) -> set[etree._Element]:
    """protected_elements of the document's tree, computed once per page for all shifts.

    Shifts add nodes (wrappers) but never remove or replace protected ones, so the set stays
    valid for the rest of the pipeline.
    """
    key = "protected:" + "|".join(selectors)
    if key not in doc.cache:
        doc.cache[key] = protected_elements(doc.tree, selectors)
    return cast(set[etree._Element], doc.cache[key])
