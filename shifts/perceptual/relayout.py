"""Light re-layout: items of navigation lists, menus and tab bars appear in another order, and
a sidebar moves to the other side of the page.

Only lists whose children are all <li> (or all role=tab/menuitem) and hold no protected
element are reordered; every link and control stays in the page, reachable as before.
"""

from __future__ import annotations

from typing import ClassVar

from lxml import etree
from pydantic import BaseModel, Field

from shifts.base import ShiftKind, register
from shifts.document import HtmlDocument
from shifts.rng import chance, rng_for
from shifts.selectors import protected_in, select
from shifts.shift_context import ShiftContext

MAX_ITEMS = 40


class RelayoutParams(BaseModel):
    model_config = {"extra": "forbid"}
    rate: float = Field(1.0, ge=0, le=1, description="Share of eligible lists reordered")
    sidebar_rate: float = Field(
        1.0, ge=0, le=1, description="Probability a page's sidebar moves to the other side"
    )


def move_sidebars(
    root: etree._Element, selectors: tuple[str, ...], protected: set[etree._Element], keep: bool
) -> int:
    """Move each sidebar to the other end of its parent (last <-> first), content untouched."""
    moved = 0
    seen: set[etree._Element] = set()
    for selector in selectors:
        for sidebar in select(root, selector):
            parent = sidebar.getparent()
            # A sidebar holding entities (related posts...) stays: their order is the task's.
            holds_entities = any(node in protected for node in sidebar.iter())
            if sidebar in seen or parent is None or holds_entities or keep:
                continue
            seen.add(sidebar)
            siblings = [child for child in parent if isinstance(child.tag, str)]
            if len(siblings) < 2 or (sidebar.tail or "").strip():
                continue
            tail = sidebar.tail
            if sidebar is siblings[-1]:
                parent.remove(sidebar)
                siblings[0].addprevious(sidebar)
            elif sidebar is siblings[0]:
                parent.remove(sidebar)
                siblings[-1].addnext(sidebar)
            else:
                continue
            sidebar.tail = tail
            moved += 1
    return moved


def reorderable(lst: etree._Element, protected: set[etree._Element]) -> list[etree._Element]:
    """The list's items if it may be reordered, else []."""
    items = [child for child in lst if isinstance(child.tag, str)]
    if not 2 <= len(items) <= MAX_ITEMS or len(items) != len(lst):
        return []
    if (lst.text or "").strip() or any((item.tail or "").strip() for item in items):
        return []
    same_kind = {item.tag for item in items} == {"li"} or {item.get("role") for item in items} <= {
        "tab",
        "menuitem",
    }
    if not same_kind or any(node in protected for item in items for node in item.iter()):
        return []
    return items


def reorder(lst: etree._Element, order: list[etree._Element]) -> None:
    """Put `order` (a permutation of the list's items) in place, keeping whitespace layout."""
    tails = [item.tail for item in lst]
    for item in list(lst):
        lst.remove(item)
    for item, tail in zip(order, tails, strict=True):
        item.tail = tail
        lst.append(item)


class Relayout:
    name: ClassVar[str] = "relayout"
    reads_data_values: ClassVar[bool] = False  # (by the site's selectors: `run_shifts`)
    kind: ClassVar[ShiftKind] = "perceptual"
    description: ClassVar[str] = "Reorder the items of navigation lists, menus and tab bars."
    Params: ClassVar[type[BaseModel]] = RelayoutParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        params = RelayoutParams.model_validate(ctx.params_for(self.name))
        if not any(doc.holds_bytes(marker) for marker in (b"<nav", b"<ul", b"role=", b"<aside")):
            return doc
        root = doc.tree
        protected = protected_in(doc, ctx.site.protected_selectors)
        tree = root.getroottree()
        moved = 0
        seen: set[etree._Element] = set()
        for selector in ctx.site.nav_lists:
            for lst in select(root, selector):
                if lst in seen:
                    continue
                seen.add(lst)
                items = reorderable(lst, protected)
                key = tree.getpath(lst)
                rng = rng_for(ctx.seed, self.name, key)
                if not items or rng.random() >= params.rate:
                    continue
                order = items[:]
                rng.shuffle(order)
                if order == items:
                    order = items[1:] + items[:1]  # a shuffle that moved nothing: rotate
                reorder(lst, order)
                moved += 1
        keep_sidebar = chance(ctx.seed, self.name, "sidebar") >= params.sidebar_rate
        sidebars = move_sidebars(root, ctx.site.sidebars, protected, keep_sidebar)
        if moved or sidebars:
            doc.mark_changed()
            doc.notes[self.name] = {"lists_reordered": moved, "sidebars_moved": sidebars}
        return doc


register(Relayout())
