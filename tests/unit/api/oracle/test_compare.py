"""The browser oracle's comparison on hand-made snapshots (no browser): every violation kind is
caught, identical snapshots and the page's own noise give nothing."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api.oracle.compare import Snapshot, compare
from tests.unit.api.oracle.images import LOGO, gradient, png


def element(key: str, tag: str = "div", **fields: Any) -> dict[str, Any]:
    interactive = tag in ("a", "button", "input")
    return {
        "key": key,
        "tag": tag,
        "interactive": interactive,
        "heading": tag in ("h1", "h2"),
        "box": [10, 20, 100, 30],
        "visible": True,
        "hit": True if interactive or tag in ("h1", "h2") else None,
        "label": "",
        "image": tag == "img",
        "listeners": [],
        **fields,
    }


def page() -> Snapshot:
    """A small page: a heading, a list of two links, a button with a listener, a logo."""
    elements = [
        element("html", "html", box=[0, 0, 1280, 900]),
        element("html/0", "body", box=[0, 0, 1280, 900]),
        element("html/0/0", "h1", label="Products", box=[10, 10, 400, 40]),
        element("html/0/1", "ul", box=[10, 60, 400, 60]),
        element("html/0/1/0", "a", label="Mugs", box=[10, 60, 80, 20]),
        element("html/0/1/1", "a", label="Cups", box=[10, 90, 80, 20]),
        element("html/0/2", "button", label="Add to cart", listeners=["click"]),
        element("html/0/3", "img", label="Logo", box=[500, 10, 20, 10]),
    ]
    labels = {e["key"]: e["label"] for e in elements if e["interactive"]}
    return Snapshot(
        url="http://shop/",
        elements=elements,
        window=["load", "message"],
        document=["DOMContentLoaded"],
        labels_at_load=labels,
        images={"html/0/3": LOGO},
    )


def changed(snapshot: Snapshot, key: str, **fields: Any) -> Snapshot:
    result = copy.deepcopy(snapshot)
    for item in result.elements:
        if item["key"] == key:
            item.update(fields)
    return result


def without(snapshot: Snapshot, *prefixes: str) -> Snapshot:
    result = copy.deepcopy(snapshot)
    result.elements = [
        e for e in result.elements if not any(e["key"].startswith(p) for p in prefixes)
    ]
    return result


def kinds(found: list[Any]) -> list[str]:
    return [violation.kind for violation in found]


def test_identical_snapshots_give_nothing() -> None:
    assert compare([page(), page()], page()) == []
    assert compare([page()], page()) == []


def test_ids_classes_tags_are_not_compared() -> None:
    # The submit <button> became an <input type=submit>: same object, same key.
    assert compare([page()], changed(page(), "html/0/2", tag="input")) == []


def test_a_missing_subtree_is_one_structure_violation() -> None:
    found = compare([page()], without(page(), "html/0/1"))
    assert kinds(found) == ["structure"]
    assert "html/0/1" in found[0].element and "missing" in found[0].detail


def test_an_element_not_in_the_baseline_is_a_structure_violation() -> None:
    shifted = copy.deepcopy(page())
    shifted.elements.append(element("html/0/4", "div"))
    found = compare([page()], shifted)
    assert kinds(found) == ["structure"] and "not in the baseline" in found[0].detail


def test_new_errors_are_reported_and_known_ones_normalised() -> None:
    baseline = page()
    baseline.errors = ["TypeError: x is undefined at http://shop:8000/app.js:12:5"]
    shifted = copy.deepcopy(baseline)
    shifted.errors = [
        "TypeError: x is undefined at http://127.0.0.1:9000/app.js?v=3:14:9",
        "ReferenceError: mount is not defined",
    ]
    found = compare([baseline], shifted)
    assert kinds(found) == ["error"] and "ReferenceError" in found[0].detail


def test_a_different_status_is_an_error() -> None:
    shifted = page()
    shifted.status = 502
    assert kinds(compare([page()], shifted)) == ["error"]


@pytest.mark.parametrize(
    ("before", "after", "detail"),
    [(True, False, "hidden in the shifted page"), (False, True, "hidden made visible")],
)
def test_visibility(before: bool, after: bool, detail: str) -> None:
    baseline = changed(page(), "html/0/2", visible=before)
    found = compare([baseline], changed(page(), "html/0/2", visible=after))
    assert kinds(found) == ["visibility"] and found[0].detail == detail
    # A hidden non-interactive element is not a visibility violation.
    assert compare([page()], changed(page(), "html/0/1", visible=False)) == []


def test_covered() -> None:
    found = compare([page()], changed(page(), "html/0/2", hit=False, blocker="div"))
    assert kinds(found) == ["covered"] and "<div>" in found[0].detail
    # Not hit-testable in the baseline either (off-screen, already covered): nothing to say.
    baseline = changed(page(), "html/0/2", hit=None)
    assert compare([baseline], changed(page(), "html/0/2", hit=False)) == []


def test_moved_and_resized_beyond_tolerance_only() -> None:
    assert compare([page()], changed(page(), "html/0/0", box=[14, 6, 400, 40])) == []
    assert kinds(compare([page()], changed(page(), "html/0/0", box=[15, 10, 400, 40]))) == ["moved"]
    # 400 wide: 5% is 20 px, more than tolerance_px.
    assert compare([page()], changed(page(), "html/0/0", box=[10, 10, 420, 40])) == []
    found = compare([page()], changed(page(), "html/0/0", box=[10, 10, 421, 45]))
    assert kinds(found) == ["resized"]
    found = compare(
        [page()], changed(page(), "html/0/0", box=[10, 10, 421, 45]), tolerance_ratio=0.1
    )
    assert kinds(found) == ["resized"]  # the height grew 5 px, over tolerance_px
    # Only interactive elements and headings are measured.
    assert compare([page()], changed(page(), "html/0/1", box=[300, 300, 10, 10])) == []


def test_image_pixels() -> None:
    hue = png(20, 10, lambda x, y: gradient(x, y)[::-1])
    found = compare([page()], _with_image(page(), hue))
    assert kinds(found) == ["image"] and "pixels" in found[0].detail
    # One pixel in 200 off by a little: the same image.
    one_off = png(20, 10, lambda x, y: (255, 0, 0) if (x, y) == (3, 3) else gradient(x, y))
    assert compare([page()], _with_image(page(), one_off)) == []
    # The same pixels encoded differently: the same image.
    assert compare([page()], _with_image(page(), png(20, 10, gradient, filter_type=4))) == []
    found = compare([page()], changed(page(), "html/0/3", visible=False))
    assert kinds(found) == ["image"] and "hidden" in found[0].detail


def _with_image(snapshot: Snapshot, data: bytes) -> Snapshot:
    result = copy.deepcopy(snapshot)
    result.images["html/0/3"] = data
    return result


def test_listeners() -> None:
    found = compare([page()], changed(page(), "html/0/2", listeners=[]))
    assert kinds(found) == ["listeners"] and "lost listeners: click" in found[0].detail
    found = compare([page()], changed(page(), "html/0/1/0", listeners=["click"]))
    assert kinds(found) == ["listeners"] and "gained" in found[0].detail
    shifted = page()
    shifted.window = []
    found = compare([page()], shifted)
    assert kinds(found) == ["listeners"] and found[0].element == "window"
    # Whether a page listens for its own load events depends on when its scripts arrived
    # (jQuery does not listen once the parse has ended): losing them is not the shift's doing.
    baseline = page()
    baseline.window, baseline.document = ["load", "resize"], ["DOMContentLoaded"]
    shifted = page()
    shifted.window, shifted.document = ["resize"], []
    assert compare([baseline], shifted) == []
    shifted.window = []
    found = compare([baseline], shifted)
    assert kinds(found) == ["listeners"] and found[0].detail == "lost listeners: resize"
    # The proxy's own runtime may listen on the document: gaining there is not reported.
    shifted = page()
    shifted.document = ["DOMContentLoaded", "pageshow"]
    assert compare([page()], shifted) == []


def test_label_changed_after_load() -> None:
    shifted = changed(page(), "html/0/2", label="Buy now")  # at load still "Add to cart"
    found = compare([page()], shifted)
    assert kinds(found) == ["label"] and "'Add to cart' -> 'Buy now'" in found[0].detail
    # The page itself changes that label after load: not the shift's doing.
    baseline = changed(page(), "html/0/2", label="Buy now")
    assert compare([baseline], shifted) == []


def test_relabelled_unless_the_condition_relabels() -> None:
    shifted = changed(page(), "html/0/2", label="Add to basket")
    shifted.labels_at_load["html/0/2"] = "Add to basket"
    found = compare([page()], shifted)
    assert kinds(found) == ["relabelled"]
    assert compare([page()], shifted, expect_relabel=True) == []


def test_baseline_noise_is_never_reported() -> None:
    """Differences between baseline loads (a rotating banner, an animation, a clock, a flaky
    script) are the page's own; the shifted load showing the same is not a violation."""
    first = page()
    second = changed(page(), "html/0/0", box=[10, 30, 400, 40], label="Offers")
    second.labels_at_load["html/0/2"] = "Add to cart (1)"
    second = changed(second, "html/0/2", label="Add to cart (1)")
    second.images["html/0/3"] = png(20, 10, lambda x, y: (0, 0, 0))
    second.errors = ["Error: ad slot 4 timed out"]
    extra = copy.deepcopy(second)
    extra.elements.append(element("html/0/4", "div"))
    baselines = [first, extra]
    shifted = copy.deepcopy(extra)
    shifted.errors = ["Error: ad slot 7 timed out"]
    shifted.images["html/0/3"] = png(20, 10, lambda x, y: (9, 200, 9))
    assert compare(baselines, shifted) == []
    # But what the baseline never did is still caught.
    assert kinds(compare(baselines, changed(shifted, "html/0/2", listeners=[]))) == ["listeners"]
