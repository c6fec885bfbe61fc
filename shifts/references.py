"""What a page's stylesheets and scripts depend on, so locator drift renames only what nothing
references and restructures only where no selector cares about structure.

A page's CSS selects elements by ids, classes, attributes and tags, and some of its selectors
depend on structure (`nav > a`, `li + li`, `:first-child`); its JavaScript looks elements up by
strings (`getElementById("root")`, `querySelector(".menu > li")`, `classList.contains("open")`,
`"btn-" + kind`). Renaming what either uses, or wrapping an element a structural selector
matches, breaks the app with no error. This module reads stylesheets and scripts into
`AssetRefs`: pure data, merged per page, from text; the proxy caches it per asset.

JavaScript is read conservatively: every identifier-like word anywhere in a script counts as a
reference (strings, code and comments alike), which over-approximates what the script can look
up, and words ending in `-` or `_` count as prefixes (`"is-" + state`). Selector strings in
scripts count like CSS selectors, structure included.
"""

from __future__ import annotations

import functools
import html
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urljoin, urlsplit

from lxml import etree

from shifts import jslex

# A compound selector's element tests: tag (None = any), classes, id, attribute names.
# The attribute tests are (name, operator, value), operator "" for presence.
Keys = tuple[str | None, frozenset[str], str | None, frozenset[tuple[str, str, str]]]


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
    # Identifiers scripts use unqualified or through named access (`main`, `window.main`):
    # the ids they may reach without a value naming them (jslex).
    free_names: frozenset[str] = frozenset()
    structure: frozenset[StructuralRule] = frozenset()
    # The combinators by which a script selects what follows an element it holds (`"+ li"`:
    # the next sibling, `"~ *"`: any later one; the right side of a selector built from pieces,
    # or jQuery's relative `.find("+ li")`).
    follows_held: frozenset[str] = frozenset()
    # False when some asset of the page could not be read: nothing may be assumed unreferenced.
    complete: bool = True

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """Every name an asset mentions, as whatever kind of identifier."""
        return self.ids | self.classes | self.attributes | self.values | self.words

    @functools.cached_property
    def _prefixes(self) -> tuple[str, ...]:
        return tuple(self.prefixes)

    def references(self, name: str) -> bool:
        """Whether any asset may refer to `name` (an id, class or attribute value)."""
        return name in self.names or name.startswith(self._prefixes)

    def reads_attribute(self, name: str) -> bool:
        """Whether a stylesheet selects by, or a script reads or queries, the attribute."""
        return name.lower() in self.attributes

    def scripts_use(self, name: str) -> bool:
        """Whether a script may use `name` (a word of it, or one of its prefixes)."""
        return name in self.words or name.startswith(self._prefixes)

    def reaches_id(self, element_id: str) -> bool:
        """Whether a script may reach the element with this id: by a value naming it, or by
        named access (`window.main`, a global `main`)."""
        return self.scripts_use(element_id) or element_id in self.free_names

    def structure_matters(self, element: etree._Element) -> bool:
        """Whether a structural selector could match `element`: then it must keep its parent
        and its position among its siblings."""
        return any(True for _ in self.structural_rules_of(element))

    def structural_rules_of(self, element: etree._Element) -> Iterator[StructuralRule]:
        """The structural rules that could match `element` where it is (`structure_matters`;
        what a diagnosis shows)."""
        index = self._structure_index
        if not index.by_key and not index.universal:
            return  # (most inline blocks: no structural selector at all)
        parent = element.getparent()
        for rule in index.candidates(element):
            if (
                (rule.parent is None or parent is None or _matches(parent, rule.parent))
                and (
                    rule.ancestor is None
                    or any(_matches(node, rule.ancestor) for node in element.iterancestors())
                )
                and (
                    rule.sibling is None
                    or parent is None
                    or any(node is not element and _matches(node, rule.sibling) for node in parent)
                )
            ):
                yield rule

    def looks_inside(self, element: etree._Element) -> bool:
        """Whether a `:has()` selector could match `element` (its subtree's shape matters)."""
        return any(_matches(element, rule.keys) for rule in self._structure_index.subtree)

    @functools.cached_property
    def _structure_index(self) -> _StructureIndex:
        return _StructureIndex(self.structure)


class _StructureIndex:
    """Structural rules by the most specific test of their compound, so an element is checked
    against the few rules that name its id, a class, its tag or one of its attributes."""

    def __init__(self, rules: Iterable[StructuralRule]) -> None:
        self.by_key: dict[tuple[str, str], list[StructuralRule]] = {}
        self.universal: list[StructuralRule] = []
        self.subtree: list[StructuralRule] = []
        for rule in rules:
            if rule.kind == "subtree":
                self.subtree.append(rule)
                continue
            tag, classes, element_id, attributes = rule.keys
            if element_id is not None:
                self.by_key.setdefault(("id", element_id), []).append(rule)
            elif classes:
                self.by_key.setdefault(("class", min(classes)), []).append(rule)
            elif attributes:
                self.by_key.setdefault(("attr", min(attributes)[0]), []).append(rule)
            elif tag is not None:
                self.by_key.setdefault(("tag", tag), []).append(rule)
            else:
                self.universal.append(rule)

    def candidates(self, element: etree._Element) -> Iterable[StructuralRule]:
        if not isinstance(element.tag, str):
            return
        keys = [("tag", element.tag.lower())]
        keys += [("attr", str(name).lower()) for name in element.attrib]
        keys += [("class", name) for name in (element.get("class") or "").split()]
        if element.get("id"):
            keys.append(("id", element.get("id") or ""))
        for key in keys:
            for rule in self.by_key.get(key, ()):
                if _matches(element, rule.keys):
                    yield rule
        yield from self.universal  # `*:first-child`, `P > *`: decided by position or parent


