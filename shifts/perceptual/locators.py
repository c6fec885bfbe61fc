"""Locator drift: the same objects in the same places, reachable only by other locators.

The benchmark's perceptual shift: ids, classes, test hooks and DOM structure change, while every
object keeps its place, its label and its behaviour. What the page's own stylesheets and
scripts depend on (`shifts.references`: the proxy reads them before the page is shifted) is never
touched, so the app works as before:

- Test hooks (data-testid, data-qa-selector, ...) are dropped, unless a stylesheet selects by
  the attribute or a script reads or queries it (rendering it is not reading it); the runtime
  drops them the same way from DOM that scripts render later (one rule, on both sides).
- Classes nothing references are renamed (hook classes like GitLab's `qa-*` too).
- Ids nothing references are renamed (not fragment-link targets, not mentioned elsewhere in the
  page); `for`, `aria-*`, `form`, `list` and `headers` references are renamed with them.
- Elements are wrapped in an element that generates no box (`display: contents`), so element
  paths and XPath positions change while layout, hit-testing and the accessibility tree stay:
  only where no structural selector (`>`, `+`, `~`, `:nth-child`, `:has`, ...) of the page's
  CSS or scripts could notice, and never where HTML's content model fixes the parent (table
  parts, list items, options, summary, legend) or inside SVG/MathML.
When the page's assets are not known (`ctx.assets` is None or incomplete), nothing is renamed
or wrapped: without them, nothing can be shown to be unreferenced.
Form field names, link targets, labels and protected entities are never touched.
"""

from __future__ import annotations

import fnmatch
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from typing import ClassVar, cast

from lxml import etree
from pydantic import BaseModel, Field

from shifts import interactive, native, volatile
from shifts.base import ShiftKind, register
from shifts.document import CHANGE_MAP_TEXT_CHARS, HtmlDocument, settable
from shifts.references import UNKNOWN, PageRefs, inline_refs
from shifts.references.model import WIDGET_ATTRIBUTE_PREFIXES
from shifts.rng import chance, coins, drawn_coins, keys_prefix, token_for, tokens
from shifts.selectors import descendants, matcher, protected_in, with_any_attributes
from shifts.shift_context import ShiftContext

ID_REFERENCES = (
    "for",
    "aria-labelledby",
    "aria-describedby",
    "aria-controls",
    "aria-owns",
    "aria-activedescendant",
    "aria-details",
    "aria-errormessage",
    "aria-flowto",
    "form",
    "list",
    "headers",
)
# Elements worth wrapping: controls and the containers around them.
WRAPPABLE = frozenset(
    {
        "a", "button", "input", "select", "textarea", "img", "label", "div", "section",
        "article", "nav", "header", "footer", "main", "aside", "form", "figure", "ul", "ol",
        "table", "p", "span", "h2", "h3", "h4", "h5", "h6",
    }
)  # fmt: skip
# Parents whose children HTML's content model (or the parser) fixes: a wrapper would move the
# child out of its list, table, select or details, or be moved out itself by the parser.
FIXED_PARENTS = frozenset(
    {
        "html", "head", "ul", "ol", "menu", "dl", "table", "thead", "tbody", "tfoot", "tr",
        "colgroup", "select", "datalist", "optgroup", "details", "fieldset", "picture", "video",
        "audio", "object", "map", "ruby", "template", "noscript", "button", "a", "label",
        "option", "textarea", "title", "iframe",
    }
)  # fmt: skip
FOREIGN = frozenset({"svg", "math"})


class LocatorParams(BaseModel):
    model_config = {"extra": "forbid"}
    id_rate: float = Field(0.5, ge=0, le=1, description="Share of unreferenced ids renamed")
    class_rate: float = Field(
        0.5, ge=0, le=1, description="Share of unreferenced class names renamed"
    )
    wrap_rate: float = Field(
        0.5, ge=0, le=1, description="Share of structurally safe elements wrapped"
    )
    min_share: float = Field(
        0.3,
        ge=0,
        le=1,
        description="Wrap more safe elements until at least this share of the page's "
        "interactive elements has a changed locator (where safe elements allow)",
    )


def wrapper_tag(seed: int) -> str:
    """The episode's wrapper element: a custom element name (it must hold a hyphen), neutral."""
    return f"{token_for(seed, 'wrapper-tag', length=5)}-{token_for(seed, 'wrapper-tail', length=4)}"


class LocatorDrift:
    name: ClassVar[str] = "locator_drift"
    reads_data_values: ClassVar[bool] = False  # (it declares what structural rules test)
    kind: ClassVar[ShiftKind] = "perceptual"
    description: ClassVar[str] = (
        "The benchmark's perceptual shift: rename or drop test hooks, rename classes and ids "
        "that no stylesheet or script references (keeping for/aria references consistent), and "
        "wrap elements in box-less wrappers where no structural selector notices; placement, "
        "labels and behaviour stay."
    )
    Params: ClassVar[type[BaseModel]] = LocatorParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        params = LocatorParams.model_validate(ctx.params_for(self.name))
        root = doc.tree
        refs = PageRefs(ctx.assets or UNKNOWN, inline_refs(root))
        # A hook a script or stylesheet reads is the app's, not a test's. A script that queries
        # `[data-testid="x"]` reads the attribute, so a hook no asset reads is read by no asset,
        # whatever its value (templates that only render it don't). The drift drops the others
        # from the page, and the runtime from DOM that scripts render later.
        hooks = [name for name in ctx.site.hook_attributes if not refs.reads_attribute(name)]
        if refs.complete and hooks:
            rules = doc.runtime.setdefault("r", {})
            assert isinstance(rules, dict)
            rules.update(hooks=hooks, protect=", ".join(ctx.site.protected_selectors))
        protected = protected_in(doc, ctx.site.protected_selectors)
        tree = root.getroottree()
        targets = [e for e in interactive.interactive_elements(root) if e not in protected]
        before = dict(zip(targets, _all_locators(tree, targets), strict=True))
        wrapper = wrapper_tag(ctx.seed)
        counts: dict[str, object] = {}
        touched: set[etree._Element] = set()  # the elements whose names the drifts set
        # A name made anew at each request (`volatile.name_key`) that a drift renamed: its
        # token is another at each load, so a wrapper's coin reads the name, keyed, not it.
        keyed: dict[str, str] = {}
        if refs.complete:
            # The elements naming ids, found before the drifts: those before the ids' add no
            # reference (a site that calls one a hook has it dropped first: its element then
            # names none, as if it had not been found).
            (referring,) = with_any_attributes(root, ID_REFERENCES)
            counts = {
                "hooks": _drift_hooks(root, hooks, protected, touched),
                "classes": _drift_classes(
                    root, ctx, params, protected, refs, touched, before, keyed
                ),
                "ids": _drift_ids(
                    root, doc.original, ctx, params, protected, refs, touched, referring, keyed
                ),
            }
        # The names are final here (wrappers rename nothing); nothing has moved yet, so what
        # differs now is a name (the paths are the same), and only an element a drift set
        # names on can differ (the others' names are asked again of none).
        set_on = [e for e in targets if e in touched]
        names = dict(zip(set_on, _all_names(set_on), strict=True))
        renamed = {e for e, names_now in names.items() if before[e][:3] != names_now}
        if refs.complete:
            counts["wrappers"] = _wrap(
                root, ctx, params, protected, refs, wrapper, targets, renamed, keyed
            )
        # A wrapper moves more than what it wraps (a later sibling of the same tag counts one
        # less before it): every path is taken again. An element's locators differ where its
        # path does or a drift set other names on it.
        # (Shifts after this one (relayout) may move an element again: its final path is
        # taken when the document is serialized, `HtmlDocument`.)
        recorded = _changes(self.name, targets, _paths(tree, targets), before, names)
        doc.record_changes(recorded)
        changed = len(recorded)
        # A fragment's wrappers are declared by the page it is loaded into (a style put
        # first in a fragment is its first tag, which a script inserting it reads: jQuery
        # parses a `<tr>` after a `<style>` in a `<div>`, where a row's tags are dropped).
        inserted = bool(counts.get("wrappers")) and not doc.is_fragment
        if inserted or (ctx.is_navigation and refs.complete):
            # Declared on every navigation, so HTML fragments loaded into it later can be
            # wrapped too; the wrapper generates no box and keeps the accessibility tree.
            doc.inject_head(f"<style{ctx.nonce_attr()}>{wrapper}{{display:contents}}</style>")
        if any(counts.values()):
            doc.mark_changed()
        if not refs.complete:
            doc.data_attributes_tested = None
        elif doc.data_attributes_tested is not None:
            doc.data_attributes_tested |= refs.values_tested
        doc.notes[self.name] = {
            **{key: value for key, value in counts.items() if value},
            "wrapper": wrapper,
            "assets": "complete" if refs.complete else "incomplete",
            "interactive": len(targets),
            "locators_changed": changed,
            "share": round(changed / len(targets), 3) if targets else None,
        }
        return doc


