"""Reading CSS selectors: the ids, classes, attributes and tags they name, and the structure they
depend on (`nav > a`, `li + li`, `:first-child`, `:has()`), expanded through `:is()`/`:where()`."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from shifts.kept import KeptByText
from shifts.references.model import ANY_ELEMENT, AssetRefs, Keys, StructuralRule, merge_refs

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
# ... and those whose argument a structural rule may sit in (`:has()` too), by name.
_SELECTOR_ARGUMENT = re.compile(r":(not|is|where|has|matches|-webkit-any|-moz-any)\(")


# What the fast paths look for: the characters a stylesheet's reading stops at (strings and
# rule boundaries); what makes a selector list, or a selector, more than flat text.
_SELECTOR_PUNCTUATION = re.compile(r"[\"'{};]")
_GROUPING = re.compile(r"[()\[\]\\]")
_NESTING = re.compile(r"[\"'()\[\]]")
_COMBINATOR_RUN = re.compile(r"([\s>+~]+)")
_BRACKETS = re.compile(r"\[[^\]]*\]")
_BRACKETS_OR_PARENTHESES = re.compile(r"\[[^\]]*\]|\([^)]*\)")
_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6}\s?|.)")
_TAG_NAME = re.compile(r"(" + _IDENT + r")")


def css_refs(text: str) -> AssetRefs:
    """The identifiers and structure a stylesheet's selectors depend on."""
    selectors = list(_selectors(_COMMENT.sub(" ", text)))
    return selector_refs(selectors)


JOINER = "\n"  # (how a page's inline styles are joined)
# What each inline style references, and whether a style joined after it reads as alone.
_READINGS: KeptByText[tuple[AssetRefs, bool]] = KeptByText(max_chars=4 * 1024 * 1024)


def joined_css_refs(texts: Sequence[str]) -> AssetRefs:
    """`css_refs(JOINER.join(texts))`, each text read once for every page that holds it (a
    site's pages repeat their inline styles, a few with rules of each page's own), when each
    but the last leaves nothing open at its end that the next would be read in: a comment, or
    text after its last brace or semicolon (what it leaves is the next selector's start).
    Read whole otherwise."""
    if not texts:
        return css_refs("")
    readings = [_read_alone(text) for text in texts]
    if not all(joins for _, joins in readings[:-1]):
        return css_refs(JOINER.join(texts))
    return merge_refs([refs for refs, _ in readings])


def _read_alone(text: str) -> tuple[AssetRefs, bool]:
    """What the style references, and whether one joined after it reads as alone (kept)."""
    return _READINGS.get_or_make(text, _reading_of)


def _reading_of(text: str) -> tuple[AssetRefs, bool]:
    left: list[str] = []
    refs = selector_refs(list(_selectors(_COMMENT.sub(" ", text), left)))
    opened = text.rfind("/*")
    closed = opened == -1 or text.find("*/", opened + 2) != -1
    return refs, closed and not left[0].strip()


def _selectors(css: str, left: list[str] | None = None) -> Iterable[str]:
    """Every selector of every style rule (nested rules too); at-rule preludes are skipped.
    `left`, if given, receives what is left after the last brace or semicolon."""
    start, position = 0, 0
    # From one character that matters to the next, found in C (most of a stylesheet is the
    # declarations' text, which only a brace or a semicolon ends).
    while (found := _SELECTOR_PUNCTUATION.search(css, position)) is not None:
        position = found.start()
        char = css[position]
        if char in "\"'":
            string = _STRING.match(css, position)
            position = string.end() if string else position + 1
            continue
        if char == "{":
            prelude = css[start:position].strip()
            if prelude and not prelude.startswith("@"):
                yield from split_top_level(prelude)
            start = position + 1
        elif char in "};":
            start = position + 1
        position += 1
    if left is not None:
        left.append(css[start:])


def split_top_level(prelude: str) -> Iterable[str]:
    """The comma-separated parts of a selector list (not a comma inside brackets or
    parentheses, nor an escaped one: `.a\\,b` is one class)."""
    if not _GROUPING.search(prelude):  # most selector lists: every comma separates
        yield from (part.strip() for part in prelude.split(","))
        return
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


def selector_refs(selectors: Iterable[str]) -> AssetRefs:
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
    if "\\" not in name:  # (asked of every id and class of every selector)
        return name
    return _ESCAPE.sub(lambda m: _unescape_one(m.group(1)), name)


def _unescape_one(escaped: str) -> str:
    hex_digits = escaped.strip()
    if re.fullmatch(r"[0-9a-fA-F]{1,6}", hex_digits):
        return chr(int(hex_digits, 16))
    return escaped


def _without_brackets(selector: str) -> str:
    return _BRACKETS_OR_PARENTHESES.sub(" ", selector)


