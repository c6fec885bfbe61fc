"""The alignment checker: proof, page by page, that a shift kept what the task needs.

"Aligned variants preserve task intent, task-critical entities, required functionality, and
success criteria." Compared between a page and its shifted version:
  - every form: action, method, and the names and types of its fields;
  - every link target (href), as a multiset: order may change, targets may not (each read as
    a browser requests it, `shifts.urls.as_requested`: raw or percent-encoded, a control
    character is one target);
  - the text of every protected (task-critical) entity of the site profile;
  - the number of interactive elements (links, buttons, fields, role=button...).
Each difference is one Violation naming what differs.
"""

from __future__ import annotations

import codecs
from collections import Counter
from dataclasses import dataclass

from lxml import etree

from shifts import interactive
from shifts.document import HtmlDocument
from shifts.selectors import descendants, elements, select
from shifts.urls import as_requested
from sites import SiteProfile

_FIELDS = etree.XPath(".//input | .//select | .//textarea | .//button")


@dataclass(frozen=True)
class Violation:
    kind: str  # form, link, entity, interactive
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


def _text(element: etree._Element) -> str:
    return " ".join("".join(str(part) for part in element.itertext()).split())


def _forms(
    root: etree._Element, utf8: bool
) -> Counter[tuple[str, str, tuple[tuple[str, str], ...]]]:
    forms: Counter[tuple[str, str, tuple[tuple[str, str], ...]]] = Counter()
    for form in descendants(root, "form"):
        fields = sorted(
            (field.get("name") or "", (field.get("type") or field.tag).lower())
            for field in elements(_FIELDS, form)
            if field.get("name")
        )
        method = (form.get("method") or "get").lower()
        # (a target as a browser requests it: raw or percent-encoded, a space is one)
        forms[(as_requested(form.get("action") or "", utf8), method, tuple(fields))] += 1
    return forms


def _links(root: etree._Element, utf8: bool) -> Counter[str]:
    links = descendants(root, "a[@href]")
    return Counter(as_requested(link.get("href") or "", utf8) for link in links)


def _entities(root: etree._Element, site: SiteProfile) -> dict[str, list[str]]:
    return {
        selector: [_text(element) for element in select(root, selector)]
        for selector in site.protected_selectors
    }


def _diff(kind: str, before: Counter[object], after: Counter[object]) -> list[Violation]:
    violations = []
    for item in sorted(set(before) | set(after), key=repr):
        if before[item] != after[item]:
            violations.append(
                Violation(kind, f"{item!r}: {before[item]} before, {after[item]} after")
            )
    return violations


def check_alignment(
    source: HtmlDocument | bytes, shifted: HtmlDocument | bytes, site: SiteProfile
) -> list[Violation]:
    """Everything a task needs that differs between the page and its shifted version."""
    source_doc = source if isinstance(source, HtmlDocument) else HtmlDocument(source)
    shifted_doc = shifted if isinstance(shifted, HtmlDocument) else HtmlDocument(shifted)
    before, after = source_doc.tree, shifted_doc.tree
    utf8 = [codecs.lookup(doc.encoding).name == "utf-8" for doc in (source_doc, shifted_doc)]
    violations = _diff("form", Counter(_forms(before, utf8[0])), Counter(_forms(after, utf8[1])))
    violations += _diff("link", Counter(_links(before, utf8[0])), Counter(_links(after, utf8[1])))
    entities_before, entities_after = _entities(before, site), _entities(after, site)
    for selector, texts in entities_before.items():
        if texts != entities_after[selector]:
            violations.append(
                Violation(
                    "entity", f"{selector}: {texts[:3]!r} became {entities_after[selector][:3]!r}"
                )
            )
    count_before, count_after = (
        len(interactive.interactive_elements(before)),
        len(interactive.interactive_elements(after)),
    )
    if count_before != count_after:
        violations.append(
            Violation(
                "interactive", f"{count_before} interactive elements before, {count_after} after"
            )
        )
    return violations