def _changes(
    shift: str,
    elements: list[etree._Element],
    paths: list[str],
    before: dict[etree._Element, tuple[object, ...]],
    after: dict[etree._Element, tuple[object, ...]],
) -> list[tuple[etree._Element, dict[str, object]]]:
    """The change map's records of the `elements` whose locators differ (`_changes_read`), in
    C where they can be (`shifts.native`: a record is five dicts and two lists, and a page's
    every interactive element may have one, thousands: a sixth of a first load in Python)."""
    return native.either(
        native.changes, _changes_read, shift, elements, paths, before, after, CHANGE_MAP_TEXT_CHARS
    )


def _changes_read(
    shift: str,
    elements: list[etree._Element],
    paths: list[str],
    before: dict[etree._Element, tuple[object, ...]],
    after: dict[etree._Element, tuple[object, ...]],
    limit: int,
) -> list[tuple[etree._Element, dict[str, object]]]:
    """`_changes` in Python: its definition, which the C one follows. Each element with its
    change, where its path (`paths`, in the same order) is not the one it had (`before`: its
    `_locators`), or a drift set other names on it (`after`: its `_names` now, where a drift
    set any); `limit`: the characters of its text kept (`CHANGE_MAP_TEXT_CHARS`)."""
    recorded: list[tuple[etree._Element, dict[str, object]]] = []
    for element, path in zip(elements, paths, strict=True):
        was, now = before[element], after.get(element)
        if path != was[3] or (now is not None and now != was[:3]):
            change: dict[str, object] = {
                "shift": shift,
                "tag": element.tag,
                "text": _short_text(element, limit),
                "before": _named(was, was[3]),
                "after": _named(now or was, path),
            }
            recorded.append((element, change))
    return recorded


def _short_text(element: etree._Element, limit: int = CHANGE_MAP_TEXT_CHARS) -> str:
    """The element's whitespace-normalized text, its first `limit` characters (a change
    map's). A container's text is read part by part only as far as those characters go: the
    start of a text, normalized, is the start of the whole one normalized (its last word may
    go on), and an app's control may hold a whole panel (GitLab's, 9 us each read whole)."""
    if len(element) == 0:
        return " ".join((element.text or "").split())[:limit]
    text, checked = "", 0
    for part in element.itertext():
        text += str(part)
        if len(text) >= checked + limit:  # (normalized again only so often)
            checked = len(text)
            if len(short := " ".join(text.split())) >= limit:
                return short[:limit]
    return " ".join(text.split())[:limit]


def _all_locators(
    tree: etree._ElementTree, elements: list[etree._Element]
) -> list[tuple[object, ...]]:
    """Each element's `_locators`, read in C where they can be (`shifts.native`: a page's
    interactive elements are read before the drifts and after, thousands on a long page)."""
    return native.either(
        native.locators, lambda each: [_locators(tree, element) for element in each], elements
    )


def _all_names(elements: list[etree._Element]) -> list[tuple[object, ...]]:
    """Each element's `_names`, read in C where they can be."""
    return native.either(native.names, lambda each: [_names(e) for e in each], elements)


def _paths(tree: etree._ElementTree, elements: list[etree._Element]) -> list[str]:
    """Each element's path in the tree (`tree.getpath`), in C where it can be."""
    return native.either(
        native.paths, lambda each: [tree.getpath(element) for element in each], elements
    )


def _locators(tree: etree._ElementTree, element: etree._Element) -> tuple[object, ...]:
    """What a recorded skill could locate the element by: id, classes, test hooks, path."""
    return (*_names(element), tree.getpath(element))


def _names(element: etree._Element) -> tuple[object, ...]:
    # (Its hooks as `items` reads them, each the value of the first attribute of its name, as
    # `attrib[name]` would: which refuses a name XML forbids, as a page's may be, `data-\x01`.
    # A list comprehension and a slice compare cost half what a generator of `startswith` does.)
    hooks = tuple([(name, value) for name, value in element.items() if name[:5] == "data-"])
    return element.get("id"), element.get("class"), hooks


def _named(names: tuple[object, ...], path: object) -> dict[str, object]:
    """An element's locators as a change map writes them: `names` starts with its id, classes
    and hooks (`_names`, or `_locators`, whose path is not read), `path` its path."""
    classes = names[1]
    return {
        "id": names[0],
        "classes": str(classes).split() if classes else [],
        "hooks": dict(names[2]),  # type: ignore[call-overload]
        "path": path,
    }


def _referenced_by_scripts(element: etree._Element, refs: PageRefs) -> bool:
    element_id = element.get("id")
    if element_id and refs.reaches_id(element_id):
        return True
    return _uses_a_class(element.get("class") or "", refs)