ANY_ELEMENT: Keys = (None, frozenset(), None, frozenset())  # `*`, or a compound naming nothing
EMPTY = AssetRefs()
UNKNOWN = AssetRefs(complete=False)


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

    def references(self, name: str) -> bool:
        return self.assets.references(name) or self.inline.references(name)

    def reads_attribute(self, name: str) -> bool:
        return self.assets.reads_attribute(name) or self.inline.reads_attribute(name)

    def scripts_use(self, name: str) -> bool:
        return self.assets.scripts_use(name) or self.inline.scripts_use(name)

    def reaches_id(self, element_id: str) -> bool:
        return self.assets.reaches_id(element_id) or self.inline.reaches_id(element_id)

    def structure_matters(self, element: etree._Element) -> bool:
        return self.assets.structure_matters(element) or self.inline.structure_matters(element)

    def structural_rules_of(self, element: etree._Element) -> Iterator[StructuralRule]:
        yield from self.assets.structural_rules_of(element)
        yield from self.inline.structural_rules_of(element)

    def looks_inside(self, element: etree._Element) -> bool:
        return self.assets.looks_inside(element) or self.inline.looks_inside(element)

    @property
    def follows_held(self) -> frozenset[str]:
        return self.assets.follows_held | self.inline.follows_held


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
        free_names=frozenset().union(*(r.free_names for r in items)),
        structure=frozenset().union(*(r.structure for r in items)),
        follows_held=frozenset().union(*(r.follows_held for r in items)),
        complete=all(r.complete for r in items),
    )


# The version of the readers below: what an asset references is a function of its bytes and of
# this number, so stored references (proxy.knowledge) are keyed by both. Bump it whenever a
# reader's output changes.
REFS_VERSION = 5


def refs_to_json(refs: AssetRefs) -> dict[str, object]:
    """A canonical JSON form (sorted lists): the same references give the same text."""
    return {
        "ids": sorted(refs.ids),
        "classes": sorted(refs.classes),
        "attributes": sorted(refs.attributes),
        "values": sorted(refs.values),
        "tags": sorted(refs.tags),
        "words": sorted(refs.words),
        "prefixes": sorted(refs.prefixes),
        "free_names": sorted(refs.free_names),
        "structure": sorted(
            (_rule_to_json(rule) for rule in refs.structure), key=lambda r: repr(r)
        ),
        "follows_held": sorted(refs.follows_held),
        "complete": refs.complete,
    }


def refs_from_json(data: dict[str, object]) -> AssetRefs:
    def names(key: str) -> frozenset[str]:
        value = data.get(key, [])
        assert isinstance(value, list)
        return frozenset(str(name) for name in value)

    structure = data.get("structure", [])
    assert isinstance(structure, list)
    return AssetRefs(
        ids=names("ids"),
        classes=names("classes"),
        attributes=names("attributes"),
        values=names("values"),
        tags=names("tags"),
        words=names("words"),
        prefixes=names("prefixes"),
        free_names=names("free_names"),
        structure=frozenset(_rule_from_json(rule) for rule in structure),
        follows_held=names("follows_held"),
        complete=bool(data.get("complete", True)),
    )


def _keys_to_json(keys: Keys | None) -> list[object] | None:
    if keys is None:
        return None
    tag, classes, element_id, attributes = keys
    return [tag, sorted(classes), element_id, sorted(list(test) for test in attributes)]


def _keys_from_json(data: object) -> Keys | None:
    if data is None:
        return None
    assert isinstance(data, list) and len(data) == 4
    tag, classes, element_id, attributes = data
    return (
        tag,
        frozenset(classes),
        element_id,
        frozenset((str(name), str(op), str(value)) for name, op, value in attributes),
    )


def _rule_to_json(rule: StructuralRule) -> list[object]:
    return [
        rule.kind,
        _keys_to_json(rule.keys),
        _keys_to_json(rule.parent),
        _keys_to_json(rule.ancestor),
        _keys_to_json(rule.sibling),
    ]


def _rule_from_json(data: object) -> StructuralRule:
    assert isinstance(data, list) and len(data) == 5
    kind, keys, parent, ancestor, sibling = data
    found = _keys_from_json(keys)
    assert found is not None and kind in ("child", "sibling", "subtree")
    return StructuralRule(
        kind, found, _keys_from_json(parent), _keys_from_json(ancestor), _keys_from_json(sibling)
    )