def _structure(selector: str) -> set[StructuralRule]:
    """The structural rules of one complex selector (and of complex selectors inside
    :is()/:not()/:where()/:has())."""
    variants, complex_alternatives = _alternatives(selector)
    if variants != [selector]:
        return set().union(*map(_structure, [*variants, *complex_alternatives]))
    rules: set[StructuralRule] = set()
    compounds, combinators = split_compounds(selector)
    if any(_has_matches_nothing(compound) for compound in compounds):
        return rules  # (it throws wherever it is asked: it selects nothing)
    # Each compound's context: the parent (`P > E`) or ancestor (`A E`) it needs. Siblings
    # share their parent, so `.row > * + *` concerns children of `.row` only, on both sides.
    contexts: list[tuple[Keys | None, Keys | None]] = []
    for index, compound in enumerate(compounds):
        for name, argument in _pseudo_arguments(compound):
            for part in split_top_level(argument):
                if name == "has":
                    # Relative to the element itself: `li:has(> a)` is `li > a`, whose `a`
                    # depends on being a child of such an `li`.
                    part = f"{_without_pseudo(compound)}{'' if part[:1] in '>+~' else ' '}{part}"
                if split_compounds(part)[1]:  # only arguments with combinators
                    rules |= _structure(part)
        keys = compound_keys(compound)
        combinator = combinators[index - 1] if index > 0 else ""
        previous = compound_keys(compounds[index - 1]) if index > 0 else None
        if combinator in ("+", "~"):
            parent, ancestor = contexts[index - 1]
        else:
            # So `blockquote > :first-child` concerns blockquotes only.
            parent = previous if combinator == ">" else None
            if combinator == ">" or previous == ANY_ELEMENT:
                # What the previous compound sits in is E's ancestor too: `.panel div > *` is
                # about children of divs in a `.panel` (read as `div > *`, every child of every
                # div: WordPress's admin stylesheet); `.a > * > E`, `.a * E`: the universal
                # compound names nothing, but E still sits inside an `.a`, kept as an ancestor
                # (which can only widen what the rule matches), not `* > E`, which every
                # element matches.
                before_parent, before_ancestor = contexts[index - 1]
                # A universal parent names nothing: past a run of them (`.table > :not(caption)
                # > * > *`, Bootstrap's), E still sits inside what came before the run.
                if before_parent is not None and before_parent != ANY_ELEMENT:
                    ancestor = before_parent
                else:
                    ancestor = before_ancestor or before_parent
            else:
                ancestor = previous if combinator == " " else None
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
    compounds, combinators = split_compounds(selector)
    for index, compound in enumerate(compounds):
        found = _top_level_alternatives(compound)
        if found is None:
            continue
        start, end, argument = found
        outer = compound[:start] + compound[end:]
        variants, complex_alternatives = [], []
        for alternative in split_top_level(argument):
            parts = split_compounds(alternative)[0]
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


# Pseudo-classes an engine defines: CSS's, jQuery's own and jQuery UI's (vendor-prefixed ones
# are taken as defined).
KNOWN_PSEUDO_CLASSES = frozenset(
    {
        # CSS (Selectors 4, HTML, CSS Scoping, Fullscreen, Popover, media), and the legacy
        # one-colon pseudo-elements.
        "active", "any-link", "autofill", "blank", "buffering", "checked", "current",
        "default", "defined", "dir", "disabled", "empty", "enabled", "first", "first-child",
        "first-of-type", "focus", "focus-visible", "focus-within", "fullscreen", "future",
        "has", "host", "host-context", "hover", "in-range", "indeterminate", "invalid", "is",
        "lang", "last-child", "last-of-type", "left", "link", "local-link", "matches", "modal",
        "muted", "not", "nth-child", "nth-col", "nth-last-child", "nth-last-col",
        "nth-last-of-type", "nth-of-type", "only-child", "only-of-type", "open", "closed",
        "optional", "out-of-range", "past", "paused", "picture-in-picture",
        "placeholder-shown", "playing", "popover-open", "read-only", "read-write", "required",
        "right", "root", "scope", "seeking", "stalled", "state", "target", "target-within",
        "user-invalid", "user-valid", "valid", "visited", "volume-locked", "where",
        "before", "after", "first-line", "first-letter", "selection", "placeholder",
        "backdrop", "marker",
        # jQuery's selector engine.
        "animated", "button", "checkbox", "contains", "eq", "even", "file", "gt", "header",
        "hidden", "image", "input", "last", "lt", "nth", "odd", "parent", "password", "radio",
        "reset", "selected", "submit", "text", "visible",
        # jQuery UI, and jquery.validate's.
        "data", "focusable", "tabbable", "filled", "unchecked",
        # Chromium's newer ones.
        "active-view-transition", "active-view-transition-type", "has-slotted",
        "target-current", "interest-source", "interest-target", "xr-overlay",
    }
)  # fmt: skip
_PSEUDO_CLASS = re.compile(r"::?(-?[A-Za-z][\w-]*)")