def _uses_a_class(classes: str, refs: PageRefs) -> bool:
    """Whether a script may find an element of this class attribute by one of its classes."""
    return any(refs.scripts_use(name) for name in classes.split())


def ids_read_as_data(root: etree._Element, refs: PageRefs) -> set[etree._Element]:
    """The elements whose ids the page's scripts may read as data, when they read ids so
    (`$link.attr('id').substr(2)`): those they may find by a class or a widget's attribute,
    and those holding one (`$(this).closest('tr').attr('id')`, WordPress's rows). Their ids
    are kept."""
    if not refs.parses_ids:
        return set()
    kept: set[etree._Element] = set()
    # (Only an element with a class, or with an attribute of a widget's name where scripts read
    # one, can be found: those alone, found in C, not every element of the page asked in
    # Python. The order they are asked in does not matter: each kept one's ancestors are.)
    found_by = itertools.chain(
        [root],
        descendants(root, _WITH_WIDGET_ATTRIBUTES if refs.reads_widget_attributes else "*[@class]"),
    )
    by_classes: dict[str, bool] = {}  # (a page repeats its class attributes: each asked once)
    for element in found_by:
        classes = element.get("class") or ""
        if classes not in by_classes:
            by_classes[classes] = _uses_a_class(classes, refs)
        if by_classes[classes] or (
            refs.reads_widget_attributes and _found_by_widget_attribute(element, refs)
        ):
            node: etree._Element | None = element
            while node is not None and node not in kept:
                kept.add(node)
                node = node.getparent()
    return kept


# The elements `ids_read_as_data` asks where scripts read a widget's attributes: those with a
# class or an attribute a widget's name starts as (an attribute in a namespace is read by lxml as
# `{uri}name`, which starts as none).
_WITH_WIDGET_ATTRIBUTES = "*[@class or @*[{}]]".format(
    " or ".join(f"starts-with(name(), '{prefix}')" for prefix in WIDGET_ATTRIBUTE_PREFIXES)
)


def _found_by_widget_attribute(element: etree._Element, refs: PageRefs) -> bool:
    """Whether a script may find `element` by a widget's attribute it reads (Stimulus's
    `[data-controller]`, `[data-sortable]`, `[role=tablist]`). Reading an attribute that HTML
    gives an element its meaning by (a form's `action`, a link's `href`) is reading what a
    script holds already, not finding it. A stylesheet that selects by one finds nothing a
    script walks (its structural rules are asked apart): WordPress's admin styles its file
    tree by `[role="treeitem"]`, which held the children of every element with a role
    (`#wpbody`, role main: every admin page's content)."""
    read = refs.widget_attributes_read  # (`scripts_read_attribute` of these names, one look-up)
    return any(
        isinstance(name, str)
        and name.startswith(WIDGET_ATTRIBUTE_PREFIXES)
        and name.lower() in read
        for name in element.keys()  # noqa: SIM118 (an element iterated is its children)
    )


def _drift_hooks(
    root: etree._Element,
    dropped: list[str],
    protected: set[etree._Element],
    touched: set[etree._Element],
) -> int:
    """Drop the `dropped` hooks (those no asset reads) from the elements below `root` that
    hold any and are not protected."""
    dropped_from, count = _drop_attributes(root, dropped, protected)
    touched.update(dropped_from)
    return count


def _drop_attributes(
    root: etree._Element, names: list[str], protected: set[etree._Element]
) -> tuple[list[etree._Element], int]:
    """Drop the attributes `names` from every element below `root` that holds any and is not
    in `protected`: those elements, in document order, and how many attributes were dropped.
    In C where it can be (`shifts.native`): a page's every control may hold a hook, and in
    Python each cost a proxy of its attributes and a set of their names."""
    return native.either(native.drop_attributes, _drop_attributes_read, root, names, protected)


def _drop_attributes_read(
    root: etree._Element, names: list[str], protected: set[etree._Element]
) -> tuple[list[etree._Element], int]:
    """`_drop_attributes` in Python: its definition, which the C one follows."""
    wanted = frozenset(names)
    dropped_from, dropped = [], 0
    for element in root.iterdescendants():
        held = wanted.intersection(element.keys())
        if held and element not in protected:
            attributes = element.attrib
            for name in held:
                del attributes[name]
            dropped_from.append(element)
            dropped += len(held)
    return dropped_from, dropped


DRIFTED_NAME_LENGTH = 8  # (a renamed id's or class's token: `rng.token_for`'s)


def drifted_id(seed: int, name: str) -> str:
    """What the drift renames the id `name` to under `seed` (when it renames it): what a script
    answer's selectors are widened to (`proxy.script_answer`)."""
    return drifted_ids(seed, [name])[0]


def drifted_ids(seed: int, names: list[str]) -> list[str]:
    """`drifted_id` of each name, made at once (`rng.tokens`)."""
    return tokens(seed, "id", names, length=DRIFTED_NAME_LENGTH)


def drifted_class(seed: int, name: str) -> str:
    """What the drift renames the class `name` to under `seed` (when it renames it)."""
    return drifted_classes(seed, [name])[0]


def _drift_classes(
    root: etree._Element,
    ctx: ShiftContext,
    params: LocatorParams,
    protected: set[etree._Element],
    refs: PageRefs,
    touched: set[etree._Element],
    targets: Container[etree._Element],
    keyed: dict[str, str],
) -> int:
    """Rename the classes nothing references (and a site's hook classes): how many elements'
    classes were set; those of `targets` among them are added to `touched`."""
    is_hook = _class_hook_matcher(tuple(ctx.site.drift_class_patterns))
    # (asked of each of a page's hundreds of class names: looked up once)
    seed, rate, references = ctx.seed, params.class_rate, refs.references

    drifted_names: dict[str, str] = {}  # a page repeats its class names: each decided once
    drifted_values: dict[str, str | None] = {}  # and whole attributes ("text t3"): split once

    def decide(names: list[str]) -> dict[str, str]:
        """The new names of those of `names` the drift renames (the others keep theirs),
        decided together: their coins drawn and new names made at once (`coins`,
        `drifted_classes`), not one by one as a walk meets them."""
        free = [name for name in names if not (references(name) or name.startswith("js-"))]
        drawn = [name for name in free if not is_hook(name)]
        keys = [volatile.name_key(name) for name in drawn]
        coin_of = dict(zip(drawn, coins(seed, "class", keys), strict=True))
        chosen = [name for name in free if name not in coin_of or coin_of[name] < rate]
        return dict(zip(chosen, drifted_classes(seed, chosen), strict=True))

    # Every class name of the elements the walk sets, decided before it; a name it did not find
    # (none: the walk and `_attribute_words` read the same elements), alone.
    on_page = _attribute_words(root, "class", protected)
    planned, found = decide(on_page), set(on_page)

    def renamed(name: str) -> str:
        new_name = drifted_names.get(name)
        if new_name is None:
            chosen = planned if name in found else decide([name])
            new_name = chosen.get(name, name)
            if name in chosen:
                _key_token(keyed, name, new_name)
            drifted_names[name] = new_name
        return new_name

    def drifted(value: str) -> str | None:
        """The attribute's new value; None if it keeps its own (also where lxml could not set
        it: a kept name holds a character XML forbids, which libxml2's HTML parser keeps)."""
        if value not in drifted_values:
            classes = value.split()
            names = [renamed(name) for name in classes]
            new_value = None if names == classes else " ".join(names)
            if new_value is not None and not settable(root, [("class", new_value)]):
                new_value = None
            drifted_values[value] = new_value
        return drifted_values[value]

    drifted_targets, count = _set_drifted(root, "class", protected, drifted, targets)
    touched.update(drifted_targets)
    return count