# ---- CSS ----------------------------------------------------------------------------------

_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")
# An identifier, CSS escapes included (`.md\:flex`, `.w-1\/2`: utility-class frameworks).
_IDENT = r"-?(?:[_a-zA-Z\u00a0-\uffff]|\\.)(?:[-\w\u00a0-\uffff]|\\.)*"
_ID = re.compile(r"#(" + _IDENT + ")")
_CLASS = re.compile(r"\.(" + _IDENT + ")")
_ATTRIBUTE = re.compile(
    r"\[\s*(?:[\w*]*\|)?(" + _IDENT + r")\s*(?:[~|^$*]?=\s*(\"[^\"]*\"|'[^']*'|[^\]\s]+))?"
)
_ATTRIBUTE_TEST = re.compile(
    r"\[\s*(?:[\w*]*\|)?(" + _IDENT + r")\s*(?:([~|^$*]?=)\s*(\"[^\"]*\"|'[^']*'|[^\]\s]+))?"
)
_TAG = re.compile(r"(?:^|(?<=[\s>+~(,]))(" + _IDENT + r"|\*)")
_POSITIONAL = re.compile(
    r":(?:nth-child|nth-last-child|nth-of-type|nth-last-of-type|first-child|last-child|"
    r"only-child|first-of-type|last-of-type|only-of-type)\b"
)
# Pseudo-classes whose argument is a selector list about the element itself.
_FUNCTIONAL = re.compile(r":(?:not|is|where|matches|-webkit-any|-moz-any)\(")


def css_refs(text: str) -> AssetRefs:
    """The identifiers and structure a stylesheet's selectors depend on."""
    selectors = list(_selectors(_COMMENT.sub(" ", text)))
    return _selector_refs(selectors)


def _selectors(css: str) -> Iterable[str]:
    """Every selector of every style rule (nested rules too); at-rule preludes are skipped."""
    start, position, length = 0, 0, len(css)
    while position < length:
        char = css[position]
        if char in "\"'":
            string = _STRING.match(css, position)
            position = string.end() if string else position + 1
            continue
        if char == "{":
            prelude = css[start:position].strip()
            if prelude and not prelude.startswith("@"):
                yield from _split_top_level(prelude)
            start = position + 1
        elif char in "};":
            start = position + 1
        position += 1


def _split_top_level(prelude: str) -> Iterable[str]:
    """The comma-separated parts of a selector list (not a comma inside brackets or
    parentheses, nor an escaped one: `.a\\,b` is one class)."""
    depth, start, escaped = 0, 0, False
    for index, char in enumerate(prelude):
        if escaped or char == "\\":
            escaped = not escaped
            continue
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            yield prelude[start:index].strip()
            start = index + 1
    yield prelude[start:].strip()


def _selector_refs(selectors: Iterable[str]) -> AssetRefs:
    ids: set[str] = set()
    classes: set[str] = set()
    attributes: set[str] = set()
    values: set[str] = set()
    tags: set[str] = set()
    structure: set[StructuralRule] = set()
    for selector in selectors:
        if not selector:
            continue
        bare = _STRING.sub('""', selector)
        ids.update(_unescape(m) for m in _ID.findall(bare))
        classes.update(_unescape(m) for m in _CLASS.findall(bare))
        for name, value in _ATTRIBUTE.findall(selector):
            attributes.add(name.lower())
            if value:
                values.add(value.strip("\"'"))
        tags.update(m.lower() for m in _TAG.findall(_without_brackets(bare)) if m != "*")
        structure |= _structure(selector)  # with its strings: `[class*="x"]` needs the value
    return AssetRefs(
        ids=frozenset(ids),
        classes=frozenset(classes),
        attributes=frozenset(attributes),
        values=frozenset(values),
        tags=frozenset(tags),
        structure=frozenset(structure),
    )


def _unescape(name: str) -> str:
    return re.sub(r"\\([0-9a-fA-F]{1,6}\s?|.)", lambda m: _unescape_one(m.group(1)), name)


def _unescape_one(escaped: str) -> str:
    hex_digits = escaped.strip()
    if re.fullmatch(r"[0-9a-fA-F]{1,6}", hex_digits):
        return chr(int(hex_digits, 16))
    return escaped


def _without_brackets(selector: str) -> str:
    return re.sub(r"\[[^\]]*\]|\([^)]*\)", " ", selector)


