"""Compiled CSS selectors and the protected (task-critical) parts of a page.

Site profiles list many simple selectors (`h1, title, .project-title, .title, ...`). cssselect
turns each class into `contains(concat(' ', normalize-space(@class), ' '), ' x ')`, string work
on every element for every class: on a 180 KB GitLab page one such list took 10 ms. A list of
simple selectors (tag, `.class`, `#id`, `[attr]`, `[attr=value]`, combined without
combinators) is compiled instead into one pass where a cheap `contains(@class, 'x')` guards
the exact class test, so the exact test runs on the few candidates only. Anything else goes
to cssselect.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

from cssselect import SelectorError
from lxml import etree
from lxml.cssselect import CSSSelector, LxmlTranslator

from shifts import native
from shifts.document import HtmlDocument

Query = Callable[[etree._Element], list[etree._Element]]
_TRANSLATOR = LxmlTranslator()  # what CSSSelector uses
_SIMPLE = re.compile(
    r"""^(?P<tag>[a-zA-Z][a-zA-Z0-9-]*|\*)?
    (?P<parts>(?:\.[A-Za-z_][A-Za-z0-9_-]*|\#[A-Za-z_][A-Za-z0-9_-]*
    |\[[A-Za-z_][A-Za-z0-9_-]*(?:=(?:"[^"'\]\\]*"|'[^"'\]\\]*'|-?[A-Za-z_][A-Za-z0-9_-]*))?\])*)$""",
    re.X,
)
_PART = re.compile(
    r"""\.(?P<cls>[A-Za-z0-9_-]+)|\#(?P<id>[A-Za-z0-9_-]+)
    |\[(?P<attr>[A-Za-z0-9_-]+)(?:=["']?(?P<value>[^"'\]]*)["']?)?\]""",
    re.X,
)


@dataclass(frozen=True)
class _Simple:
    """One compound selector without combinators: tag, classes, id, attributes."""

    tag: str | None
    classes: tuple[str, ...]
    attributes: tuple[tuple[str, str | None], ...]  # id is ("id", value)

    def xpath(self) -> str:
        tests = [f"self::{self.tag}"] if self.tag else []
        tests += [
            f"contains(@class, '{name}') and "
            f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"
            for name in self.classes
        ]
        tests += [f"@{a}" if v is None else f"@{a}='{v}'" for a, v in self.attributes]
        return " and ".join(tests) or "true()"

    def matches(self, element: etree._Element, classes: set[str]) -> bool:
        """`xpath()`'s test in Python, of an element whose class attribute's names (split at
        XPath's whitespace, as `normalize-space` splits) are `classes`."""
        return (
            (self.tag is None or element.tag == self.tag)
            and classes.issuperset(self.classes)
            and all(
                element.get(a) is not None if v is None else element.get(a) == v
                for a, v in self.attributes
            )
        )


def _parse_simple(selector: str) -> _Simple | None:
    """The selector as a simple one; None for anything else: combinators, pseudo-classes,
    escapes, an unquoted value that is no identifier, an empty selector (cssselect's own
    error then, not a test that matches everything), a character beyond ASCII (a no-break
    space is no CSS whitespace, which `str.strip` would take it for: `li\xa0` names no `li`)."""
    match = _SIMPLE.match(selector.strip())
    if match is None or not selector.strip() or not selector.isascii():
        return None
    tag = match.group("tag")
    classes, attributes = [], []
    for part in _PART.finditer(match.group("parts")):
        if part.group("cls"):
            classes.append(part.group("cls"))
        elif part.group("id"):
            attributes.append(("id", part.group("id")))
        else:
            attributes.append((part.group("attr"), part.group("value")))
    return _Simple(None if tag in (None, "*") else tag, tuple(classes), tuple(attributes))


def _any_of(simples: list[_Simple]) -> str:
    """An XPath test of whether an element matches any of the simple selectors. Those naming a
    class are tested under one `@class`: an element without one (most of a page) is then
    tested once for them all, not once per class (a site's protected list names a dozen)."""
    plain = [f"({simple.xpath()})" for simple in simples if not simple.classes]
    classed = [f"({simple.xpath()})" for simple in simples if simple.classes]
    if classed:
        plain.append(f"(@class and ({' or '.join(classed)}))")
    return " or ".join(plain)


_WITH_CLASS = etree.XPath("descendant-or-self::*[@class]")
_CSS_WHITESPACE = re.compile(r"[ \t\n\r\f]+")


@dataclass(frozen=True)
class _Chain:
    """Simple compounds joined by descendant combinators alone (`.cart .item .name`), whose
    last names a class or a tag: found from the elements that match the last (those with the
    class, in C), each asked of its ancestors, nearest first. libxml2's XPath for one (cssselect's
    translation) tests every element's class attribute with strings made anew, then walks
    every descendant of each match: a third of a ms of a 120 KB page's first load."""

    compounds: tuple[_Simple, ...]  # (left to right, at least two)

    def matched(self, root: etree._Element) -> Iterator[etree._Element]:
        """The elements at or below `root` the chain selects from it (`descendant-or-self`:
        the first compound's match may be `root`), in no particular order."""
        last = self.compounds[-1]
        found = (
            _with_a_class_of(root, frozenset(last.classes[:1]))
            if last.classes
            else root.iter(str(last.tag))
        )
        # (A node's answer for the compounds up to one, kept: the elements a page's chain
        # ends in share their ancestors, a product grid's hundred names one page's body.)
        known: dict[tuple[etree._Element, int], bool] = {}
        for element in found:
            if element is root or not last.matches(element, _classes_of(element)):
                continue
            parent = element.getparent()
            if parent is not None and self._held(parent, len(self.compounds) - 2, root, known):
                yield element

    def _held(
        self,
        node: etree._Element,
        left: int,
        root: etree._Element,
        known: dict[tuple[etree._Element, int], bool],
    ) -> bool:
        """Whether the compounds up to `left` match `node` or its ancestors at or below
        `root`, in order: the nearest that matches each taken (where any do, those do)."""
        asked: list[tuple[etree._Element, int]] = []
        answer = False
        current: etree._Element | None = node
        while current is not None:
            if (current, left) in known:
                answer = known[current, left]
                break
            asked.append((current, left))
            if self.compounds[left].matches(current, _classes_of(current)):
                if left == 0:
                    answer = True
                    break
                left -= 1
            current = None if current is root else current.getparent()
        for key in asked:  # (each of them answers as the last one asked)
            known[key] = answer
        return answer


def _parse_chain(selector: str) -> _Chain | None:
    """The selector as a `_Chain`; None for anything else (a character beyond ASCII, as
    `_parse_simple`: the whole selector's ends are stripped here too)."""
    if not selector.isascii():
        return None
    compounds = [_parse_simple(part) for part in _CSS_WHITESPACE.split(selector.strip())]
    if len(compounds) < 2 or any(compound is None for compound in compounds):
        return None
    last = compounds[-1]
    assert last is not None
    if not last.classes and last.tag is None:
        return None
    return _Chain(tuple(compound for compound in compounds if compound is not None))


def _classes_of(element: etree._Element) -> set[str]:
    value = element.get("class")
    return set() if value is None else set(_class_names(value))


class _Unordered:
    """The elements a list of simple selectors and others match, as a set: those naming a
    class found in Python among the elements with a class attribute, by its names split once
    (libxml2 makes the attribute's string again for each class test, and for each class of a
    site's protected list: on a 250 KB WordPress page, 6 ms of a first load's 50-90), and the
    rest in one XPath pass."""

    def __init__(
        self, simples: list[_Simple], others: list[str], chains: tuple[_Chain, ...] = ()
    ) -> None:
        self.chains = chains
        # A tag alone (`h1`, `title`: every site's list) is found by lxml's own walk: an XPath
        # test of every node took 20 times as long (1.1 ms of a 200 KB page's first load).
        self.tags = tuple(sorted({str(s.tag) for s in simples if _is_a_tag_alone(s)}))
        plain = [s for s in simples if not s.classes and not _is_a_tag_alone(s)]
        paths = [f"descendant-or-self::*[{_any_of(plain)}]"] if plain else []
        self.query = etree.XPath(" | ".join([*paths, *others])) if paths or others else None
        # (each filed under one of its classes: an element holds them all, so any will do)
        self.by_class: dict[str, list[_Simple]] = {}
        for simple in simples:
            if simple.classes:
                self.by_class.setdefault(simple.classes[0], []).append(simple)

    def __call__(self, root: etree._Element) -> set[etree._Element]:
        found = set(elements(self.query, root)) if self.query is not None else set()
        if self.tags:  # (`root` and those below it, as `descendant-or-self` reads them)
            found.update(root.iter(*self.tags))
        for chain in self.chains:
            found.update(chain.matched(root))
        if not self.by_class:
            return found
        for element in _with_a_class_of(root, frozenset(self.by_class)):
            if element in found:
                continue
            classes = _classes_of(element)
            if any(
                simple.matches(element, classes)
                for name in classes & self.by_class.keys()
                for simple in self.by_class[name]
            ):
                found.add(element)
        return found


def _is_a_tag_alone(simple: _Simple) -> bool:
    return simple.tag is not None and not simple.classes and not simple.attributes


def _with_a_class_of(root: etree._Element, names: frozenset[str]) -> list[etree._Element]:
    """`root` and the elements below it whose class attribute holds one of `names`, in
    document order. In C where it can be (`shifts.native`): most of a page's elements have a
    class, and few hold one of a site's protected ones."""
    return native.either(native.with_a_class_of, _with_a_class_of_read, root, names)


def _with_a_class_of_read(root: etree._Element, names: frozenset[str]) -> list[etree._Element]:
    """`_with_a_class_of` in Python: its definition, which the C one follows."""
    return [
        element
        for element in elements(_WITH_CLASS, root)
        if not names.isdisjoint(_class_names(str(element.get("class"))))
    ]


def _class_names(value: str) -> list[str]:
    """A class attribute's names as XPath's `normalize-space` splits them (at spaces, tabs and
    line ends only: `str.split()` splits at a no-break space too); some may be empty."""
    return value.replace("\t", " ").replace("\n", " ").replace("\r", " ").split(" ")


class _SimpleList:
    """A selector list of simple selectors, as one XPath pass."""

    def __init__(self, simples: list[_Simple]) -> None:
        self.simples = simples
        self.tests = _any_of(simples)
        self.query = etree.XPath(f"descendant-or-self::*[{self.tests}]")
        self.unordered = _Unordered(simples, [])

    def __call__(self, root: etree._Element) -> list[etree._Element]:
        return cast(list[etree._Element], self.query(root))


class _MixedList:
    """A selector list of simple selectors and a few others (`#the-list .column-title`): the
    simple ones as one pass, united in XPath (document order) with cssselect's translation
    of the others, so one selector with a combinator does not send the whole list to
    cssselect's per-class string tests."""

    def __init__(self, simples: list[_Simple], others: list[tuple[str, str]]) -> None:
        """`others`: each other selector with cssselect's translation of it."""
        tests = _any_of(simples)
        paths = [path for _, path in others]
        self.query = etree.XPath(" | ".join([f"descendant-or-self::*[{tests}]", *paths]))
        # (unordered, the chains among the others found from their last compound's matches)
        chains = [(path, _parse_chain(part)) for part, path in others]
        self.unordered = _Unordered(
            simples,
            [path for path, chain in chains if chain is None],
            tuple(chain for _, chain in chains if chain is not None),
        )

    def __call__(self, root: etree._Element) -> list[etree._Element]:
        return cast(list[etree._Element], self.query(root))


@lru_cache(maxsize=256)
def compiled(selector: str) -> Query:
    parts = selector.split(",")
    simples = [_parse_simple(part) for part in parts]
    if simples and all(simple is not None for simple in simples):
        return _SimpleList([simple for simple in simples if simple is not None])
    if any(simple is not None for simple in simples):
        try:  # (a comma inside `:is(a, b)` or a string splits no selector: then cssselect)
            others = [
                (part, _TRANSLATOR.css_to_xpath(part))
                for part, simple in zip(parts, simples, strict=True)
                if simple is None
            ]
        except SelectorError:
            return cast(Query, CSSSelector(selector))
        return _MixedList([simple for simple in simples if simple is not None], others)
    return cast(Query, CSSSelector(selector))


@lru_cache(maxsize=256)
def _xpath(path: str) -> etree.XPath:
    return etree.XPath(path)


def descendants(root: etree._Element, path: str) -> list[etree._Element]:
    """`root.iterfind(".//" + path)` in C: ElementPath tests every element in Python."""
    return cast(list[etree._Element], _xpath("descendant::" + path)(root))


def with_any_attribute(root: etree._Element, names: Iterable[str]) -> list[etree._Element]:
    """The descendants of `root` that have any of these attributes, in document order: each
    element's attribute names against a set, which is faster than libxml2's XPath for an
    `@a or @b or ...` predicate (it walks every element's attributes once per name: a dozen
    names cost a page more than parsing it) or for one string holding the names."""
    return with_any_attributes(root, names)[0]


def with_any_attributes(
    root: etree._Element, *name_sets: Iterable[str]
) -> tuple[list[etree._Element], ...]:
    """`with_any_attribute` for each set of names, in one walk of the elements (reading an
    element's attribute names is most of what a walk costs). In C where it can be
    (`shifts.native`)."""
    wanted = [frozenset(names) for names in name_sets]  # (read once: they may be iterators)
    return native.either(native.with_any_attributes, _with_any_attributes_read, root, *wanted)


def _with_any_attributes_read(
    root: etree._Element, *name_sets: Iterable[str]
) -> tuple[list[etree._Element], ...]:
    """`with_any_attributes` in Python: its definition, which the C one follows."""
    wanted = [frozenset(names) for names in name_sets]
    found: tuple[list[etree._Element], ...] = tuple([] for _ in wanted)
    for element in root.iterdescendants():
        keys = element.keys()
        for names, elements in zip(wanted, found, strict=True):
            if not names.isdisjoint(keys):
                elements.append(element)
    return found


@lru_cache(maxsize=256)
def matcher(selector: str) -> Callable[[etree._Element], bool]:
    """Whether an element matches a simple selector (`span`, `li.item`, `[data-x]`); any
    other selector matches every element (a question asked to keep an element in place)."""
    simple = _parse_simple(selector)
    if simple is None:
        return lambda element: True
    if simple.tag is not None:  # (a page's tags are lower case in its tree: `SPAN` is a span)
        simple = _Simple(simple.tag.lower(), simple.classes, simple.attributes)
    test = etree.XPath(f"boolean(self::*[{simple.xpath()}])")
    return lambda element: bool(test(element))


def select(root: etree._Element, selector: str) -> list[etree._Element]:
    """Elements of `root` matching a CSS selector, in document order."""
    return compiled(selector)(root)


def matched(root: etree._Element, selector: str) -> set[etree._Element]:
    """`select`, in no order."""
    query = compiled(selector)
    if isinstance(query, _SimpleList | _MixedList):
        return query.unordered(root)
    return set(query(root))


def select_containing(
    root: etree._Element, selector: str, texts: Sequence[str]
) -> list[etree._Element]:
    """`select`, keeping only elements whose text content contains one of `texts` (in C)."""
    query = compiled(selector)
    if not isinstance(query, _SimpleList):
        text_of = etree.XPath("string()")
        return [e for e in query(root) if any(t in str(text_of(e)) for t in texts)]
    return cast(
        list[etree._Element],
        _containing(query.tests, len(texts))(root, **{f"t{i}": t for i, t in enumerate(texts)}),
    )


@lru_cache(maxsize=64)
def _containing(tests: str, count: int) -> etree.XPath:
    # XPath variables: the texts may hold quotes, which string literals could not.
    contains = " or ".join(f"contains(., $t{i})" for i in range(count)) or "false()"
    return etree.XPath(f"descendant-or-self::*[({tests}) and ({contains})]")


def elements(query: etree.XPath, root: etree._Element) -> list[etree._Element]:
    """Run a compiled XPath that selects elements (lxml's types cannot say so)."""
    return cast(list[etree._Element], query(root))


def protected_elements(root: etree._Element, selectors: Iterable[str]) -> set[etree._Element]:
    """Every element matched by a protected selector, and all of its descendants."""
    protected: set[etree._Element] = set()
    selector = ", ".join(selectors)
    if selector:
        for match in matched(root, selector):
            protected.update(match.iter())
    return protected


def protected_in(doc: HtmlDocument, selectors: tuple[str, ...]) -> set[etree._Element]:
    """protected_elements of the document's tree, computed once per page for all shifts.

    Shifts add nodes (wrappers) but never remove or replace protected ones, so the set stays
    valid for the rest of the pipeline.
    """
    key = "protected:" + "|".join(selectors)
    if key not in doc.cache:
        doc.cache[key] = protected_elements(doc.tree, selectors)
    return cast(set[etree._Element], doc.cache[key])