def drifted_classes(seed: int, names: list[str]) -> list[str]:
    """`drifted_class` of each name, made at once (`rng.tokens`)."""
    return tokens(seed, "class", names, length=DRIFTED_NAME_LENGTH)


@functools.lru_cache(maxsize=64)
def _class_hook_matcher(patterns: tuple[str, ...]) -> Callable[[str], object]:
    """Whether a class name is a site's hook (`drift_class_patterns`, globs): made once per
    site, not at each page (each glob's translation cost a first load more than its class
    names' questions)."""
    if not patterns:
        return lambda name: None
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns)).match


def _attribute_words(
    root: etree._Element, name: str, protected: Container[etree._Element]
) -> list[str]:
    """The distinct words of the values of the attribute `name` of the elements below `root`
    not in `protected` (the class names `_set_drifted` meets), in document order: in C where
    it can be (`shifts.native`)."""
    return native.either(native.attribute_words, _attribute_words_read, root, name, protected)


def _attribute_words_read(
    root: etree._Element, name: str, protected: Container[etree._Element]
) -> list[str]:
    """`_attribute_words` in Python: its definition, which the C one follows."""
    found = descendants(root, f"*[@{name}]")
    values = (element.get(name) or "" for element in found if element not in protected)
    return list(dict.fromkeys(word for value in values for word in value.split()))


def _set_drifted(
    root: etree._Element,
    name: str,
    protected: set[etree._Element],
    drifted: Callable[[str], str | None],
    among: Container[etree._Element],
) -> tuple[list[etree._Element], int]:
    """Set the attribute `name` of every element below `root` that has it and is not
    protected to what `drifted` makes of its value (None: it keeps its own), in document
    order: those of the elements set that `among` holds (a set, or a dict keyed by them), in
    order, and how many were set (as `_drop_attributes` answers). In C where it can be
    (`shifts.native`): a page's every element with a class, thousands, of which only the few
    `among` are made Python objects."""
    return native.either(
        native.set_drifted, _set_drifted_read, root, name, protected, drifted, among
    )


def _set_drifted_read(
    root: etree._Element,
    name: str,
    protected: set[etree._Element],
    drifted: Callable[[str], str | None],
    among: Container[etree._Element],
) -> tuple[list[etree._Element], int]:
    """`_set_drifted` in Python: its definition, which the C one follows."""
    drifted_among, count = [], 0
    for element in descendants(root, f"*[@{name}]"):
        if element in protected:
            continue
        new_value = drifted(element.get(name) or "")
        if new_value is not None:
            element.set(name, new_value)
            count += 1
            if element in among:
                drifted_among.append(element)
    return drifted_among, count


def _drift_ids(
    root: etree._Element,
    original: bytes,
    ctx: ShiftContext,
    params: LocatorParams,
    protected: set[etree._Element],
    refs: PageRefs,
    touched: set[etree._Element],
    referring: list[etree._Element],
    keyed: dict[str, str],
) -> int:
    """Rename the ids nothing else needs; `referring`: the elements that had an attribute
    that names ids (`ID_REFERENCES`) before the drifts."""
    # (the links, the elements with ids and those with names, in one walk in C)
    linking, identified, named = with_any_attributes(root, ("href",), ("id",), ("name",))
    fragment_targets = {
        href[1:] for href in (link.get("href") or "" for link in linking) if href[:1] == "#"
    }
    with_ids = [(element, element.get("id") or "") for element in identified]
    mentions = _Mentions(original, asked=[element_id for _, element_id in with_ids])
    # References this shift renames along with the id do not count as dependencies.
    references: Counter[str] = Counter()
    # An id named in a reference lxml cannot set again (a control character in it, which
    # libxml2's HTML parser keeps) keeps its name: the reference could not follow it.
    fixed: set[str] = set()
    for element in referring:
        for attribute in ID_REFERENCES:
            if names := element.get(attribute):
                referenced = names.split()
                references.update(referenced)
                if not settable(element, [(attribute, names)]):
                    fixed.update(referenced)
    # A field's name is often its id (`<input id="q" name="q">`): a coincidence, not a use.
    references.update(element.get("name") or "" for element in named)
    read_as_data = ids_read_as_data(root, refs)
    # (the ids no asset names nor reaches, found for all of them at once: a page's thousands)
    unreached = refs.unreached({element_id for _, element_id in with_ids})
    free = [
        (element, element_id)
        for element, element_id in with_ids
        if not (
            element in protected
            or not element_id
            or element_id in fixed
            or element_id.startswith("js-")
            or element_id in fragment_targets
            or element_id not in unreached
        )
    ]
    # (each one's coin, drawn for them all at once: `coins`; the new names too, below)
    keys = [volatile.name_key(element_id) for _, element_id in free]
    chosen = [
        (element, element_id)
        for (element, element_id), coin in zip(free, coins(ctx.seed, "id", keys), strict=True)
        if not (
            coin >= params.id_rate
            or mentions.more_than(element_id, 1 + references[element_id])
            # A script that reads ids as data reads them off what it finds: an element it
            # finds by a class or a widget's attribute keeps its id (DokuWiki's media links,
            # `a.select` whose id `h_:ns:file.png` names the file a click inserts).
            or element in read_as_data
        )
    ]
    renamed_ids = list(dict.fromkeys(element_id for _, element_id in chosen))
    renames = dict(zip(renamed_ids, drifted_ids(ctx.seed, renamed_ids), strict=True))
    for element, element_id in chosen:
        _key_token(keyed, element_id, renames[element_id])
        element.set("id", renames[element_id])
        touched.add(element)
    for element in referring if renames else ():
        for attribute in ID_REFERENCES:
            value = element.get(attribute)
            if value is not None:
                new_value = " ".join(renames.get(i, i) for i in value.split())
                if new_value != value:  # (one lxml cannot set names no renamed id: see `fixed`)
                    element.set(attribute, new_value)
    return len(renames)


