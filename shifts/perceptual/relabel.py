"""Relabeling: control labels and accessible names replaced from the site's synonym vocabulary.

Beyond the benchmark (the extended perceptual set): the benchmark's perceptual shift keeps
labels. Only the whole trimmed text of a control is matched, so entity text (a post title that
happens to contain "Save") is never touched; protected elements and submitted values are left
alone. The episode seed decides, once per episode, which labels move (`rate`) and to which
synonym, so the shifted site stays coherent from page to page, and the client runtime applies
the very same mapping to DOM that JavaScript renders later. The mapping is idempotent: no
synonym is itself a label it maps, so applying it again (site JS re-rendering a control the
server relabelled, the runtime seeing it twice) changes nothing.
"""

from __future__ import annotations

from typing import ClassVar

from lxml import etree
from pydantic import BaseModel, Field

from shifts.base import ShiftKind, register
from shifts.document import HtmlDocument
from shifts.rng import chance, rng_for
from shifts.selectors import elements, protected_in, select_containing
from shifts.shift_context import ShiftContext

CONTROLS = "a, button, summary, label, [role=button], [role=tab], [role=menuitem], [role=link]"
LABEL_ATTRIBUTES = ("aria-label", "title", "placeholder")
BUTTON_INPUT_TYPES = ("submit", "button", "reset")
# Elements that can carry a label attribute; XPath keeps the walk in C on big pages.
_LABELLED = etree.XPath(
    "//*[" + " or ".join(f"@{name}" for name in LABEL_ATTRIBUTES) + "] | //input[@value]"
)


class RelabelParams(BaseModel):
    model_config = {"extra": "forbid"}
    rate: float = Field(
        1.0, ge=0.0, le=1.0, description="Probability that a label moves (once per episode)"
    )
    vocabulary: dict[str, list[str]] = Field(
        default_factory=dict, description="Extra label -> synonyms, over the site's"
    )


def chosen_labels(ctx: ShiftContext) -> dict[str, str]:
    """Label -> the synonym this episode uses for it, for the labels that move this episode.

    The mapping is idempotent: a label that is another label's chosen synonym does not move,
    and a synonym that is already a moving label is not chosen ("Log in" -> "Sign in" and
    "Sign in" -> "Log in" never both), so applying it twice is applying it once. The episode's
    own vocabulary comes first, then the site's."""
    params = RelabelParams.model_validate(ctx.params_for(Relabel.name))
    own = {label: tuple(synonyms) for label, synonyms in params.vocabulary.items()}
    site = {label: synonyms for label, synonyms in ctx.site.relabels.items() if label not in own}
    chosen: dict[str, str] = {}
    for label, synonyms in [*sorted(own.items()), *sorted(site.items())]:
        if label in chosen.values() or chance(ctx.seed, "relabel", label) >= params.rate:
            continue
        candidates = [synonym for synonym in synonyms if synonym not in chosen]
        if candidates:
            chosen[label] = rng_for(ctx.seed, "relabel-synonym", label).choice(candidates)
    return chosen


def relabel_tree(
    root: etree._Element, labels: dict[str, str], protected: set[etree._Element]
) -> int:
    """Apply `labels` to the controls and label attributes under root; returns how many moved."""
    changed = 0
    # Only controls whose text contains a label can change; the XPath finds them in C.
    for element in select_containing(root, CONTROLS, sorted(labels)):
        if element in protected:
            continue
        node = _sole_text_holder(element)
        if node is None:
            continue
        holder, attr = node
        if holder in protected:  # e.g. an icon's <title> inside a link
            continue
        text = getattr(holder, attr) or ""
        label = text.strip()
        if label in labels:
            setattr(holder, attr, text.replace(label, labels[label]))
            changed += 1
    for element in elements(_LABELLED, root):
        if element in protected:
            continue
        for attribute in _label_attributes(element):
            label = (element.get(attribute) or "").strip()
            if label in labels:
                element.set(attribute, labels[label])
                changed += 1
    return changed


class Relabel:
    name: ClassVar[str] = "relabel"
    reads_data_values: ClassVar[bool] = False  # (it reads labels and a button's value)
    kind: ClassVar[ShiftKind] = "perceptual"
    description: ClassVar[str] = (
        "Replace visible control labels and accessible names (aria-label, title, placeholder) "
        "with synonyms from the site's vocabulary, one synonym per label per episode."
    )
    Params: ClassVar[type[BaseModel]] = RelabelParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        labels = chosen_labels(ctx)
        if labels:
            # The same mapping for DOM that JavaScript renders later (GitLab's Vue, Magento's
            # knockout): the runtime applies it to nodes added or changed after load.
            rules = doc.runtime.setdefault("r", {})
            assert isinstance(rules, dict)
            rules.update(runtime_rules(ctx), labels=labels)
        # Skip the parse entirely when no label can occur in the page.
        if not labels or not _any_present(doc, labels):
            return doc
        root = doc.tree
        changed = relabel_tree(root, labels, protected_in(doc, ctx.site.protected_selectors))
        if changed:
            doc.mark_changed()
            doc.notes[self.name] = {"labels_changed": changed}
        return doc


def runtime_rules(ctx: ShiftContext) -> dict[str, object]:
    """Which elements the runtime may relabel or restyle: the same controls and attributes as
    here, minus the site's protected elements."""
    return {
        "controls": CONTROLS,
        "attributes": list(LABEL_ATTRIBUTES),
        "protect": ", ".join(ctx.site.protected_selectors),
    }


def _any_present(doc: HtmlDocument, labels: dict[str, str]) -> bool:
    try:
        return any(doc.holds_bytes(label.encode(doc.encoding)) for label in labels)
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
