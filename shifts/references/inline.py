"""What a page's own inline styles, scripts, handlers and data values reference."""

from __future__ import annotations

import functools

from lxml import etree

from shifts import native
from shifts.references.css import joined_css_refs
from shifts.references.js import joined_js_refs
from shifts.references.model import AssetRefs, merge_refs

_INLINE_STYLES = etree.XPath("//style/text()")


_INLINE_SCRIPTS = etree.XPath(
    "//script[not(@type) or contains(@type, 'javascript') or @type='module']/text()"
)


def _texts(query: etree.XPath, root: etree._Element) -> list[str]:
    found = query(root)
    return [str(item) for item in found] if isinstance(found, list) else []


def _handlers_and_data_values(root: etree._Element) -> tuple[list[str], list[str]]:
    """Event handlers are scripts; data-* values are strings scripts read, and often hold
    selectors (`data-target="#menu"`, Stimulus' `data-w-sync-target-value="#id_slug"`). Both
    in document order, from one walk of the attributes (an XPath test of every attribute's
    name took 1.6x longer, once per prefix). `root` is an HTML-parsed document's root: its
    subtree is the whole document, and no attribute has a namespace. In C where it can be
    (`shifts.native`): in Python every element of the page costs a proxy and a list."""
    return native.either(native.handlers_and_data_values, _handlers_and_data_values_read, root)


def _handlers_and_data_values_read(root: etree._Element) -> tuple[list[str], list[str]]:
    """`_handlers_and_data_values` in Python: its definition, which the C one follows."""
    handlers: list[str] = []
    data_values: list[str] = []
    for element in root.iter():
        for name, value in element.items():
            if name[:2] == "on":
                handlers.append(str(value))
            elif name[:5] == "data-":
                data_values.append(str(value))
    return handlers, data_values


def _inline_texts(root: etree._Element) -> tuple[list[str], list[str]]:
    """The texts of the document's <style> blocks and of the <script> blocks it reads, in
    document order. In C where it can be (`shifts.native`): two XPath queries of every node
    cost a 200 KB page 0.35 ms, a walk a tenth of that."""
    return native.either(native.inline_texts, _inline_texts_read, root)


def _inline_texts_read(root: etree._Element) -> tuple[list[str], list[str]]:
    """`_inline_texts` in Python: its definition, which the C one follows."""
    return _texts(_INLINE_STYLES, root), _texts(_INLINE_SCRIPTS, root)


def inline_refs(root: etree._Element) -> AssetRefs:
    """What the page's own <style> and <script> blocks, event handlers and data-* attribute
    values use."""
    css, scripts = _inline_texts(root)
    handlers, data_values = _handlers_and_data_values(root)
    # Each block and handler on its own line: a statement ends where the next begins.
    js = scripts + handlers
    # Style attributes hold declarations, not selectors: nothing to index.
    return _inline_refs_of(tuple(css), tuple(js), tuple(data_values))


@functools.lru_cache(maxsize=64)
def _inline_refs_of(
    css: tuple[str, ...], js: tuple[str, ...], data_values: tuple[str, ...]
) -> AssetRefs:
    # The pages of a site repeat their inline blocks (and a page reloaded, all of them): read
    # once, their indexes built once; a page with a block of its own reads that one alone
    # (`joined_css_refs`, `jslex.joined_literals`: 33 KB of a GitLab page's inline style took
    # 30-40 ms to read again at each page whose scripts held a value of its own).
    return merge_refs([joined_css_refs(css), joined_js_refs(js, data_values)])