def _wrap(
    root: etree._Element,
    ctx: ShiftContext,
    params: LocatorParams,
    protected: set[etree._Element],
    refs: PageRefs,
    tag: str,
    targets: list[etree._Element],
    changed: set[etree._Element],
    keyed: dict[str, str],
) -> int:
    """Wrap safe elements chosen by their seeded coin; then, while fewer than `min_share` of
    the interactive elements have a changed locator, more safe elements, lowest coin first
    (a wrapper changes the element path of everything inside it)."""
    body = root.find("body")
    if body is None:
        body = root
    # Every candidate with its coin where more are wrapped past the coins' choice (below);
    # else only those the coins choose, as elements: most candidates never become one.
    # (`changed` holds what the names moved: the first wrappers add to it only below.)
    shell = not targets and params.min_share > 0
    short = bool(targets) and len(changed) < params.min_share * len(targets)
    every = shell or short
    drawn = _wrap_candidates(body, ctx.seed, protected, keyed, None if every else params.wrap_rate)
    ask = WrapQuestions.of(refs)
    looks_inside = _once_per_node(refs.looks_inside) if refs.has_subtree else _never
    inside_matters = looks_inside is not _never  # (else not asked: a call per candidate)
    clear: dict[etree._Element, bool] = {}

    def clear_above(node: etree._Element) -> bool:
        # No ancestor is SVG/MathML or matched by a `:has()`: asked for every candidate, so
        # answered once per node from its parent's answer (a wrapper put in above answered
        # ones changes them only if a `:has()` matches it: see wrap_if_safe).
        unknown = []
        while node not in clear:
            parent = node.getparent()
            if parent is None:
                clear[node] = True
                break
            unknown.append(node)
            node = parent
        answer = clear[node]
        for node in reversed(unknown):
            parent = node.getparent()
            assert parent is not None
            answer = answer and parent.tag not in FOREIGN and not looks_inside(parent)
            clear[node] = answer
        return answer

    def wrap_if_safe(element: etree._Element, mount_point: bool = False) -> bool:
        parent = element.getparent()
        if (
            parent is None
            or parent.tag in FIXED_PARENTS
            or not clear_above(element)
            or (inside_matters and looks_inside(element))
            or wrap_refusal(element, parent, ask, mount_point) is not None
        ):
            return False
        wrapper = _place_wrapper(element, tag)
        if ask.structured:
            ask.wrapped(parent, wrapper)
        if inside_matters and looks_inside(wrapper):  # (a `:has()` naming the wrapper's tag)
            clear.update((node, False) for node in element.iter())
        return True

    target_set = set(targets)
    # The subtrees of wrapped elements are searched for targets by their tags, in C: a node
    # of another tag is not one, and costs a Python object to look at.
    target_tags = {element.tag for element in targets}
    if every:
        candidates = cast(list[tuple[float, etree._Element]], drawn)
        chosen = [e for coin, e in candidates if coin < params.wrap_rate]
    else:
        candidates, chosen = [], cast(list[etree._Element], drawn)
    first = None if inside_matters else _wrap_chosen(chosen, tag, ask, refs)
    if first is None:
        first = [e for e in chosen if wrap_if_safe(e)]
    wrapped = len(first)
    if shell:
        # A single-page app's shell: its controls are all rendered later into a mount point,
        # so wrapping the mount point is what moves every one of their element paths. No
        # coin is drawn for one of a custom element's name (Angular's `<app-root>`): those
        # are wrapped here only.
        mounts = [e for _, e in candidates] + [
            e for e in body.iterdescendants() if _is_custom(e) and e.tag != tag
        ]
        for element in mounts:
            parent = element.getparent()
            if _is_mount_point(element) and parent is not None and parent.tag != tag:
                wrapped += wrap_if_safe(element, mount_point=True)  # (unless wrapped above)
        return wrapped
    if not short:
        return wrapped  # (met by the names alone: which targets moved is not asked)
    # Those the first wrappers moved, asked once for them all: nested wrappers would search
    # the same subtrees again and again.
    changed.update(_in_subtrees(targets, set(first)))
    for _, element in sorted(
        ((coin, e) for coin, e in candidates if coin >= params.wrap_rate), key=lambda c: c[0]
    ):
        if len(changed) >= params.min_share * len(targets):
            break
        moved = [node for node in element.iter(*target_tags) if node in target_set]
        if any(node not in changed for node in moved) and wrap_if_safe(element):
            wrapped += 1
            changed.update(moved)
    return wrapped


def _wrap_chosen(
    chosen: list[etree._Element], tag: str, ask: WrapQuestions, refs: PageRefs
) -> list[etree._Element] | None:
    """`_wrap`'s first pass in C (`shifts.native`): `wrap_if_safe` of each element the coins
    chose, in order, asking `wrap_refusal`'s questions (a script's names in C, each name asked
    of `refs` once; the others of `ask`); the elements wrapped. None where only `wrap_if_safe`
    decides (no compiled shifts; a tree the C one cannot read). Not where a `:has()` rule may
    look inside a node: a wrapper can change those answers."""
    if native.wrap_chosen is None:
        return None
    held = ask.used_by_scripts
    return native.wrap_chosen(
        chosen,
        tag,
        _FIXED_PARENT_TAGS,
        _FOREIGN_TAGS,
        None if held is _never else (refs.reaches_id, refs.scripts_use, {}, {}, held),
        None if ask.found_by_widget_attribute is _never else ask.found_by_widget_attribute,
        (ask.structure_matters, ask.a_child_structured, ask.wrapped) if ask.structured else None,
        tuple(
            functools.partial(_beside_held, ask=ask, held_before=held_before)
            if ask.steps_reach[held_before]
            else None
            for held_before in (True, False)
        ),
        _place_wrapper_read,
    )


def _place_wrapper(element: etree._Element, tag: str) -> etree._Element:
    """`_place_wrapper_read`, in C where it can be (`shifts.native`: lxml walks the subtree of
    each element it moves, and a first load wraps hundreds of containers)."""
    return native.either(native.place_wrapper, _place_wrapper_read, element, tag)


def _place_wrapper_read(element: etree._Element, tag: str) -> etree._Element:
    """A new `tag` element in `element`'s place, holding it and its tail (text order stays)."""
    # Made in the page's own document: `etree.Element` makes a document per wrapper, which the
    # move into the page then frees (a third of what placing a wrapper costs).
    wrapper = element.makeelement(tag)
    element.addprevious(wrapper)
    wrapper.append(element)
    return wrapper


