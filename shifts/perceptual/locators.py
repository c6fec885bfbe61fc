"""Locator drift: the same objects in the same places, reachable only by other locators.

- Test hooks (data-testid, data-qa-selector, ...) are renamed to a neutral attribute or dropped.
- Hook classes the profile marks safe (e.g. GitLab's `qa-*`) are renamed.
- Ids are renamed where nothing else in the page can depend on them: not on form controls, not
  a `js-` hook, not a fragment-link target, not mentioned anywhere else in the document (inline
  scripts, styles, JSON); `for` and `aria-*` references are renamed with them.
- The text of links and buttons gets a wrapper <span>, so XPath text() locators drift while
  the visible label and the accessible name stay the same.
- Nameless submit buttons become <input type=submit> (same behaviour, same role and name).
Form field names, link targets and protected entities are never touched.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from typing import ClassVar

from lxml import etree
from pydantic import BaseModel, Field

from shifts.base import ShiftKind, register
from shifts.context import ShiftContext
from shifts.document import HtmlDocument
from shifts.rng import chance, token_for
from shifts.selectors import descendants, protected_in, select

FORM_CONTROLS = frozenset({"input", "select", "textarea", "button", "form", "option", "fieldset"})
ID_REFERENCES = ("for", "aria-labelledby", "aria-describedby", "aria-controls", "aria-owns")
WRAPPED = "a, button, [role=button]"


class LocatorParams(BaseModel):
    model_config = {"extra": "forbid"}
    hook_drop_rate: float = Field(0.5, ge=0, le=1, description="Share of test hooks dropped")
    id_rate: float = Field(0.5, ge=0, le=1, description="Share of safe ids renamed")
    wrap_rate: float = Field(0.5, ge=0, le=1, description="Share of control labels wrapped")
    tag_rate: float = Field(
        0.5, ge=0, le=1, description="Share of nameless submit <button>s turned into <input>s"
    )


class LocatorDrift:
    name: ClassVar[str] = "locator_drift"
    kind: ClassVar[ShiftKind] = "perceptual"
    description: ClassVar[str] = (
        "Rename or drop test hooks, rename hook classes and independent ids (keeping for/aria "
        "references consistent), and wrap control labels in extra elements."
    )
    Params: ClassVar[type[BaseModel]] = LocatorParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        params = LocatorParams.model_validate(ctx.params_for(self.name))
        # Test hooks on DOM rendered later are dropped by the runtime.
        rules = doc.runtime.setdefault("r", {})
        assert isinstance(rules, dict)
        rules["hooks"] = list(ctx.site.hook_attributes)
        root = doc.tree
        protected = protected_in(doc, ctx.site.protected_selectors)
        counts = {
            "hooks": _drift_hooks(root, ctx, params, protected),
            "classes": _drift_classes(root, ctx, protected),
            "ids": _drift_ids(root, doc.original, ctx, params, protected),
            "tags": _swap_submit_tags(root, ctx, params, protected),
            "wrappers": _wrap_labels(root, ctx, params, protected),
        }
        counts = {key: value for key, value in counts.items() if value}
        if counts:
            doc.mark_changed()
            doc.notes[self.name] = counts
        return doc


def _drift_hooks(
    root: etree._Element, ctx: ShiftContext, params: LocatorParams, protected: set[etree._Element]
) -> int:
    changed = 0
    for attribute in ctx.site.hook_attributes:
        renamed = "data-" + token_for(ctx.seed, "hook-attribute", attribute, length=5)
        for element in descendants(root, f"*[@{attribute}]"):
            if element in protected:
                continue
            value = element.attrib.pop(attribute)
            if chance(ctx.seed, "hook-drop", attribute, value) >= params.hook_drop_rate:
                element.set(renamed, token_for(ctx.seed, "hook-value", value, length=8))
            changed += 1
    return changed


def _drift_classes(root: etree._Element, ctx: ShiftContext, protected: set[etree._Element]) -> int:
    patterns = ctx.site.drift_class_patterns
    if not patterns:
        return 0
    is_hook = re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns)).match
    changed = 0
    for element in descendants(root, "*[@class]"):
        if element in protected:
            continue
        classes = (element.get("class") or "").split()
        drifted = [
            token_for(ctx.seed, "class", name, length=8) if is_hook(name) else name
            for name in classes
        ]
        if drifted != classes:
            element.set("class", " ".join(drifted))
            changed += 1
    return changed


def _drift_ids(
    root: etree._Element,
    original: bytes,
    ctx: ShiftContext,
    params: LocatorParams,
    protected: set[etree._Element],
) -> int:
    fragment_targets = {
        (link.get("href") or "")[1:]
        for link in descendants(root, "a[@href]")
        if (link.get("href") or "").startswith("#")
    }
    renames: dict[str, str] = {}
    mentions = _Mentions(original)
    # References this shift renames along with the id do not count as dependencies.
    referring = descendants(root, "*[" + " or ".join(f"@{a}" for a in ID_REFERENCES) + "]")
    references = Counter(
        referenced
        for element in referring
        for attribute in ID_REFERENCES
        for referenced in (element.get(attribute) or "").split()
    )
    for element in descendants(root, "*[@id]"):
        element_id = element.get("id") or ""
        if (
            element in protected
            or element.tag in FORM_CONTROLS
            or not element_id
            or element_id.startswith("js-")
            or element_id in fragment_targets
            or chance(ctx.seed, "id", element_id) >= params.id_rate
            or mentions.count(element_id) > 1 + references[element_id]
        ):
            continue
        renames[element_id] = token_for(ctx.seed, "id", element_id, length=8)
        element.set("id", renames[element_id])
    for element in referring if renames else ():
        for attribute in ID_REFERENCES:
            value = element.get(attribute)
            if value is not None:
                element.set(attribute, " ".join(renames.get(i, i) for i in value.split()))
    return len(renames)


class _Mentions:
    """How often a name occurs in the page as a word (an id's own attribute counts once).

    A word is a maximal run of `[A-Za-z0-9_-]`. Each occurrence is found with bytes.find (C)
    and kept if its neighbours are not word characters: the same count as tokenising the whole
    page, without tokenising it. Names with characters outside the word alphabet fall back to
    a plain substring count (which can only over-count: safe here).
    """

    _WORD = re.compile(rb"[A-Za-z0-9_-]+")
    _WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

    def __init__(self, original: bytes) -> None:
        self.original = original

    def count(self, name: str) -> int:
        encoded = name.encode("utf-8", "replace")
        if not self._WORD.fullmatch(encoded):
            return self.original.count(encoded)
        page, count, start = self.original, 0, 0
        while (found := page.find(encoded, start)) != -1:
            end = found + len(encoded)
            before = page[found - 1] if found > 0 else None
            after = page[end] if end < len(page) else None
            if before not in self._WORD_BYTES and after not in self._WORD_BYTES:
                count += 1
            start = found + 1
        return count


def _swap_submit_tags(
    root: etree._Element, ctx: ShiftContext, params: LocatorParams, protected: set[etree._Element]
) -> int:
    """`<button type=submit>Label</button>` -> `<input type=submit value=Label>`.

    Only nameless buttons inside a form with nothing but text in them: they submit the form and
    add nothing to it, exactly as the input does, and keep their role (button) and accessible
    name, while tag-based locators (`button:has-text(...)`, `//button`) stop matching.
    """
    changed = 0
    for button in descendants(root, "form//button"):
        if (
            button in protected
            or button.get("name")
            or (button.get("type") or "submit").lower() != "submit"
            or len(button) > 0
            or not (button.text or "").strip()
            or chance(ctx.seed, "tag", (button.text or "").strip()) >= params.tag_rate
        ):
            continue
        label = (button.text or "").strip()
        button.tag = "input"
        button.set("type", "submit")
        button.set("value", label)
        button.text = None
        changed += 1
    return changed


def _wrap_labels(
    root: etree._Element, ctx: ShiftContext, params: LocatorParams, protected: set[etree._Element]
) -> int:
    changed = 0
    wrapper_class = token_for(ctx.seed, "wrapper", length=6)
    for element in select(root, WRAPPED):
        text = element.text or ""
        if element in protected or not text.strip() or len(element) > 0:
            continue
        if chance(ctx.seed, "wrap", text.strip()) >= params.wrap_rate:
            continue
        span = etree.SubElement(element, "span")
        span.set("class", wrapper_class)
        span.text, element.text = text, None
        changed += 1
    return changed


register(LocatorDrift())