def _structure(selector: str) -> set[StructuralRule]:
    """The structural rules of one complex selector (and of complex selectors inside
    :is()/:not()/:where()/:has())."""
    variants, complex_alternatives = _alternatives(selector)
    if variants != [selector]:
        return set().union(*map(_structure, [*variants, *complex_alternatives]))
    rules: set[StructuralRule] = set()
    compounds, combinators = _compounds(selector)
    # Each compound's context: the parent (`P > E`) or ancestor (`A E`) it needs. Siblings
    # share their parent, so `.row > * + *` concerns children of `.row` only, on both sides.
    contexts: list[tuple[Keys | None, Keys | None]] = []
    for index, compound in enumerate(compounds):
        for name, argument in _pseudo_arguments(compound):
            for part in _split_top_level(argument):
                if name == "has":
                    # Relative to the element itself: `li:has(> a)` is `li > a`, whose `a`
                    # depends on being a child of such an `li`.
                    part = f"{_without_pseudo(compound)}{'' if part[:1] in '>+~' else ' '}{part}"
                if _compounds(part)[1]:  # only arguments with combinators
                    rules |= _structure(part)
        keys = _keys(compound)
        combinator = combinators[index - 1] if index > 0 else ""
        previous = _keys(compounds[index - 1]) if index > 0 else None
        if combinator in ("+", "~"):
            parent, ancestor = contexts[index - 1]
        else:
            # So `blockquote > :first-child` concerns blockquotes only.
            parent = previous if combinator == ">" else None
            ancestor = previous if combinator == " " else None
            if previous == ANY_ELEMENT:
                # `.a > * > E`, `.a * E`: the universal compound names nothing, but E still
                # sits inside what it sits in (an `.a`), kept as an ancestor (which can only
                # widen what the rule matches), not `* > E`, which every element matches.
                before_parent, before_ancestor = contexts[index - 1]
                ancestor = before_parent or before_ancestor
        contexts.append((parent, ancestor))
        if _POSITIONAL.search(compound):  # `:not(:last-child)` is about this element too
            rules.add(StructuralRule("sibling", keys, parent, ancestor))
        if ":has(" in compound and _has_sees_wrappers(compound, keys):
            rules.add(StructuralRule("subtree", keys, parent, ancestor))
        if combinator == ">":
            rules.add(StructuralRule("child", keys, previous, ancestor))
        elif combinator in ("+", "~") and previous is not None:
            # Each side depends on the other being its sibling (`.a + *`: only what follows an
            # `.a`), so an element with no such sibling is free to move.
            rules.add(StructuralRule("sibling", keys, parent, ancestor, sibling=previous))
            rules.add(StructuralRule("sibling", previous, parent, ancestor, sibling=keys))
    return rules


_ALTERNATIVES = re.compile(r":(?:is|where|matches|-webkit-any|-moz-any)\(")
_TAG_START = re.compile(r"\*|" + _IDENT)
MAX_VARIANTS = 32


def _alternatives(selector: str) -> tuple[list[str], list[str]]:
    """The selector with each `:is()`/`:where()` of its compounds read as one of its
    alternatives (`:is(input, .a textarea):focus > b` is `input:focus > b` or
    `textarea:focus > b`), and the alternatives whose own structure counts (`.a textarea`).
    A compound whose only test is such a list names nothing read as a whole (`* > b`: every
    element); read by its alternatives, it is about those alone. An alternative stands for
    its last compound (what the element itself must match): the rest only narrows it. Past
    `MAX_VARIANTS`, the selector is read as it is (which can only widen what it matches)."""
    return _expanded(selector) or ([selector], [])


def _expanded(selector: str) -> tuple[list[str], list[str]] | None:
    """`_alternatives`, or None past `MAX_VARIANTS`: said as soon as it is known, so that
    a selector of many lists (`:is(.a, .b) :is(.a, .b) ...`) costs no more than the cap."""
    compounds, combinators = _compounds(selector)
    for index, compound in enumerate(compounds):
        found = _top_level_alternatives(compound)
        if found is None:
            continue
        start, end, argument = found
        outer = compound[:start] + compound[end:]
        variants, complex_alternatives = [], []
        for alternative in _split_top_level(argument):
            parts = _compounds(alternative)[0]
            if len(parts) > 1:
                complex_alternatives.append(alternative)
            merged = _merged_compound(outer, parts[-1] if parts else "*")
            rebuilt = compounds[:index] + [merged] + compounds[index + 1 :]
            variants.append(_joined_compounds(rebuilt, combinators))
        expanded: list[str] = []
        for variant in variants:
            more = _expanded(variant)
            if more is None:
                return None
            expanded += more[0]
            complex_alternatives += more[1]
            if len(expanded) > MAX_VARIANTS:
                return None
        return expanded, complex_alternatives
    return [selector], []


def _top_level_alternatives(compound: str) -> tuple[int, int, str] | None:
    """Where the compound's first `:is(...)`-like list outside parentheses is (start, end),
    and its argument."""
    masked = _masked_strings(compound)
    depth = 0
    for position, char in enumerate(masked):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and char == ":" and (found := _ALTERNATIVES.match(masked, position)):
            end = _closing_parenthesis(masked, found.end())
            return None if end is None else (position, end + 1, compound[found.end() : end])
    return None


def _merged_compound(outer: str, alternative: str) -> str:
    """One compound that tests what both do (`a.x:hover` and `.y` -> `a.y.x:hover`): the
    type selector first (the outer one's, if it has one), pseudo-classes last."""
    outer_tag, outer_rest = _split_tag(outer)
    tag, rest = _split_tag(alternative)
    if outer_tag not in ("", "*"):
        tag = outer_tag
    return (tag + rest + outer_rest) or "*"


def _split_tag(compound: str) -> tuple[str, str]:
    found = _TAG_START.match(compound)
    return (found.group(), compound[found.end() :]) if found else ("", compound)


