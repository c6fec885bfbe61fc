"""What the oracle compares: two snapshots of a page, element by element, and what changed that a
task could depend on (ids, classes, data-* attributes and wrappers are expected to change and are
not compared)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from api.oracle.png import decode_png

PIXEL_THRESHOLD = 24  # a pixel differs when a channel differs by more than this (0-255)


PIXEL_RATIO = 0.005  # an image differs when more than this share of its pixels differ


KINDS = (
    "structure",
    "error",
    "visibility",
    "covered",
    "moved",
    "resized",
    "image",
    "listeners",
    "label",
    "relabelled",
)


@dataclass
class Snapshot:
    """One page load as the oracle sees it. `elements` are the records of page.js
    (key, tag, interactive, heading, box [x, y, w, h], visible, hit, label, image, listeners);
    `labels_at_load` maps the keys of interactive elements to their labels at the load event,
    `images` the keys of visible image elements to a PNG of their clip."""

    url: str
    elements: list[dict[str, Any]]
    status: int | None = 200
    window: list[str] = field(default_factory=list)
    document: list[str] = field(default_factory=list)
    labels_at_load: dict[str, str] = field(default_factory=dict)
    # The episode's label mapping, as the page's runtime carries it ({} when nothing relabels).
    label_mapping: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    images: dict[str, bytes] = field(default_factory=dict)
    load_ms: float = 0.0
    # The start of the page's text when its status is not 2xx: what an error page says.
    text: str = ""

    def by_key(self) -> dict[str, dict[str, Any]]:
        return {element["key"]: element for element in self.elements}


@dataclass(frozen=True)
class Violation:
    kind: str
    detail: str
    element: str
    key: str = ""  # what identifies it across loads (an element key, or an error message)

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail, "element": self.element}


def locator_share(baseline: Snapshot, shifted: Snapshot) -> float | None:
    """The share of the interactive elements of both loads whose locator (id, classes, data-*
    hooks, XPath with positions) differs: how much of the page a recorded skill loses, as the
    browser renders it (elements scripts rendered included)."""
    before = {e["key"]: e.get("locator") for e in baseline.elements if e.get("interactive")}
    after = {e["key"]: e.get("locator") for e in shifted.elements if e.get("interactive")}
    common = [key for key in before if key in after]
    if not common:
        return None
    return round(sum(before[key] != after[key] for key in common) / len(common), 3)


def describe(element: dict[str, Any]) -> str:
    label = element.get("label") or ""
    shown = f' "{label[:60]}"' if label else ""
    return f"<{element.get('tag', '?')}>{shown} at {element['key']}"


def compare(
    baselines: Sequence[Snapshot],
    shifted: Snapshot,
    *,
    tolerance_px: float = 4,
    tolerance_ratio: float = 0.05,
    expect_relabel: bool = False,
) -> list[Violation]:
    """What differs between the baseline loads and a shifted load, minus what differs between
    baseline loads themselves (the page's noise: animations, timers, rotating content)."""
    if not baselines:
        raise ValueError("compare() needs at least one baseline snapshot")
    reference = baselines[0]
    options: dict[str, Any] = {
        "tolerance_px": tolerance_px,
        "tolerance_ratio": tolerance_ratio,
        "expect_relabel": expect_relabel,
    }
    noise: set[tuple[str, str]] = set()
    for other in baselines[1:]:
        noise |= {(v.kind, v.key) for v in _diff(reference, other, **options)}
        noise |= {(v.kind, v.key) for v in _diff(other, reference, **options)}
    seen_errors = {_normalise(message) for snapshot in baselines for message in snapshot.errors}
    violations = [
        Violation("error", f"{message} (not in the baseline)", "page", _normalise(message))
        for message in dict.fromkeys(shifted.errors)
        if _normalise(message) not in seen_errors
    ]
    statuses = {snapshot.status for snapshot in baselines}
    if shifted.status not in statuses:
        violations.append(
            Violation(
                "error",
                f"status {shifted.status} (baseline {sorted(statuses, key=str)[0]})",
                "page",
                "status",
            )
        )
    violations += [v for v in _diff(reference, shifted, **options) if (v.kind, v.key) not in noise]
    return _deduplicated(violations)


def _diff(
    a: Snapshot,
    b: Snapshot,
    *,
    tolerance_px: float,
    tolerance_ratio: float,
    expect_relabel: bool,
) -> list[Violation]:
    """Element by element: what `b` does differently from `a` (errors are compared apart)."""
    out: list[Violation] = []
    ea, eb = a.by_key(), b.by_key()
    for key in _topmost(set(ea) - set(eb), set(eb)):
        out.append(Violation("structure", "missing in the shifted page", describe(ea[key]), key))
    for key in _topmost(set(eb) - set(ea), set(ea)):
        out.append(Violation("structure", "not in the baseline", describe(eb[key]), key))
    for key, x in ea.items():
        y = eb.get(key)
        if y is None:
            continue
        name = describe(x)
        watched = bool(x["interactive"] or x["heading"])
        if watched and x["visible"] != y["visible"]:
            detail = "hidden in the shifted page" if x["visible"] else "hidden made visible"
            out.append(Violation("visibility", detail, name, key))
        if watched and x.get("hit") is True and y.get("hit") is False:
            detail = f"a click at its centre reaches <{y.get('blocker') or '?'}>, not it"
            out.append(Violation("covered", detail, name, key))
        if watched and x["visible"] and y["visible"]:
            out += _geometry(x, y, name, tolerance_px, tolerance_ratio)
        out += _listeners(x, y, name)
        if x["interactive"]:
            out += _labels(a, b, key, name, expect_relabel)
        if x.get("image") and x["visible"] and key in a.images:
            if not y["visible"]:
                out.append(Violation("image", "hidden in the shifted page", name, key))
            elif key in b.images and images_differ(a.images[key], b.images[key]):
                out.append(Violation("image", "its pixels differ", name, key))
    for target, lost in (("window", a.window), ("document", a.document)):
        gone = sorted(set(lost) - set(getattr(b, target)) - _ONCE_PER_LOAD)
        if gone:
            out.append(Violation("listeners", f"lost listeners: {', '.join(gone)}", target, target))
    return out


# Events of the document's own life, which fire once per load. Code that runs after one has
# fired does not listen for it (jQuery's ready() checks document.readyState first), so whether
# the page listens depends on whether a script arrived before the parse ended: on the race of
# the page's own loads (MediaWiki's async ResourceLoader batch against its stylesheet, which a
# cold wiki serves 4x slower), not on what the shift did. A script the shift broke still
# shows: its errors, and the listeners it no longer puts on elements.
_ONCE_PER_LOAD = frozenset({"DOMContentLoaded", "load", "readystatechange"})


def _topmost(missing: set[str], other: set[str]) -> list[str]:
    """Keys of whole missing subtrees (their parent is on both sides): one violation for a
    missing list, not one per item."""
    return sorted(key for key in missing if "/" not in key or key.rsplit("/", 1)[0] in other)


def _geometry(
    x: dict[str, Any], y: dict[str, Any], name: str, tolerance_px: float, tolerance_ratio: float
) -> list[Violation]:
    out = []
    (ax, ay, aw, ah), (bx, by, bw, bh) = x["box"], y["box"]
    if max(abs(ax - bx), abs(ay - by)) > tolerance_px:
        detail = f"moved from ({ax:g}, {ay:g}) to ({bx:g}, {by:g})"
        out.append(Violation("moved", detail, name, x["key"]))
    if abs(aw - bw) > max(tolerance_px, tolerance_ratio * aw) or abs(ah - bh) > max(
        tolerance_px, tolerance_ratio * ah
    ):
        detail = f"resized from {aw:g}x{ah:g} to {bw:g}x{bh:g}"
        out.append(Violation("resized", detail, name, x["key"]))
    return out


def _listeners(x: dict[str, Any], y: dict[str, Any], name: str) -> list[Violation]:
    had, has = set(x.get("listeners") or ()), set(y.get("listeners") or ())
    if had - has:
        detail = f"lost listeners: {', '.join(sorted(had - has))}"
        return [Violation("listeners", detail, name, x["key"])]
    if has and not had:
        detail = f"gained listeners: {', '.join(sorted(has))}"
        return [Violation("listeners", detail, name, x["key"])]
    return []


def _labels(a: Snapshot, b: Snapshot, key: str, name: str, expect_relabel: bool) -> list[Violation]:
    """Settled labels must be the app's own settled labels under the episode's mapping (the
    identity when nothing relabels). Judged on settled states, so the app's own late labels
    (tooltips a script completes, counters) never count, whenever they land."""
    mapping = b.label_mapping
    settled_a, settled_b = a.by_key()[key]["label"], b.by_key()[key]["label"]
    expected = mapping.get(settled_a, settled_a)
    if settled_b == expected:
        return []
    at_load_a, at_load_b = a.labels_at_load.get(key), b.labels_at_load.get(key)
    if at_load_a is not None and at_load_b == mapping.get(at_load_a, at_load_a):
        detail = f"changed after load: {at_load_b!r} -> {settled_b!r} (expected {expected!r})"
        return [Violation("label", detail, name, key)]
    if expect_relabel and not mapping:
        return []  # a relabelling episode whose mapping the page does not carry: unjudgeable
    detail = f"{settled_a!r} in the baseline, {settled_b!r} shifted (expected {expected!r})"
    return [Violation("relabelled", detail, name, key)]


def _deduplicated(violations: Iterable[Violation]) -> list[Violation]:
    return list(dict.fromkeys(violations))


_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)