def _wrap_candidates(
    body: etree._Element,
    seed: int,
    protected: set[etree._Element],
    keyed: dict[str, str],
    below: float | None,
) -> list[tuple[float, etree._Element]] | list[etree._Element]:
    """`_wrap_candidates_read`, in C where it can be (`shifts.native`: a page's candidates are
    most of its elements, and only those the coins choose then become Python objects)."""
    if native.wrap_candidates is not None:
        found = native.wrap_candidates(
            body,
            _WRAPPABLE_TAGS,
            _FIXED_PARENT_TAGS,
            protected,
            keyed,
            _signature_read,
            keys_prefix(seed, "wrap"),
            drawn_coins(seed, "wrap"),
            None if below is None else float(below),
        )
        if found is not None:
            return found
    return _wrap_candidates_read(body, seed, protected, keyed, below)


# (The sets as tuples, which the C ones read.)
_WRAPPABLE_TAGS, _FIXED_PARENT_TAGS = tuple(sorted(WRAPPABLE)), tuple(sorted(FIXED_PARENTS))
_FOREIGN_TAGS = tuple(sorted(FOREIGN))


def _wrap_candidates_read(
    body: etree._Element,
    seed: int,
    protected: set[etree._Element],
    keyed: dict[str, str],
    below: float | None,
) -> list[tuple[float, etree._Element]] | list[etree._Element]:
    """The elements `_wrap` may wrap, in document order, each with its seeded coin (`below`
    None), or only those whose coin is below `below`. Not one whose parent fixes its children
    (`wrap_if_safe` refuses it before anything else, and that parent stays its parent until it
    is wrapped itself): no coin to draw for it."""
    candidates = [
        (chance(seed, "wrap", _signature(element, keyed)), element)
        for element in body.iterdescendants(*WRAPPABLE)
        if element not in protected and _parent_tag(element) not in FIXED_PARENTS
    ]
    return candidates if below is None else [e for coin, e in candidates if coin < below]


def _in_subtrees(nodes: list[etree._Element], tops: set[etree._Element]) -> list[etree._Element]:
    """The nodes that are one of `tops` or inside one: an ancestor walk from each, whose
    answer is kept for every node it passed (nodes share their ancestors)."""
    known: dict[etree._Element, bool] = {}
    inside = []
    for node in nodes:
        passed = []
        at: etree._Element | None = node
        answer = False
        while at is not None:
            if at in known:
                answer = known[at]
                break
            if at in tops:
                answer = True
                break
            passed.append(at)
            at = at.getparent()
        known.update((one, answer) for one in passed)
        if answer:
            inside.append(node)
    return inside


def _never(node: etree._Element) -> bool:
    """A question whose answer is "no" for every element (`WrapQuestions.of`)."""
    return False


def _parent_tag(element: etree._Element) -> object:
    parent = element.getparent()
    return "html" if parent is None else parent.tag  # (no parent: refused like a fixed one)


def _once_per_node(ask: Callable[[etree._Element], bool]) -> Callable[[etree._Element], bool]:
    """`ask`, asked once per node: its first answer is kept for the rest of `_wrap`."""
    answers: dict[etree._Element, bool] = {}

    def asked(node: etree._Element) -> bool:
        if node not in answers:
            answers[node] = ask(node)
        return answers[node]

    return asked


def _once_per_names(ask: Callable[[etree._Element], bool]) -> Callable[[etree._Element], bool]:
    """`ask`, whose answer depends on nothing but a node's id and classes, asked once per
    (id, class attribute): a page repeats its class attributes on thousands of nodes."""
    answers: dict[tuple[str | None, str | None], bool] = {}
    # (and once per node: a parent is asked again for each of its children, and reading its
    # names costs more than finding it)
    of_node: dict[etree._Element, bool] = {}

    def asked(node: etree._Element) -> bool:
        answer = of_node.get(node)
        if answer is None:
            names = (node.get("id"), node.get("class"))
            answer = answers.get(names)
            if answer is None:
                answer = answers[names] = ask(node)
            of_node[node] = answer
        return answer

    return asked


@dataclass
class WrapQuestions:
    """What deciding a wrapper asks of the page's references, per node (`_wrap` asks each
    once per node: many candidates share ancestors, parents and siblings)."""

    structure_matters: Callable[[etree._Element], bool]
    used_by_scripts: Callable[[etree._Element], bool]  # found by its id or a class
    found_by_widget_attribute: Callable[[etree._Element], bool]
    follows_held: frozenset[str]  # `+`, `~`: how scripts select what follows what they hold
    # The steps scripts take from what they hold to a sibling (`refs.steps_held`): each
    # direction (`+`, `~`, `-`, `-~`) with whether an element is what it steps to.
    steps: tuple[tuple[str, Callable[[etree._Element], bool]], ...]
    # Parent -> whether a structural rule matches one of its children, kept up to date as
    # wrappers go in (`wrapped`); None: asked afresh each time (one-off questions).
    structured_children: dict[etree._Element, bool] | None = None
    # Told of a parent a wrapper went into: what the references keep of its children goes.
    children_changed: Callable[[etree._Element], None] = lambda parent: None
    # (set from the questions: `__post_init__`)
    structured: bool = field(init=False)
    walked_by_scripts: Callable[[etree._Element], bool] = field(init=False)
    steps_reach: dict[bool, bool] = field(init=False)

    def __post_init__(self) -> None:
        # Which questions may say yes: one that is "no" for every element is not asked (a call
        # per candidate, and most pages have no structural rule or no widget attribute read).
        self.structured = self.structure_matters is not _never
        # Whether a script may hold a node and walk its children (`> *` relative to it): held
        # by a name or found by a widget's attribute. (Of the two questions, not a method of
        # this object: kept on it, a bound method made a reference cycle, which held the
        # page's whole tree, and every node a question had been asked of, past the shift, to
        # be freed by Python's next collection instead of when the shift ends.)
        used, found = self.used_by_scripts, self.found_by_widget_attribute
        self.walked_by_scripts = (
            used
            if found is _never
            else found
            if used is _never
            else lambda node: used(node) or found(node)
        )
        # Whether a script's step could reach a node from one held before it (True) or after
        # it (False): where none could, `_beside_held` is "no" without asking of the node.
        self.steps_reach = {
            held_before: bool(set(_DIRECTIONS[held_before]) & self.follows_held)
            or any(direction in _DIRECTIONS[held_before] for direction, _ in self.steps)
            for held_before in (True, False)
        }

    @classmethod
    def of(cls, refs: PageRefs, once: bool = True) -> WrapQuestions:
        """The questions for a page's references; one the references answer "no" for every
        element (no structural rule, no name or widget attribute a script reads) is not asked
        per element at all: most pages' inline blocks, and apps without such scripts."""
        cached = _once_per_node if once else (lambda ask: ask)
        return cls(
            cached(refs.structure_question()) if refs.has_structure else _never,
            (
                (_once_per_names if once else cached)(
                    lambda node: _referenced_by_scripts(node, refs)
                )
                if refs.names_anything_for_scripts
                else _never
            ),
            (
                cached(lambda node: _found_by_widget_attribute(node, refs))
                if refs.reads_widget_attributes
                else _never
            ),
            refs.follows_held,
            tuple(
                (direction, matcher(target))
                for direction, _, target in (
                    step.partition(" ") for step in sorted(refs.steps_held)
                )
            ),
            {} if once else None,
            refs.children_changed,
        )

    def a_child_structured(self, parent: etree._Element) -> bool:
        """Whether a structural rule matches a child of `parent`: once per parent, not once
        per candidate among its children (a parent of thousands made that quadratic)."""
        if self.structure_matters is _never:
            return False
        known = self.structured_children
        if known is None:
            return any(self.structure_matters(child) for child in parent)
        if parent not in known:
            known[parent] = any(self.structure_matters(child) for child in parent)
        return known[parent]

    def wrapped(self, parent: etree._Element, wrapper: etree._Element) -> None:
        """A wrapper took the place of a child of `parent` that no structural rule matches:
        the parent's answer is the same, unless one matches the wrapper."""
        if self.structure_matters is _never:
            return
        self.children_changed(parent)  # (before the wrapper is asked about: it is one of them)
        known = self.structured_children
        if known is not None and parent in known and not known[parent]:
            known[parent] = self.structure_matters(wrapper)