def _joined_compounds(compounds: list[str], combinators: list[str]) -> str:
    text = compounds[0]
    for combinator, compound in zip(combinators, compounds[1:], strict=True):
        text += " " if combinator == " " else f" {combinator} "
        text += compound
    return text


def _has_sees_wrappers(compound: str, keys: Keys) -> bool:
    """Whether a wrapper put inside what the compound's `:has()` matches could change the
    match. A wrapper keeps every descendant a descendant and is a custom element no selector
    names (`locators.wrapper_tag`), so only a relative selector with a child or sibling
    combinator (`:has(> img)`, `:has(+ p)`) or a compound that names nothing (`:has(*)`,
    `:has(:not(a))`) can see it; `:has(a[href])` cannot (its compounds' own positions are
    rules of theirs). A compound naming a custom element might name the wrapper itself."""
    if "-" in (keys[0] or ""):
        return True
    for name, argument in _pseudo_arguments(compound):
        for part in _split_top_level(argument) if name == "has" else ():
            if part[:1] in ("+", "~"):
                # About the siblings after it (`:has(~ .error)`), not what is inside: the
                # sibling rules of `E ~ .error` (`_structure`) keep both in place.
                continue
            compounds, combinators = _compounds(part)
            if any(c != " " for c in combinators) or ANY_ELEMENT in map(_keys, compounds):
                return True
    return False


def _compounds(selector: str) -> tuple[list[str], list[str]]:
    """Compound selectors and the combinators between them (outside brackets/parentheses).
    A selector that starts with a combinator (a nested rule's `> .b`, relative to a parent
    rule this reader does not track) is taken as relative to any element (`* > .b`)."""
    selector = selector.strip()
    if selector[:1] in (">", "+", "~"):
        selector = f"* {selector}"
    compounds, combinators = [], []
    depth, current, pending = 0, "", ""
    # Structure is read with strings masked (`[title="a > b"]` has no combinator), text kept.
    for char, masked in zip(selector, _masked_strings(selector), strict=True):
        if masked in "([":
            depth += 1
        elif masked in ")]":
            depth -= 1
        if depth == 0 and (masked in ">+~" or masked.isspace()):
            pending = (pending or " ") if masked.isspace() else masked
            continue
        if pending and current:
            compounds.append(current)
            combinators.append(pending)
            current = ""
        pending = ""
        current += char
    if current:
        compounds.append(current)
    return compounds, combinators


def _masked_strings(text: str) -> str:
    """`text` with every quoted string's characters replaced by NULs (the same length)."""
    return _STRING.sub(lambda m: "\0" * len(m.group()), text)


def _pseudo_arguments(compound: str) -> list[tuple[str, str]]:
    """The selector-list arguments of a compound's functional pseudo-classes (`:not(...)`,
    `:is(...)`, `:where(...)`, `:has(...)`), each with its name, parentheses balanced."""
    masked = _masked_strings(compound)
    found = []
    for match in re.finditer(r":(not|is|where|has|matches|-webkit-any|-moz-any)\(", masked):
        end = _closing_parenthesis(masked, match.end())
        if end is not None:
            found.append((match.group(1), compound[match.end() : end].strip()))
    return found


def _closing_parenthesis(masked: str, start: int) -> int | None:
    """Where the parenthesis open just before `start` closes (strings masked), if it does."""
    depth = 1
    for end in range(start, len(masked)):
        depth += {"(": 1, ")": -1}.get(masked[end], 0)
        if depth == 0:
            return end
    return None


def _without_pseudo(compound: str) -> str:
    """A compound without its pseudo-classes and their arguments (`li.x:has(a)` -> `li.x`)."""
    text = _top_level(compound, keep_brackets=True)
    masked = re.sub(r"\[[^\]]*\]", lambda m: "\0" * len(m.group()), _masked_strings(text))
    colon = masked.find(":")
    return (text if colon < 0 else text[:colon]) or "*"


def _top_level(compound: str, keep_brackets: bool) -> str:
    """The compound's text outside parentheses; attribute tests kept as they are or blanked
    to `[]` (so a value such as `[data-k="x.y"]` is never read as a class or an id)."""
    masked = _masked_strings(compound)
    kept, depth = [], 0
    for char, mask in zip(compound, masked, strict=True):
        if mask == "(":
            depth += 1
        elif mask == ")":
            depth -= 1
        elif depth == 0:
            kept.append((char, mask))
    text = "".join(char for char, _ in kept)
    if keep_brackets:
        return text
    return re.sub(r"\[[^\]]*\]", "[]", "".join(mask for _, mask in kept))


def _keys(compound: str) -> Keys:
    outside = _top_level(compound, keep_brackets=False)
    tag = re.match(r"(" + _IDENT + r")", outside)
    id_match = _ID.search(outside)
    return (
        tag.group(1).lower() if tag else None,
        frozenset(_unescape(m) for m in _CLASS.findall(outside)),
        _unescape(id_match.group(1)) if id_match else None,
        frozenset(
            (name.lower(), operator, value.strip("\"'"))
            for name, operator, value in _ATTRIBUTE_TEST.findall(
                _top_level(compound, keep_brackets=True)
            )
        ),
    )


