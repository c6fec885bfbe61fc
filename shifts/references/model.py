"""What stylesheets and scripts reference, as data: `AssetRefs` (per asset, merged per page), the
structural rules of their selectors, and `PageRefs`, the questions locator drift asks of them."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from lxml import etree

from shifts import native

# A compound selector's element tests: tag (None = any), classes, id, attribute names.
# The attribute tests are (name, operator, value), operator "" for presence.
Keys = tuple[str | None, frozenset[str], str | None, frozenset[tuple[str, str, str]]]
# An attribute test with a value in a simple selector (`[data-step=3]`, `[name^="a"]`): its name.
_VALUE_TEST = re.compile(r"\[\s*([^\s~|^$*=\]]+)\s*[~|^$*]?=")
# The attributes by which scripts find widgets (Stimulus's `[data-controller]`, `[role=tablist]`).
WIDGET_ATTRIBUTE_PREFIXES = ("data-", "aria-", "role")


@dataclass(frozen=True)
class StructuralRule:
    """A selector part that depends on where an element sits, not only on what it is.

    `child` compounds are the right side of `>` (with the parent compound they need); `sibling`
    compounds take part in `+`/`~` or carry a positional pseudo-class (`:nth-child`,
    `:first-of-type`, ...); `subtree` compounds carry `:has()`, which looks into descendants.
    """

    kind: Literal["child", "sibling", "subtree"]
    keys: Keys
    parent: Keys | None = None  # `P > E`: only elements whose parent may match P
    ancestor: Keys | None = None  # `A E`: only elements with an ancestor that may match A
    sibling: Keys | None = None  # `A + E`, `E ~ B`: only elements with a sibling matching it


@dataclass(frozen=True)
class AssetRefs:
    ids: frozenset[str] = frozenset()
    classes: frozenset[str] = frozenset()
    attributes: frozenset[str] = frozenset()  # attribute names in selectors
    values: frozenset[str] = frozenset()  # attribute values in selectors
    tags: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()  # the words of the values scripts hold (jslex)
    prefixes: frozenset[str] = frozenset()  # words ending in '-' or '_' ("btn-")
    # What scripts append to a value they hold at run time (`name + "-group"`, `m + "_form"`:
    # Django's admin): a name ending in one may be the one they build.
    suffixes: frozenset[str] = frozenset()
    # Identifiers scripts use unqualified or through named access (`main`, `window.main`):
    # the ids they may reach without a value naming them (jslex).
    free_names: frozenset[str] = frozenset()
    structure: frozenset[StructuralRule] = frozenset()
    # The combinators by which a script selects what follows an element it holds (`"+ li"`:
    # the next sibling, `"~ *"`: any later one; the right side of a selector built from pieces,
    # or jQuery's relative `.find("+ li")`).
    follows_held: frozenset[str] = frozenset()
    # The steps scripts take from an element they hold to a sibling, with what they step to:
    # `"+ span"` (`.next("span")`), `"~ li"` (`.nextAll("li")`), `"- b"` (`.prev("b")`),
    # `"-~ h2"` (`.prevAll("h2")`); `.siblings("x")` both ways.
    steps_held: frozenset[str] = frozenset()
    # The attributes scripts read or query (a subset of `attributes`, which a stylesheet's
    # selectors add to): how a script may find a widget (`[data-controller]`, `[role=tablist]`).
    script_attributes: frozenset[str] = frozenset()
    # Whether a script reads an element's id as data, slicing or matching its text
    # (`$link.attr('id').substr(2)`, `this.id.split('_')`: DokuWiki's media manager takes the
    # file a link stands for from its id, `h_:wiki:logo.png`): such a script finds the
    # element by something else (a class), and renaming its id changes what the app does.
    parses_ids: bool = False
    # False when some asset of the page could not be read: nothing may be assumed unreferenced.
    complete: bool = True

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """Every name an asset mentions, as whatever kind of identifier."""
        return self.ids | self.classes | self.attributes | self.values | self.words

    @functools.cached_property
    def _prefixes(self) -> tuple[str, ...]:
        return tuple(self.prefixes)

    @functools.cached_property
    def _suffixes(self) -> tuple[str, ...]:
        return tuple(self.suffixes)

    @functools.cached_property
    def names_anything_for_scripts(self) -> bool:
        """Whether scripts may name anything at all (`scripts_use`, `reaches_id`)."""
        return bool(self.words or self.prefixes or self.suffixes or self.free_names)

    @functools.cached_property
    def widget_attributes_read(self) -> frozenset[str]:
        """The `data-*`, `aria-*` and `role` attributes scripts read (how scripts find a
        widget: locator drift's `_found_by_widget_attribute`), in lower case."""
        return frozenset(
            name for name in self.script_attributes if name.startswith(WIDGET_ATTRIBUTE_PREFIXES)
        )

    @property
    def reads_widget_attributes(self) -> bool:
        """Whether any script reads a `data-*`, `aria-*` or `role` attribute."""
        return bool(self.widget_attributes_read)

    def references(self, name: str) -> bool:
        """Whether any asset may refer to `name` (an id, class or attribute value)."""
        return name in self.names or _built(name, self._prefixes, self._suffixes)

    def reads_attribute(self, name: str) -> bool:
        """Whether a stylesheet selects by, or a script reads or queries, the attribute."""
        return name.lower() in self.attributes

    def scripts_read_attribute(self, name: str) -> bool:
        """Whether a script reads or queries the attribute (a stylesheet's selector finds
        nothing a script then walks)."""
        return name.lower() in self.script_attributes

    def scripts_use(self, name: str) -> bool:
        """Whether a script may use `name` (a word of it, or a name it builds with a prefix
        or a suffix of its own)."""
        return name in self.words or _built(name, self._prefixes, self._suffixes)

    def reaches_id(self, element_id: str) -> bool:
        """Whether a script may reach the element with this id: by a value naming it, or by
        named access (`window.main`, a global `main`)."""
        return self.scripts_use(element_id) or element_id in self.free_names

    @functools.cached_property
    def has_structure(self) -> bool:
        """Whether any structural rule (`>`, `+`, `~`, a positional pseudo-class) is known:
        without one, no element's place matters, and nothing need be asked per element."""
        return self._structure_index.holds_any()

    @functools.cached_property
    def values_tested(self) -> frozenset[str]:
        """The attributes a structural rule, or a script's step to a sibling, tests the value
        of (`[data-step="3"] > a`, `.next("[data-step=3]")`): where an element's place may
        depend on what the attribute holds. (Elsewhere a selector's attribute decides by being
        there, or by its own value: `[data-controller]`.)"""
        in_rules = (
            name.lower()
            for rule in self.structure
            for keys in (rule.keys, rule.parent, rule.ancestor, rule.sibling)
            if keys is not None
            for name, operator, _ in keys[3]
            if operator
        )
        in_steps = (name.lower() for step in self.steps_held for name in _VALUE_TEST.findall(step))
        return frozenset([*in_rules, *in_steps])

    @functools.cached_property
    def has_subtree(self) -> bool:
        """Whether any `:has()` rule is known (`looks_inside`)."""
        return bool(self._structure_index.subtree)

    def structure_matters(self, element: etree._Element, kept: KeptMatches | None = None) -> bool:
        """Whether a structural selector could match `element`: then it must keep its parent
        and its position among its siblings. `kept`: a page's answers kept between questions
        (`PageRefs`)."""
        if not self.has_structure:
            return False  # (most inline blocks: no structural selector at all)
        return (kept or KeptMatches()).structure_matters(self._structure_index, element)

    def structural_rules_of(
        self, element: etree._Element, kept: KeptMatches | None = None
    ) -> list[StructuralRule]:
        """The structural rules that could match `element` where it is (what a diagnosis
        shows)."""
        if not self.has_structure:
            return []
        return self._structure_index.matching(element, kept or KeptMatches(), first=False)

    def looks_inside(self, element: etree._Element) -> bool:
        """Whether a `:has()` selector could match `element` (its subtree's shape matters)."""
        if not self.has_subtree:
            return False
        return any(_matches(element, rule.keys) for rule in self._structure_index.subtree)

    @functools.cached_property
    def _structure_index(self) -> _StructureIndex:
        return _StructureIndex(self.structure)


ANY_ELEMENT: Keys = (None, frozenset(), None, frozenset())  # `*`, or a compound naming nothing


def _filed_under(keys: Keys) -> tuple[str, str] | None:
    """The most specific test of a compound, which every element it matches passes (its id,
    a class, an attribute's name, its tag); None: it names nothing, every element passes."""
    tag, classes, element_id, attributes = keys
    if element_id is not None:
        return ("id", element_id)
    if classes:
        return ("class", min(classes))
    if attributes:
        return ("attr", min(attributes)[0])
    if tag is not None:
        return ("tag", tag)
    return None


class _Keyed[T]:
    """Items filed by the most specific test of a compound each stands for (`_filed_under`),
    so an element is asked about the few whose test it passes, not about every one."""

    def __init__(
        self, items: Iterable[tuple[Keys, T]], collect: Callable[[list[T]], list[Any]] = list
    ) -> None:
        by_key: dict[tuple[str, str], list[T]] = {}
        rest: list[T] = []
        for keys, item in items:
            key = _filed_under(keys)
            (rest if key is None else by_key.setdefault(key, [])).append(item)
        # (each kind's apart, by name: an element's names are looked up with no key made of
        # each, and most elements are filed under none: GitLab's, three in five)
        self.by_tag, self.by_attribute, self.by_class, self.by_id = (
            {name: collect(filed) for (kind, name), filed in by_key.items() if kind == wanted}
            for wanted in ("tag", "attr", "class", "id")
        )
        # `*:first-child`, `P > *`: their compound names nothing, which every element matches
        self.rest = collect(rest)

    def holds_any(self) -> bool:
        return any((self.by_tag, self.by_attribute, self.by_class, self.by_id, self.rest))

    def candidates(self, element: etree._Element, tag: str) -> list[Any]:
        """The items whose compound's test `element` (its tag lowercase: `tag`) passes: those
        filed under its tag, its attributes, its classes, its id, in that order, then the
        rest. (Only the kinds of test some item is filed under are read of the element,
        each a string made by lxml.)"""
        found: list[Any] = []
        if self.by_tag:
            found += self.by_tag.get(tag, ())
        if self.by_attribute:
            by_attribute = self.by_attribute
            for name in element.attrib:
                found += by_attribute.get(str(name).lower(), ())
        if self.by_class:
            by_class = self.by_class
            for name in (element.get("class") or "").split():
                found += by_class.get(name, ())
        if self.by_id and (element_id := element.get("id")):
            found += self.by_id.get(element_id, ())
        return found + self.rest if found else self.rest  # (read, never changed)


class _Group:
    """Rules that share a compound, then a parent compound, tested together: an element is
    tested against each compound once (GitLab's navigation has 19 rules `li > a`, under a
    dozen parents), and a parent against the parent compounds and ancestors once for all its
    children (`KeptMatches.rules_under`). Kept by its identity (a page's answers are)."""

    __slots__ = ("by_parent", "compound", "names_nothing", "_parents")

    # More parent compounds than this are filed by their tests (`parent_compounds`).
    FILED_PAST = 4

    def __init__(
        self,
        compound: Keys,
        by_parent: tuple[tuple[Keys | None, tuple[StructuralRule, ...]], ...],
    ) -> None:
        self.compound = compound
        # `*`, or a compound naming nothing: every element matches it (`P > *`, `A + *`)
        self.names_nothing = compound == ANY_ELEMENT
        self.by_parent = by_parent
        self._parents: _Keyed[int] | None = None

    def parent_compounds(self, parent: etree._Element | None) -> Iterable[int]:
        """Where in `by_parent` `parent` may match the parent compound (or there is none),
        in order; every one where there is no parent. A universal compound's rules have
        dozens (WordPress's `.wp-block-columns > *`, `.entry-content > *`, ...), and a parent
        passes the tests of few."""
        if (
            parent is None
            or len(self.by_parent) <= self.FILED_PAST
            or not isinstance(tag := parent.tag, str)
        ):
            return range(len(self.by_parent))
        if self._parents is None:
            self._parents = _Keyed(
                (up or ANY_ELEMENT, index) for index, (up, _) in enumerate(self.by_parent)
            )
        return sorted(self._parents.candidates(parent, tag.lower()))


class _StructureIndex:
    """Structural rules by the most specific test of their compound, so an element is checked
    against the few rules that name its id, a class, its tag or one of its attributes."""

    def __init__(self, rules: Iterable[StructuralRule]) -> None:
        rules = list(rules)
        self.subtree = [rule for rule in rules if rule.kind == "subtree"]
        self._filed: _Keyed[StructuralRule] = _Keyed(
            ((rule.keys, rule) for rule in rules if rule.kind != "subtree"), collect=_grouped
        )

    @functools.cached_property
    def compiled(self) -> object | None:
        """This index in C (`shifts.native.structure_index`), made once; None where the C is
        not built. Its groups are described by their indexes, filed as they are here."""
        if native.structure_index is None:
            return None
        groups: list[_Group] = []
        at: dict[_Group, int] = {}  # (a group's place in `groups`; groups hash by identity)

        def indexes(filed: list[_Group]) -> tuple[int, ...]:
            for group in filed:
                if group not in at:
                    at[group] = len(groups)
                    groups.append(group)
            return tuple(at[group] for group in filed)

        keyed = self._filed
        by_kind = [
            {name: indexes(filed) for name, filed in by_name.items()}
            for by_name in (keyed.by_tag, keyed.by_attribute, keyed.by_class, keyed.by_id)
        ]
        rest = indexes(keyed.rest)
        described = tuple(
            (
                group.compound,
                group.names_nothing,
                tuple(
                    (up, tuple((rule.ancestor, rule.sibling) for rule in filed))
                    for up, filed in group.by_parent
                ),
            )
            for group in groups
        )
        return native.structure_index(described, *by_kind, rest)

    def holds_any(self) -> bool:
        """Whether any rule is filed (a `:has()` one is kept apart: `subtree`)."""
        return self._filed.holds_any()

    def matching(
        self, element: etree._Element, kept: KeptMatches, first: bool
    ) -> list[StructuralRule]:
        """The rules that could match `element` where it is; `first`: only the first found
        (whether any does). One loop, no generator: asked of every wrap candidate and each
        child of its parent."""
        tag = element.tag
        if not isinstance(tag, str):
            return []
        parent = element.getparent()
        found = []
        for group in self._filed.candidates(element, tag.lower()):
            if not group.names_nothing and not _matches(element, group.compound):
                continue
            for rule, siblings in kept.rules_under(parent, group):
                # (another child matches the rule's sibling compound: one is there but this)
                if siblings is None or (
                    siblings and (len(siblings) > 1 or siblings[0] is not element)
                ):
                    found.append(rule)
                    if first:
                        return found
        return found


def _grouped(rules: list[StructuralRule]) -> list[_Group]:
    """The rules by their compound, then by their parent compound, in the order first met."""
    groups: dict[Keys, dict[Keys | None, list[StructuralRule]]] = {}
    for rule in rules:
        groups.setdefault(rule.keys, {}).setdefault(rule.parent, []).append(rule)
    return [
        _Group(compound, tuple((up, tuple(filed)) for up, filed in by_parent.items()))
        for compound, by_parent in groups.items()
    ]


EMPTY = AssetRefs()


UNKNOWN = AssetRefs(complete=False)


def _structure_matters(
    assets: AssetRefs, inline: AssetRefs, kept: KeptMatches, element: etree._Element
) -> bool:
    """`PageRefs.structure_matters`, of its two references and what it keeps."""
    return assets.structure_matters(element, kept) or inline.structure_matters(element, kept)


@dataclass(frozen=True)
class PageRefs:
    """A page's external assets' references and its inline ones, asked together without
    merging them: the external ones (shared by every load of the page) keep their indexes,
    so a page load does not rebuild them."""

    assets: AssetRefs
    inline: AssetRefs

    @property
    def complete(self) -> bool:
        return self.assets.complete and self.inline.complete

    @property
    def has_structure(self) -> bool:
        return self.assets.has_structure or self.inline.has_structure

    @property
    def has_subtree(self) -> bool:
        return self.assets.has_subtree or self.inline.has_subtree

    @property
    def names_anything_for_scripts(self) -> bool:
        return self.assets.names_anything_for_scripts or self.inline.names_anything_for_scripts

    @property
    def reads_widget_attributes(self) -> bool:
        return self.assets.reads_widget_attributes or self.inline.reads_widget_attributes

    @functools.cached_property
    def widget_attributes_read(self) -> frozenset[str]:
        return self.assets.widget_attributes_read | self.inline.widget_attributes_read

    @property
    def steps_held(self) -> frozenset[str]:
        return self.assets.steps_held | self.inline.steps_held

    @property
    def parses_ids(self) -> bool:
        return self.assets.parses_ids or self.inline.parses_ids

    def references(self, name: str) -> bool:
        # (both assets' `references` in one: asked of every class and id of a page)
        return (
            name in self.assets.names
            or name in self.inline.names
            or _built(name, self._prefixes, self._suffixes)
        )

    def reads_attribute(self, name: str) -> bool:
        return self.assets.reads_attribute(name) or self.inline.reads_attribute(name)

    @property
    def values_tested(self) -> frozenset[str]:
        return self.assets.values_tested | self.inline.values_tested

    def scripts_use(self, name: str) -> bool:
        # (both assets' `scripts_use` in one: asked of every class of every wrap candidate)
        return (
            name in self.assets.words
            or name in self.inline.words
            or _built(name, self._prefixes, self._suffixes)
        )

    def reaches_id(self, element_id: str) -> bool:
        return (
            self.scripts_use(element_id)
            or element_id in self.assets.free_names
            or element_id in self.inline.free_names
        )

    def unreached(self, names: Iterable[str]) -> set[str]:
        """The names of `names` that no asset `references` and no script `reaches_id`: a
        page's every id asked at once, by set differences (in C), not two questions of
        each (a page's ids are thousands, each otherwise six lookups and two calls)."""
        # (`names` holds the words: `reaches_id`'s `scripts_use` asks nothing more of them)
        left = set(names).difference(
            self.assets.names, self.inline.names, self.assets.free_names, self.inline.free_names
        )
        if self._prefixes or self._suffixes:
            left = {name for name in left if not _built(name, self._prefixes, self._suffixes)}
        return left

    @functools.cached_property
    def _prefixes(self) -> tuple[str, ...]:
        return tuple(self.assets.prefixes | self.inline.prefixes)

    @functools.cached_property
    def _suffixes(self) -> tuple[str, ...]:
        return tuple(self.assets.suffixes | self.inline.suffixes)

    def structure_matters(self, element: etree._Element) -> bool:
        return _structure_matters(self.assets, self.inline, self._kept, element)

    def structure_question(self) -> Callable[[etree._Element], bool]:
        """`structure_matters`, as a function that asks the C's answers under each index with
        structural rules directly (`KeptMatches.structure_matters`'s), past the two layers a
        question passes through otherwise: the wrap pass asks it of every candidate and each
        child of its parent (440 -> 207 ns a question asked again on GitLab's project page).
        Made anew for each caller, and holding no reference to these references (kept on
        them, it would be a reference cycle: the page's tree freed by a collection, not as it
        ends)."""
        kept = self._kept
        indexes = [
            refs._structure_index for refs in (self.assets, self.inline) if refs.has_structure
        ]
        states = [kept.compiled_state(index) for index in indexes]
        compiled = native.structure_matters
        if compiled is None or None in states:
            return functools.partial(_structure_matters, self.assets, self.inline, kept)
        asked = list(zip(states, indexes, strict=True))

        def question(element: etree._Element) -> bool:
            for state, index in asked:
                answer = compiled(state, element)
                if answer is None:  # (a tree the C does not read: the Python's answer)
                    answer = kept.structure_matters(index, element)
                if answer:
                    return True
            return False

        return question

    def structural_rules_of(self, element: etree._Element) -> list[StructuralRule]:
        return [
            *self.assets.structural_rules_of(element, self._kept),
            *self.inline.structural_rules_of(element, self._kept),
        ]

    def children_changed(self, parent: etree._Element) -> None:
        """A wrapper took a child's place in `parent` (`KeptMatches.children_changed`)."""
        self._kept.children_changed(parent)

    @functools.cached_property
    def _kept(self) -> KeptMatches:
        return KeptMatches()

    def looks_inside(self, element: etree._Element) -> bool:
        return self.assets.looks_inside(element) or self.inline.looks_inside(element)

    @property
    def follows_held(self) -> frozenset[str]:
        return self.assets.follows_held | self.inline.follows_held


def _built(name: str, prefixes: tuple[str, ...], suffixes: tuple[str, ...]) -> bool:
    """Whether `name` may be built of a value held at run time and a script's own prefix
    (`"is-" + state`) or suffix (`name + "-group"`)."""
    return name.startswith(prefixes) or name.endswith(suffixes)


def merge_refs(refs: Iterable[AssetRefs]) -> AssetRefs:
    items = list(refs)
    return AssetRefs(
        ids=frozenset().union(*(r.ids for r in items)),
        classes=frozenset().union(*(r.classes for r in items)),
        attributes=frozenset().union(*(r.attributes for r in items)),
        values=frozenset().union(*(r.values for r in items)),
        tags=frozenset().union(*(r.tags for r in items)),
        words=frozenset().union(*(r.words for r in items)),
        prefixes=frozenset().union(*(r.prefixes for r in items)),
        suffixes=frozenset().union(*(r.suffixes for r in items)),
        free_names=frozenset().union(*(r.free_names for r in items)),
        structure=frozenset().union(*(r.structure for r in items)),
        follows_held=frozenset().union(*(r.follows_held for r in items)),
        steps_held=frozenset().union(*(r.steps_held for r in items)),
        script_attributes=frozenset().union(*(r.script_attributes for r in items)),
        parses_ids=any(r.parses_ids for r in items),
        complete=all(r.complete for r in items),
    )


class KeptMatches:
    """A page's answers to "does this node match this compound", kept per node while locator
    drift decides its wrappers: a parent is asked about the same parent compounds for each of
    its children, a sibling about the same sibling compounds for each of its siblings, and an
    ancestor for each node below it (an element's own compounds are asked once each, grouped
    by `_StructureIndex`).

    `matches` is a node's own answer, which depends on its names alone: they are final when
    the questions start (the drifts rename before anything is wrapped), and a wrapper is a new
    node (kept where the Python answers it; the C answers faster than it is looked up).
    `at_or_above`: whether a node or one above it matches (`A E`: an ancestor of E matching A).
    That answer stays true as wrappers go in above a node: a wrapper (a custom tag, no
    attribute) matches no compound that names something, and one that names nothing is
    matched by the node's old parent as well. `rules_under`: what a parent answers for all its
    children, with which of them may match a rule's sibling compound (`A + E`); kept per
    parent until a wrapper takes a child's place in it (`children_changed`: the wrapped child
    is a sibling no more). The C keeps the same answers by node, of one document's tree (the
    first it is asked about; another's it leaves to the Python), which it keeps alive.

    The tree may change only by wrappers going in, each told (`children_changed`), as locator
    drift's wrap pass changes it: no element removed or moved elsewhere meanwhile (the Python's
    answers would be stale, and a node freed could lend its address, the C's key, to a new
    one)."""

    def __init__(self) -> None:
        # (Each by compound, then by node: a compound's answers are looked up without a key
        # made of the two, thousands of times a page with an app's stylesheets.)
        self._matched: dict[Keys, dict[etree._Element, bool]] = {}
        self._known: dict[Keys, dict[etree._Element, bool]] = {}
        # Parent -> group -> its rules a child of the parent may match, each with the
        # children its sibling compound may (`rules_under`), while the parent's children stay.
        self._rules_under: dict[
            etree._Element | None,
            dict[_Group, list[tuple[StructuralRule, list[etree._Element] | None]]],
        ] = {}
        # Parent -> compound -> its children that may match it, as long.
        self._children_of: dict[etree._Element, dict[Keys, list[etree._Element]]] = {}
        # Index -> what the C keeps of the same answers under it (`structure_matters`).
        self._compiled_states: dict[_StructureIndex, object] = {}

    def structure_matters(self, index: _StructureIndex, element: etree._Element) -> bool:
        """Whether a rule of `index` could match `element` where it is: `index.matching(
        element, self, first=True)`, in C where it can be (`shifts.native`: asked of every
        wrap candidate and each child of its parent, each question a dozen Python calls with
        an app's stylesheets, a third of a first load)."""
        state = self.compiled_state(index)
        if state is not None:
            assert native.structure_matters is not None
            answer = native.structure_matters(state, element)
            if answer is not None:
                return answer
        return bool(index.matching(element, self, first=True))

    def compiled_state(self, index: _StructureIndex) -> object | None:
        """What the C keeps of the answers under `index` (made at the first ask); None where
        the index has no compiled form (no compiled shifts, or rules it does not read)."""
        state = self._compiled_states.get(index)
        if state is None and (compiled := index.compiled) is not None:
            assert native.structure_state is not None
            state = self._compiled_states[index] = native.structure_state(compiled)
        return state

    def matches(self, node: etree._Element, keys: Keys) -> bool:
        # (`_matches`, its C asked here, a call less, and before what is kept: it answers in
        # less time than two look-ups take, and most questions are asked once)
        if _compiled_matches is not None and (answer := _compiled_matches(node, keys)) is not None:
            return answer
        of_keys = self._matched.get(keys)
        if of_keys is None:
            of_keys = self._matched[keys] = {}
        answer = of_keys.get(node)
        if answer is None:
            answer = of_keys[node] = _matches_read(node, keys)
        return answer

    def at_or_above(self, node: etree._Element | None, keys: Keys) -> bool:
        known = self._known.get(keys)
        if known is None:
            known = self._known[keys] = {}
        unknown = []
        answer = False
        while node is not None:
            found = known.get(node)
            if found is not None:
                answer = found
                break
            unknown.append(node)
            if self.matches(node, keys):
                answer = True  # (for it and every node below it on the way up)
                break
            node = node.getparent()
        for each in unknown:
            known[each] = answer
        return answer

    def rules_under(
        self, parent: etree._Element | None, group: _Group
    ) -> list[tuple[StructuralRule, list[etree._Element] | None]]:
        """The rules of `group` whose parent compound `parent` may match and whose ancestor
        compound it or a node above it may (`P > E`, `A E`), in order, each with the children
        of `parent` that may match its sibling compound (`A + E`, `E ~ B`; None: it has none,
        or there is no parent): what the group's rules ask of a child of `parent` but
        whether it is one of those children. Once per parent, not once per child (a universal
        compound's rules are asked of every element: an app's `table[style*=...] > *`, and
        every child of a parent of hundreds was looked at for each of them); until a wrapper
        takes a child's place in it (`children_changed`)."""
        of_parent = self._rules_under.get(parent)
        if of_parent is None:
            of_parent = self._rules_under[parent] = {}
        rules = of_parent.get(group)
        if rules is None:
            by_parent = group.by_parent
            rules = of_parent[group] = [
                (
                    rule,
                    None
                    if rule.sibling is None or parent is None
                    else self._children_matching(parent, rule.sibling),
                )
                for index in group.parent_compounds(parent)
                if (parent_compound := by_parent[index][0]) is None
                or parent is None
                or self.matches(parent, parent_compound)
                for rule in by_parent[index][1]
                if rule.ancestor is None or self.at_or_above(parent, rule.ancestor)
            ]
        return rules

    def _children_matching(self, parent: etree._Element, keys: Keys) -> list[etree._Element]:
        of_parent = self._children_of.get(parent)
        if of_parent is None:
            of_parent = self._children_of[parent] = {}
        found = of_parent.get(keys)
        if found is None:
            found = of_parent[keys] = [node for node in parent if self.matches(node, keys)]
        return found

    def children_changed(self, parent: etree._Element) -> None:
        """A wrapper took a child's place in `parent`: its children are found again."""
        self._children_of.pop(parent, None)
        self._rules_under.pop(parent, None)
        for state in self._compiled_states.values():
            assert native.structure_children_changed is not None
            native.structure_children_changed(state, parent)


def _matches(element: etree._Element, keys: Keys) -> bool:
    """Whether `element` may match a compound with these keys (`_matches_read`), in C where it
    can be (`shifts.native`: asked thousands of times a page with an app's stylesheets, each
    Python answer reading the element's names through lxml's proxies)."""
    return native.either(_compiled_matches, _matches_read, element, keys)


_compiled_matches = native.matches


def _matches_read(element: etree._Element, keys: Keys) -> bool:
    """`_matches` in Python: its definition, which the C one follows. Pseudo-classes are
    ignored, so this over-approximates: safe for deciding what to leave alone."""
    tag, classes, element_id, attributes = keys
    element_tag = element.tag
    if not isinstance(element_tag, str):
        return False
    if tag is not None and element_tag.lower() != tag:
        return False
    if element_id is not None and element.get("id") != element_id:
        return False
    if classes and not classes.issubset((element.get("class") or "").split()):
        return False
    # (most compounds test no attribute: no generator for them; asked thousands of times a page)
    return not attributes or all(
        _attribute_matches(element.get(name), op, value) for name, op, value in attributes
    )


def _attribute_matches(actual: str | None, operator: str, wanted: str) -> bool:
    """CSS attribute tests (`[a]`, `[a=v]`, `[a~=v]`, `[a|=v]`, `[a^=v]`, `[a$=v]`, `[a*=v]`),
    case-insensitively: an over-approximation of `i`/`s` flags either way."""
    if actual is None:
        return False
    if not operator:
        return True
    # (only the operator's own test: a table of every one's was made at each call, each
    # element's `style` split and searched seven ways for an app's `[style*=...]` rules)
    actual, wanted = actual.lower(), wanted.lower()
    if operator == "=":
        return actual == wanted
    if operator == "~=":
        return wanted in actual.split()
    if operator == "|=":
        return actual == wanted or actual.startswith(wanted + "-")
    if operator == "^=":
        return actual.startswith(wanted)
    if operator == "$=":
        return actual.endswith(wanted)
    if operator == "*=":
        return wanted in actual
    return True  # (an operator no compound is read with: it may match)
