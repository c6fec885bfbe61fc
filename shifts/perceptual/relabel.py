"""Relabeling: control labels and accessible names replaced from the site's synonym vocabulary.

Only the whole trimmed text of a control is matched, so entity text (a post title that happens
to contain "Save") is never touched; protected elements and submitted values are left alone.
"""

from __future__ import annotations

from typing import ClassVar

from lxml import etree
from pydantic import BaseModel, Field

from shifts.base import ShiftKind, register
from shifts.context import ShiftContext
from shifts.document import HtmlDocument
from shifts.rng import rng_for
from shifts.selectors import elements, protected_elements, select

CONTROLS = "a, button, summary, label, [role=button], [role=tab], [role=menuitem], [role=link]"
LABEL_ATTRIBUTES = ("aria-label", "title", "placeholder")
BUTTON_INPUT_TYPES = ("submit", "button", "reset")
# Elements that can carry a label attribute; XPath keeps the walk in C on big pages.
_LABELLED = etree.XPath(
    "//*[" + " or ".join(f"@{name}" for name in LABEL_ATTRIBUTES) + "] | //input[@value]"
)


class RelabelParams(BaseModel):
    model_config = {"extra": "forbid"}
    rate: float = Field(1.0, ge=0.0, le=1.0, description="Probability that a matching label moves")
    vocabulary: dict[str, str] = Field(
        default_factory=dict, description="Extra label -> replacement pairs, over the site's"
    )


class Relabel:
    name: ClassVar[str] = "relabel"
    kind: ClassVar[ShiftKind] = "perceptual"
    description: ClassVar[str] = (
        "Replace visible control labels and accessible names (aria-label, title, placeholder) "
        "with synonyms from the site's vocabulary."
    )
    Params: ClassVar[type[BaseModel]] = RelabelParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        params = RelabelParams.model_validate(ctx.params_for(self.name))
        vocabulary = {**ctx.site.relabels, **params.vocabulary}
        # Skip the parse entirely when no label can occur in the page.
        if not vocabulary or not _any_present(doc, vocabulary):
            return doc
        root = doc.tree
        protected = protected_elements(root, ctx.site.protected_selectors)
        occurrences: dict[str, int] = {}

        def draw(label: str) -> bool:
            occurrences[label] = occurrences.get(label, 0) + 1
            rng = rng_for(ctx.seed, self.name, label, occurrences[label])
            return rng.random() < params.rate

        changed = 0
        for element in select(root, CONTROLS):
            if element in protected:
                continue
            node = _sole_text_holder(element)
            if node is None:
                continue
            holder, attr = node
            text = getattr(holder, attr) or ""
            label = text.strip()
            if label in vocabulary and draw(label):
                setattr(holder, attr, text.replace(label, vocabulary[label]))
                changed += 1
        for element in elements(_LABELLED, root):
            if element in protected:
                continue
            for attribute in _label_attributes(element):
                label = (element.get(attribute) or "").strip()
                if label in vocabulary and draw(label):
                    element.set(attribute, vocabulary[label])
                    changed += 1
        if changed:
            doc.mark_changed()
            doc.notes[self.name] = {"labels_changed": changed}
        return doc


def _any_present(doc: HtmlDocument, vocabulary: dict[str, str]) -> bool:
    try:
        return any(label.encode(doc.encoding) in doc.original for label in vocabulary)
    except UnicodeError:
        return True


def _label_attributes(element: etree._Element) -> list[str]:
    attributes = [name for name in LABEL_ATTRIBUTES if name in element.attrib]
    # A button's value is its label, but only a nameless one: a named button submits its value.
    is_button_input = element.tag == "input" and element.get("type", "") in BUTTON_INPUT_TYPES
    if is_button_input and not element.get("name") and element.get("value"):
        attributes.append("value")
    return attributes


def _sole_text_holder(element: etree._Element) -> tuple[etree._Element, str] | None:
    """The (node, "text"|"tail") holding the element's only non-blank text, if there is one."""
    holders = []
    if (element.text or "").strip():
        holders.append((element, "text"))
    for descendant in element.iterdescendants():
        if (descendant.text or "").strip() and isinstance(descendant.tag, str):
            holders.append((descendant, "text"))
        if (descendant.tail or "").strip():
            holders.append((descendant, "tail"))
        if len(holders) > 1:
            return None
    return holders[0] if len(holders) == 1 else None


register(Relabel())