def _matches(element: etree._Element, keys: Keys) -> bool:
    """Whether `element` may match a compound with these keys (pseudo-classes ignored, so this
    over-approximates: safe for deciding what to leave alone)."""
    tag, classes, element_id, attributes = keys
    if not isinstance(element.tag, str):
        return False
    if tag is not None and element.tag.lower() != tag:
        return False
    if element_id is not None and element.get("id") != element_id:
        return False
    if classes and not classes <= set((element.get("class") or "").split()):
        return False
    return all(_attribute_matches(element.get(name), op, value) for name, op, value in attributes)


def _attribute_matches(actual: str | None, operator: str, wanted: str) -> bool:
    """CSS attribute tests (`[a]`, `[a=v]`, `[a~=v]`, `[a|=v]`, `[a^=v]`, `[a$=v]`, `[a*=v]`),
    case-insensitively: an over-approximation of `i`/`s` flags either way."""
    if actual is None:
        return False
    actual, wanted = actual.lower(), wanted.lower()
    return {
        "": True,
        "=": actual == wanted,
        "~=": wanted in actual.split(),
        "|=": actual == wanted or actual.startswith(wanted + "-"),
        "^=": actual.startswith(wanted),
        "$=": actual.endswith(wanted),
        "*=": wanted in actual,
    }.get(operator, True)


# ---- JavaScript ---------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_$][\w$-]*")
_DATASET = re.compile(r"\.dataset\.([A-Za-z_$][\w$]*)")
# String literals that look like selectors with structure: read like CSS.
_JS_STRING = re.compile(r""""((?:[^"\\\n]|\\.){1,300})"|'((?:[^'\\\n]|\\.){1,300})'""")
_SELECTORISH = re.compile(r"[>+~]|:(?:nth|first|last|only|has)")


_SIMPLE_PART = re.compile(r"\*|[A-Za-z][\w-]*|[.#][\w-]+|\[\]|::?[\w-]+(?:\(\))?")


def _completed(literal: str) -> str:
    if len(literal) > 300:  # (no selector; and not copied by `rstrip`)
        return literal
    stripped = literal.rstrip()
    if stripped[-1:] in (">", "+", "~") and stripped[:-1].strip():
        return f"{stripped} *"
    return literal


_TWO_COMBINATORS = re.compile(r"[>+~]\s*[>+~]")


def _is_selector_list(literal: str) -> bool:
    """Whether a script's string is a CSS selector list (`.menu > li`), not a regex or text:
    every compound, between combinators, is made of simple selectors only."""
    bare = re.sub(r"\[[^\[\]]*\]", "[]", literal)
    while re.search(r"\([^()]+\)", bare):  # innermost arguments first
        bare = re.sub(r"\([^()]+\)", "()", bare)
    if _TWO_COMBINATORS.search(bare):
        return False  # no selector has two combinators in a row: `~~~` is wikitext
    for selector in _split_top_level(bare):
        if selector.rstrip()[-1:] in (">", "+", "~"):
            # No selector ends with a combinator (a piece read in step is completed first:
            # `js_refs`). Such a "string" (`"+a+"`) is the code between two strings, read as
            # one by the fallback reader; as a selector it would hold every element beside an
            # `<a>`.
            return False
        compounds, _ = _compounds(selector.strip().lstrip(">+~ "))
        if not compounds:
            return False
        for compound in compounds:
            position = 0
            while position < len(compound):
                part = _SIMPLE_PART.match(compound, position)
                if part is None or part.end() == position:
                    return False
                position = part.end()
    return True


_RELATIVE_TO_HELD = re.compile(r"^\s*(?::scope\s*)?([>+~])\s*")


def _relative_to_held(selector: str) -> tuple[str, str | None]:
    """A script's selector that starts with a combinator and then names nothing is relative
    to an element the script holds: `> *`, `:scope > :not(li)` (jQuery UI's menu and sortable
    items, SortableJS's draggables) ask for its children, which the drift never moves
    (locators: a script holding the parent may walk its children); `+*` (`"a#" + id + "+*"`)
    for what follows it, which stays where it is (`AssetRefs.follows_held`). Read as `* > *`,
    it held every element of a page. Returns the selector left to read (the rest, as a
    selector of its own, which only widens what it matches) and the combinator. One that
    names something (`> li`, `+ .menu`) stays `* > li`: what holds it may have been found by
    its tag or in ways no name shows."""
    found = _RELATIVE_TO_HELD.match(selector)
    if found is None:
        return selector, None
    rest = selector[found.end() :]
    compounds, _ = _compounds(rest)
    if not compounds or _keys(compounds[0]) != ANY_ELEMENT:
        return selector, None
    return rest, found.group(1)


def _is_structural_selector(literal: str) -> bool:
    return len(literal) <= 300 and bool(_SELECTORISH.search(literal)) and _is_selector_list(literal)