def wrap_refusal(
    element: etree._Element,
    parent: etree._Element,
    ask: WrapQuestions,
    mount_point: bool = False,
) -> str | None:
    """Why the element may get no wrapper, its ancestry being clear (`_wrap`); None if it may.
    `mount_point`: it is the mount point of a single-page app's shell (no control in its
    markup), which a script holding it may still see wrapped. The reasons are what
    `tools.drift_holds` prints."""
    # A shadow host assigns an element to a named slot only as its direct child: inside a
    # wrapper it leaves the slot (and, with no default slot, disappears from the page).
    if element.get("slot") is not None:
        return "it fills a slot of its parent's shadow tree"
    # The same for the default slot: a custom element's children are what its shadow tree
    # assigns, styles (`::slotted(x-tab)`) and walks (`this.children`); a wrapper is none.
    if _is_custom(parent):
        return "its parent is a custom element, whose shadow tree takes its children"
    if ask.structured and ask.structure_matters(element):
        return "a structural rule matches it"
    # Its siblings keep their positions, but `:nth-of-type` counts by tag: a sibling matched
    # by a positional rule must not see one of its type disappear into a wrapper.
    if ask.structured and ask.a_child_structured(parent):  # (not it: asked above)
        return "a structural rule matches a sibling"
    # A script holding the parent may walk its children; one holding the element may ask for
    # its parent (`.parentNode`, jQuery's `.parent()`), unless it is an empty mount point that
    # a framework fills (React's `#root`, Vue's `#app` are found by id and filled, no more).
    if ask.walked_by_scripts(parent):
        return "a script may walk its parent's children"
    # In a shell, a mount point's script renders into it and asks no more of it. On any other
    # page an empty element a script holds is no such promise: phpMyAdmin fills its
    # `#floating_menubar` later, and keeps it by id while it removes every other child of
    # `<body>` (a wrapper around it went with them, and the menu bar with it).
    if ask.used_by_scripts(element) and not mount_point:
        return "a script holds it"
    if ask.steps_reach[True] and _beside_held(element, ask, held_before=True):
        return "it follows an element a script holds, and a script selects what follows such"
    if ask.steps_reach[False] and _beside_held(element, ask, held_before=False):
        return "it precedes an element a script holds, and a script steps back from such to it"
    return None


# The steps from a held node to a later sibling (`+`: the next, `~`: any) and to an earlier one.
_DIRECTIONS = {True: ("+", "~"), False: ("-", "-~")}


def _beside_held(element: etree._Element, ask: WrapQuestions, held_before: bool) -> bool:
    """Whether a script's step from an element it holds could reach `element`, the held one
    before it (`held_before`: `"+ x"`, the next sibling, `"~ x"`, any later one, as a selector
    or jQuery's `.next("x")`, `.nextAll("x")`) or after it (`.prev("x")`, `.prevAll("x")`):
    a wrapper would take it out of that place."""
    one, any_ = _DIRECTIONS[held_before]
    reach = 2 if any_ in ask.follows_held else 1 if one in ask.follows_held else 0
    for direction, steps_to in ask.steps:
        if reach < 2 and direction in (one, any_) and steps_to(element):
            reach = max(reach, 2 if direction == any_ else 1)
    if not reach:
        return False
    neighbours = element.itersiblings(etree.Element, preceding=held_before)  # elements only
    if reach == 1:
        neighbours = itertools.islice(neighbours, 1)
    return any(ask.walked_by_scripts(node) for node in neighbours)  # (held by a name or widget)


def _is_mount_point(element: etree._Element) -> bool:
    """An empty element with an id or of a custom element's name: where a framework renders an
    app (React's `#root`, Vue's `#app`, Angular's `<app-root>`, found by its tag)."""
    named = bool(element.get("id")) or _is_custom(element)
    return named and len(element) == 0 and not (element.text or "").strip()


def _is_custom(element: etree._Element) -> bool:
    """An element of a custom element's name (it holds a hyphen, as no HTML tag does)."""
    tag = element.tag
    return isinstance(tag, str) and "-" in tag and not tag.startswith("{")


def _key_token(keyed: dict[str, str], name: str, token: str) -> None:
    """Note the token a drift gave `name` if the name is made anew at each request: a coin
    reads such a name keyed (`volatile.name_key`), its token being another at each load."""
    key = volatile.name_key(name)
    if key != name:
        keyed[token] = key


def _signature(element: etree._Element, keyed: dict[str, str] | None = None) -> str:
    """A key for the seeded coin that is the same for the same control on every page of the
    site: what it is, not where it is, nor what per-request values (a link's nonce, a form's
    name made anew on each request, as Redmine names every form, an id made by `uniqid()`) it
    holds, nor the numbers of its text. Read in C where it can be (`shifts.native`: a tenth of
    the time, and a first load reads one for every element it may wrap)."""
    return native.either(native.signature, _signature_read, element, keyed)


def _signature_read(element: etree._Element, keyed: dict[str, str] | None = None) -> str:
    """`_signature` in Python: its definition, which the C one follows."""
    get = element.get
    # (The id and the classes as one string, as a coin reads names: their random runs
    # masked; the name and the link as another, their per-request values masked: no value
    # runs across a `|`, and a pattern search per string is what a first load under a new
    # seed saves; the text with its numbers masked too.)
    element_id, classes = get("id") or "", get("class") or ""
    if keyed:  # (tokens of names made anew at each request: their names, keyed)
        element_id = keyed.get(element_id, element_id)
        classes = " ".join(keyed.get(name, name) for name in classes.split())
    names = volatile.name_key(f"{element_id}|{classes}")
    return (
        f"{element.tag}|{names}|"
        + volatile.mask(f"{get('name') or ''}|{get('href') or ''}|")
        + _first_words(element)
    )