_INNERMOST_ARGUMENT = re.compile(r"(:(?:is|where|matches|-webkit-any|-moz-any))?\(([^()]*)\)")


def _without_forgiving_lists(text: str) -> str:
    """`text` without the arguments of `:is()` and `:where()`, which read a selector they do
    not know as one that matches nothing, not as an error: `:has(:is(:x, a))` is valid."""
    while True:
        reduced = _INNERMOST_ARGUMENT.sub(
            lambda m: "" if m.group(1) else "{" + m.group(2) + "}", text
        )
        if reduced == text:
            return text
        text = reduced


def _has_matches_nothing(compound: str) -> bool:
    """Whether the compound's `:has()` names a pseudo-class no engine defines: `:has()` reads
    its argument unforgivingly (Selectors 4), so the selector throws in the browser, and in
    jQuery's engine, which knows no such pseudo-class either. Libraries run such selectors to
    see the browser throw (jQuery 3.7's `querySelector(":has(*,:jqfake)")`): read as a rule,
    `:has(*, ...)` would keep every element of every page of the site from being wrapped."""
    for name, argument in _pseudo_arguments(compound):
        if name != "has":
            continue
        # (Strings, attribute tests and escapes blanked: `[href^="http:x"]` and the class
        # `.md\:flex` name no pseudo-class.)
        blanked = _BRACKETS.sub("[]", _ESCAPE.sub("_", _masked_strings(argument)))
        for pseudo in _PSEUDO_CLASS.findall(_without_forgiving_lists(blanked)):
            if not pseudo.startswith("-") and pseudo.lower() not in KNOWN_PSEUDO_CLASSES:
                return True
    return False


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
        for part in split_top_level(argument) if name == "has" else ():
            if part[:1] in ("+", "~"):
                # About the siblings after it (`:has(~ .error)`), not what is inside: the
                # sibling rules of `E ~ .error` (`_structure`) keep both in place.
                continue
            compounds, combinators = split_compounds(part)
            if any(c != " " for c in combinators) or ANY_ELEMENT in map(compound_keys, compounds):
                return True
    return False


def split_compounds(selector: str) -> tuple[list[str], list[str]]:
    """Compound selectors and the combinators between them (outside brackets/parentheses).
    A selector that starts with a combinator (a nested rule's `> .b`, relative to a parent
    rule this reader does not track) is taken as relative to any element (`* > .b`)."""
    selector = selector.strip()
    if selector[:1] in (">", "+", "~"):
        selector = f"* {selector}"
    if not _NESTING.search(selector):  # most selectors: no string, bracket or parenthesis
        return _split_flat(selector)
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


def _split_flat(selector: str) -> tuple[list[str], list[str]]:
    """`split_compounds` of a selector with nothing to mask and no depth, by one C split:
    a run of spaces and combinator characters between two compounds is the last combinator
    in it, or a space (the descendant combinator) if it holds none."""
    parts = _COMBINATOR_RUN.split(selector)
    compounds, runs = parts[0::2], parts[1::2]
    if runs and not compounds[-1]:  # a run at the end
        compounds.pop()
        runs.pop()
    if runs and not compounds[0]:  # a run at the start
        compounds.pop(0)
        runs.pop(0)
    if compounds == [""]:
        return [], []
    return compounds, [(run.strip() or " ")[-1] for run in runs]


def _masked_strings(text: str) -> str:
    """`text` with every quoted string's characters replaced by NULs (the same length)."""
    return _STRING.sub(lambda m: "\0" * len(m.group()), text)


def _pseudo_arguments(compound: str) -> list[tuple[str, str]]:
    """The selector-list arguments of a compound's functional pseudo-classes (`:not(...)`,
    `:is(...)`, `:where(...)`, `:has(...)`), each with its name, parentheses balanced."""
    masked = _masked_strings(compound)
    found = []
    for match in _SELECTOR_ARGUMENT.finditer(masked):
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
    masked = _BRACKETS.sub(lambda m: "\0" * len(m.group()), _masked_strings(text))
    colon = masked.find(":")
    return (text if colon < 0 else text[:colon]) or "*"


def _top_level(compound: str, keep_brackets: bool) -> str:
    """The compound's text outside parentheses; attribute tests kept as they are or blanked
    to `[]` (so a value such as `[data-k="x.y"]` is never read as a class or an id)."""
    if "(" not in compound and ")" not in compound:  # most compounds: all of it is outside
        return compound if keep_brackets else _BRACKETS.sub("[]", _masked_strings(compound))
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
    return _BRACKETS.sub("[]", "".join(mask for _, mask in kept))


# Stylesheets repeat their compounds (`.wp-core-ui`, `.button`) thousands of times, and each
# compound of a selector is read as itself and as the next one's context.
@functools.lru_cache(maxsize=8192)
def compound_keys(compound: str) -> Keys:
    outside = _top_level(compound, keep_brackets=False)
    tag = _TAG_NAME.match(outside)
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