_UNKNOWN_IN_VALUE = re.compile(r"\[\s*([A-Za-z_][\w-]*)\s*[~|^$*]?=[^\]]*\0[^\]]*\]")
# An unknown piece that starts a name (`"#" + id`) or ends a prefix (`"btn-" + kind`) is the
# rest of that name. After a whole name (`".menu" + sub`) it may start with a combinator
# (`" li"`): not widened, so the chain is read by its pieces.
_UNKNOWN_IN_NAME = re.compile(r"([#.])(?:[\w-]*[-_])?\0(?:[\w-]*[-_]\0)*[\w-]*")


def _joined_selector(operands: jslex.Concatenation) -> str | None:
    """A concatenation read as one selector, an operand whose value is not known widened to
    what it may be: in an id, a class or an attribute's value, any (`"li." + kind + " > a"`
    is `li[class] > a`). None where it may be more (a tag, a combinator, a whole selector):
    then its pieces are read one by one. One that starts with such an operand
    (`sel + " > li"`) is relative to what that selector found: read by its pieces, as a
    relative selector."""
    if operands[0] is jslex.UNKNOWN:
        return None
    text = "".join("\0" if operand is jslex.UNKNOWN else operand for operand in operands)
    text = _UNKNOWN_IN_VALUE.sub(r"[\1]", text)
    text = _UNKNOWN_IN_NAME.sub(lambda m: "[id]" if m.group(1) == "#" else "[class]", text)
    return None if "\0" in text else text


# Attributes a script reads or queries (not those it only writes): in selector syntax
# (`[data-testid="x"]`, also built from pieces), through getAttribute/hasAttribute/..., or as
# `dataset.camelCase`. A test hook only rendered by a template is no dependency of the app.
_ATTRIBUTE_QUERY = re.compile(r"\[\s*([A-Za-z_][\w-]*)\s*(?=[\]~|^$*=])")
_ATTRIBUTE_CALL = re.compile(
    r"(?:get|has|remove|toggle)Attribute(?:NS|Node)?\(\s*(?:null\s*,\s*)?[\"'`]([\w:-]+)"
)


def js_refs(text: str, values: Iterable[str] = ()) -> AssetRefs:
    """Every word a script could use to find an element: the words of the values it holds
    (its literals and object keys, `shifts.jslex`; every word of its text if it cannot be read
    in step), and the attributes it reads or queries. `values` are strings a script reads as
    they are (data-* attribute values)."""
    free_names: set[str] = set()
    concatenations: list[jslex.Concatenation] = []
    try:
        held = [*jslex.literals(text, free_names, concatenations), *values]
    except jslex.Unreadable:
        held = [text, *values]  # every word, and what looks like a string
        held += [literal for pair in _JS_STRING.findall(text) for literal in pair if literal]
        concatenations = []
    words = set(_WORD.findall("\n".join(held)))
    # `element.dataset.fooBar` reads the attribute data-foo-bar.
    dataset = {
        "data-" + re.sub(r"([A-Z])", lambda m: "-" + m.group(1).lower(), name)
        for name in _DATASET.findall(text)
    }
    words |= dataset
    prefixes = {word for word in words if word.endswith(("-", "_")) and len(word) > 1}
    # A selector built from pieces is read whole where it can be (`"a#" + id + "+*"` is about
    # what follows an `<a>` with an id); its pieces are then no selectors of their own.
    pieces = Counter(held)
    joined = []
    for operands in concatenations:
        selector = _joined_selector(operands)
        if selector is not None and _is_structural_selector(selector):
            joined.append(selector)
            pieces.subtract(operand for operand in operands if operand is not None)
    # A piece of a selector built from pieces (`"h2 + " + tag`), not read whole: what follows
    # the combinator is not known, so any element (`h2 + *`).
    alone = [_completed(literal) for literal in pieces.elements()]
    structural_selectors = [*joined, *filter(_is_structural_selector, alone)]
    parts = [
        _relative_to_held(part)
        for literal in structural_selectors
        for part in _split_top_level(literal)
    ]
    selector_refs = _selector_refs(selector for selector, _ in parts)
    code_and_values = "\n".join([text, *values])  # `data-target="[data-testid=x]"` too
    attributes = {name.lower() for name in _ATTRIBUTE_QUERY.findall(code_and_values)}
    attributes |= {name.lower() for name in _ATTRIBUTE_CALL.findall(text)}
    return AssetRefs(
        words=frozenset(words),
        prefixes=frozenset(prefixes),
        free_names=frozenset(free_names),
        attributes=frozenset(attributes | dataset),
        structure=selector_refs.structure,
        follows_held=frozenset(held for _, held in parts if held in ("+", "~")),
    )


# ---- what a page loads --------------------------------------------------------------------