_NUMBER = re.compile(r"\d+")


_SPACE = re.compile(r"\s+")


def _normalise(message: str) -> str:
    """An error message without what varies between loads: URLs, numbers (ports, line and
    column, timings), whitespace."""
    text = _URL.sub("<url>", message)
    return _SPACE.sub(" ", _NUMBER.sub("0", text)).strip()[:300]


# --- pixels ---------------------------------------------------------------------------------


def images_differ(png_a: bytes, png_b: bytes) -> bool:
    """More than PIXEL_RATIO of the pixels differ by more than PIXEL_THRESHOLD in a channel.
    PNGs this decoder does not read (or very large ones) are compared byte for byte."""
    if png_a == png_b:
        return False
    a, b = decode_png(png_a), decode_png(png_b)
    if a is None or b is None:
        return True
    (wa, ha, ca, pa), (wb, hb, cb, pb) = a, b
    if (wa, ha) != (wb, hb):
        return True
    channels = min(ca, cb, 3)  # colour only: alpha is the same for a screenshot
    allowed, differing = PIXEL_RATIO * wa * ha, 0
    for i in range(wa * ha):
        oa, ob = i * ca, i * cb
        for c in range(channels):
            if abs(pa[oa + c] - pb[ob + c]) > PIXEL_THRESHOLD:
                differing += 1
                break
        if differing > allowed:
            return True
    return False