# The first 201 characters of the element's text, in C (the string is built in libxml2; only
# these characters become a Python string, however much text a container holds).
_TEXT_START = etree.XPath("substring(string(.), 1, 201)")


def _first_words(element: etree._Element) -> str:
    """The first 40 characters of the element's whitespace-normalized text as a coin reads
    them: its per-request values and numbers masked first (`volatile.mask_text`), so that a
    value is never read in part, and a number of another length (a count, a clock's seconds,
    a response time) moves no character the coin reads."""
    return _masked_start(element)[:_CUT]


_CUT = 40  # (the characters of its masked text a coin reads)
_READ = 201  # (the characters of a text read at first: a container's, in C)
_WORD = volatile.WORD_CHARACTERS  # (a run's characters, as a value's are)


def _masked_start(element: etree._Element) -> str:
    """The start of the element's whitespace-normalized text, masked: all of it, or a start
    that holds its first `_CUT` masked characters (`_masked`), read from as few of its text
    parts as that takes: containers hold whole pages."""
    # (A leaf, as most controls are: its text is its one part.)
    leaf = len(element) == 0
    start = (element.text or "")[:_READ] if leaf else str(_TEXT_START(element))
    masked = _masked(start, whole=len(start) < _READ)
    if masked is not None:
        return masked
    # Mostly whitespace (indented markup), or a run the first characters end in: read the
    # parts themselves, as far as that takes.
    text = ""
    for part in element.itertext():
        text += str(part)
        if len(text) >= _READ and (masked := _masked(text, whole=False)) is not None:
            return masked
    return _masked(text, whole=True) or ""


def _masked(start: str, whole: bool) -> str | None:
    """The start of a text, normalized and masked, if it is all of the text (`whole`) or holds
    its first `_CUT` masked characters; else None. A start that ends in a word character is
    read up to the run it ends in, which may go on past it (masked whole, or not, by all of
    it): what is read is then a start of the whole text's masked form. Masked in steps, from
    the first `_CUT` characters on (a run at the step's end read whole): a container's text is
    mostly far longer than what a coin reads."""
    words = " ".join(start.split())
    if not whole and start[-1:] in _WORD:
        run = len(words)
        while run and words[run - 1] in _WORD:
            run -= 1
        words = words[:run]
    step = _CUT
    while step < len(words):
        while step < len(words) and words[step - 1] in _WORD and words[step] in _WORD:
            step += 1
        masked = volatile.mask_text(words[:step])
        if len(masked) >= _CUT:
            return masked
        step += _CUT
    masked = volatile.mask_text(words)
    return masked if whole or len(masked) >= _CUT else None


# Every byte that is not a word character as a space: a page's words are then its
# whitespace-separated parts (`bytes.split`, in C).
_SPACE_OUT = bytes(b if b in volatile.WORD_BYTES else 0x20 for b in range(256))


class _Mentions:
    """How often a name occurs in the page as a word (an id's own attribute counts once).

    A word is a maximal run of `[A-Za-z0-9_-]`. Each occurrence is found with bytes.find (C)
    and kept if its neighbours are not word characters: the same count as tokenising the whole
    page, without tokenising it, while few names are asked. A name that occurs at most `limit`
    times is only known to after a scan to the page's end, and a page asks that of most of its
    ids (they are unique), which made a page's cost its ids times its size: 15 s for a 2 MB page
    with 20,000 ids. So once the scans have read `SCANS_BEFORE_COUNTING` pages' worth, every
    word is counted in one pass and the rest are looked up: a page costs at most those scans
    and one count (about 45 scans' worth), whatever its ids.
    Names with characters outside the word alphabet fall back to a plain substring count (which
    can only over-count: safe here). `asked`: the names that will be asked, if known: then only
    they are counted (a page's words are mostly no name of it: a 250 KB page's 33,000 words
    are 7,800 distinct ones, and a count of each cost 5 ms of a 50-90 ms first load), and a
    name not among them is scanned for. Counted in C (`shifts.native`), the asked names cost
    a few scans' worth together (2-12 pages' worth, by how many they are): they are counted
    at the first ask, not after scans (a page of unique ids asks after a thousand of them,
    and the scans for their first few cost a first load more than the count).
    """

    _WORD = re.compile(rb"[A-Za-z0-9_-]+")
    SCANS_BEFORE_COUNTING = 8  # (counting every word of a page costs about 45 scans of it)

    def __init__(self, original: bytes, asked: Iterable[str] | None = None) -> None:
        self.original = original
        self._scanned = 0  # bytes the scans have read so far
        self._words: Counter[bytes] | None = None  # every word's count, once scans cost more
        self._asked = None if asked is None else frozenset(asked)
        self._counted: frozenset[bytes] | None = None  # the words counted (None: every word)

    def count(self, name: str) -> int:
        return self._count(name, None)

    def more_than(self, name: str, limit: int) -> bool:
        """Whether the name occurs more than `limit` times (counting stops there: a common
        word can occur thousands of times)."""
        return self._count(name, limit) > limit

    def _count(self, name: str, limit: int | None) -> int:
        encoded = name.encode("utf-8", "replace")
        if not self._WORD.fullmatch(encoded):
            return self.original.count(encoded)
        if self._words is None and self._asked is not None and native.count_words is not None:
            self._count_asked()
        if self._words is not None and (self._counted is None or encoded in self._counted):
            return self._words[encoded]
        page, count, start, word = self.original, 0, 0, volatile.WORD_BYTES
        while (found := page.find(encoded, start)) != -1:
            end = found + len(encoded)
            before = page[found - 1] if found > 0 else None
            after = page[end] if end < len(page) else None
            if before not in word and after not in word:
                count += 1
                if limit is not None and count > limit:
                    break
            start = found + 1
        self._scanned += len(page) if found == -1 else found
        if self._words is None and self._scanned > self.SCANS_BEFORE_COUNTING * len(page):
            if self._asked is None:
                self._words = Counter(page.translate(_SPACE_OUT).split())
            else:
                self._count_asked()
        return count

    def _count_asked(self) -> None:
        assert self._asked is not None
        self._counted = frozenset(name.encode("utf-8", "replace") for name in self._asked)
        self._words = _counted_words(self.original, self._counted)


def _counted_words(page: bytes, names: frozenset[bytes]) -> Counter[bytes]:
    """How often each of `names` occurs in `page` as a word. In C where it can be
    (`shifts.native`): in Python, a bytes object per word of the page to find the few that are
    names."""
    return Counter(native.either(native.count_words, _counted_words_read, page, names))


def _counted_words_read(page: bytes, names: frozenset[bytes]) -> Counter[bytes]:
    """`_counted_words` in Python: its definition, which the C one follows."""
    return Counter(filter(names.__contains__, page.translate(_SPACE_OUT).split()))


register(LocatorDrift())