_ASSET_TAG = re.compile(rb"<(script|link)\b([^>]*)>", re.IGNORECASE)
_ATTR = re.compile(rb"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_BASE = re.compile(rb"""<base\b[^>]*\bhref\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
STYLESHEET_RELS = {"stylesheet"}
SCRIPT_RELS = {"modulepreload", "preload", "prefetch"}


@dataclass(frozen=True)
class PageAsset:
    kind: Literal["css", "js"]
    url: str


def page_assets(raw: bytes, page_url: str) -> list[PageAsset]:
    """The same-origin stylesheets and scripts the page's markup loads, in order."""
    base = _BASE.search(raw[:65536])
    base_url = (
        urljoin(page_url, html.unescape(base.group(1).decode("latin-1"))) if base else page_url
    )
    origin = _origin(page_url)
    found: list[PageAsset] = []
    for tag in _ASSET_TAG.finditer(raw):
        attributes = {
            name.lower().decode("latin-1"): html.unescape((a or b or c).decode("latin-1"))
            for name, a, b, c in _ATTR.findall(tag.group(2))
        }
        name = tag.group(1).lower()
        if name == b"script" and attributes.get("src"):
            asset = PageAsset("js", urljoin(base_url, attributes["src"]))
        elif name == b"link" and attributes.get("href"):
            rels = set(attributes.get("rel", "").lower().split())
            kind = attributes.get("as", "").lower()
            if rels & STYLESHEET_RELS or (rels & SCRIPT_RELS and kind == "style"):
                asset = PageAsset("css", urljoin(base_url, attributes["href"]))
            elif "modulepreload" in rels or (rels & SCRIPT_RELS and kind == "script"):
                asset = PageAsset("js", urljoin(base_url, attributes["href"]))
            else:
                continue
        else:
            continue
        if _origin(asset.url) == origin and asset not in found:
            found.append(asset)
    return found


_CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*["']?([^"')\s;]+)""", re.IGNORECASE)


def css_imports(text: str, css_url: str) -> list[PageAsset]:
    """Same-origin stylesheets a stylesheet @imports."""
    origin = _origin(css_url)
    found = [PageAsset("css", urljoin(css_url, url)) for url in _CSS_IMPORT.findall(text)]
    return [asset for asset in found if _origin(asset.url) == origin]


# A script's literal URLs of more code and styles: `import("./chunk-3f2a.js")`, `import x from
# "/app/vendor.js"`, Vite's preload lists (`"assets/About-1b2c.js"`), a stylesheet it injects.
_SCRIPT_ASSET = re.compile(
    r"""["'`]((?:\.{0,2}/|https?://)?[\w@~.$%+-]+(?:/[\w@~.$%+-]+)*\.(m?js|css))"""
    r"""(\?[^"'`\s]{0,200})?["'`]"""
)
MAX_SCRIPT_ASSETS = 256


def script_imports(text: str, script_url: str) -> list[PageAsset]:
    """Same-origin scripts and stylesheets a script names by literal URL (code-split chunks it
    may load later), in order. A relative name is resolved against the script's URL and, when
    it is not explicitly relative (`assets/x.js`, as bundlers list them against the base), the
    site's root too: a guess that does not exist is a 404 the caller ignores."""
    origin = _origin(script_url)
    found: list[PageAsset] = []
    for match in _SCRIPT_ASSET.finditer(text):
        name, extension, query = match.group(1), match.group(2), match.group(3) or ""
        kind: Literal["css", "js"] = "css" if extension == "css" else "js"
        urls = [urljoin(script_url, name + query)]
        if not name.startswith(("./", "../", "/", "http://", "https://")):
            urls.append(urljoin(origin + "/", name + query))
        for url in urls:
            asset = PageAsset(kind, url.split("#")[0])
            if _origin(asset.url) == origin and asset not in found:
                found.append(asset)
        if len(found) >= MAX_SCRIPT_ASSETS:
            break
    return found


_INLINE_STYLES = etree.XPath("//style/text()")
_INLINE_SCRIPTS = etree.XPath(
    "//script[not(@type) or contains(@type, 'javascript') or @type='module']/text()"
)
# Event handlers are scripts; data-* values are strings scripts read, and often hold
# selectors (`data-target="#menu"`, Stimulus' `data-w-sync-target-value="#id_slug"`).
_HANDLERS = etree.XPath("//@*[starts-with(name(), 'on')]")
_DATA_VALUES = etree.XPath("//@*[starts-with(name(), 'data-')]")


def _texts(query: etree.XPath, root: etree._Element) -> list[str]:
    found = query(root)
    return [str(item) for item in found] if isinstance(found, list) else []


def inline_refs(root: etree._Element) -> AssetRefs:
    """What the page's own <style> and <script> blocks, event handlers and data-* attribute
    values use."""
    css = _texts(_INLINE_STYLES, root)
    # Each block and handler on its own line: a statement ends where the next begins.
    js = _texts(_INLINE_SCRIPTS, root) + _texts(_HANDLERS, root)
    # Style attributes hold declarations, not selectors: nothing to index.
    return _inline_refs_of("\n".join(css), ";\n".join(js), tuple(_texts(_DATA_VALUES, root)))


@functools.lru_cache(maxsize=64)
def _inline_refs_of(css: str, js: str, data_values: tuple[str, ...]) -> AssetRefs:
    # The pages of a site repeat their inline blocks (and a page reloaded, all of them): read
    # once, their indexes built once.
    return merge_refs([css_refs(css), js_refs(js, data_values)])


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
