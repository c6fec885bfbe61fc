"""Reading scripts: every identifier-like word (strings, code and comments alike), prefixes
(`"btn-" + kind`), and selector strings, read whole when a script builds one from pieces."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from shifts import jslex
from shifts.references.css import compound_keys, selector_refs, split_compounds, split_top_level
from shifts.references.model import ANY_ELEMENT, AssetRefs

# ---- JavaScript ---------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_$][\w$-]*")


_DATASET = re.compile(r"\.dataset\.([A-Za-z_$][\w$]*)")


# String literals that look like selectors with structure: read like CSS.
_JS_STRING = re.compile(r""""((?:[^"\\\n]|\\.){1,300})"|'((?:[^'\\\n]|\\.){1,300})'""")


_SELECTORISH = re.compile(r"[>+~]|:(?:nth|first|last|only|has)")


_SIMPLE_PART = re.compile(r"\*|[A-Za-z][\w-]*|[.#][\w-]+|\[\]|::?[\w-]+(?:\(\))?")


def _completed(literal: str) -> str:
    """A piece ending with a combinator as a selector of its own (`"ul >"`: `ul > *`)."""
    stripped = literal.rstrip()
    if stripped[-1:] in (">", "+", "~") and stripped[:-1].strip():
        return f"{stripped} *"
    return literal


_TWO_COMBINATORS = re.compile(r"[>+~]\s*[>+~]")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
# `[name]`, `[name=value]`, `[name~="value" i]`: an attribute name first, as no regex class is.
_ATTRIBUTE_TEST = re.compile(
    r"\[\s*(?:(?:[\w-]*|\*)\|)?-?[A-Za-z_][\w-]*\s*"
    r"(?:[~|^$*]?=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\]\"']+)\s*(?:[iIsS]\s*)?)?\]"
)


def _is_selector_list(literal: str) -> bool:
    """Whether a script's string is a CSS selector list (`.menu > li`), not a regex or text:
    every compound, between combinators, is made of simple selectors only."""
    brackets = _BRACKETS.findall(literal)
    if not all(map(_ATTRIBUTE_TEST.fullmatch, brackets)):
        return False  # a regex's class (`[^>]*>`: TinyMCE's), no attribute test
    bare = _BRACKETS.sub("[]", literal)
    while re.search(r"\([^()]+\)", bare):  # innermost arguments first
        bare = re.sub(r"\([^()]+\)", "()", bare)
    if _TWO_COMBINATORS.search(bare):
        return False  # no selector has two combinators in a row: `~~~` is wikitext
    for selector in split_top_level(bare):
        if selector.rstrip()[-1:] in (">", "+", "~"):
            # No selector ends with a combinator (a piece read in step is completed first:
            # `js_refs`). Such a "string" (`"+a+"`) is the code between two strings, read as
            # one by the fallback reader; as a selector it would hold every element beside an
            # `<a>`.
            return False
        compounds, _ = split_compounds(selector.strip().lstrip(">+~ "))
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
    compounds, combinators = split_compounds(rest)
    if not compounds or compound_keys(compounds[0]) != ANY_ELEMENT:
        return selector, None
    held = found.group(1)
    # (A compound's keys leave its pseudo-classes out: `:has(> a)` names nothing, yet is about
    # what is inside the siblings, which no script holding their parent keeps in place.)
    names_nothing = all(
        compound_keys(c) == ANY_ELEMENT and ":has(" not in c.lower() for c in compounds
    )
    if names_nothing and set(combinators) <= {"+", "~"}:
        # Siblings of what it selects, naming nothing: `> * + *` (WordPress's block editor) is
        # children of the held element still, `+ * + *` what follows it further on. Read as
        # `* + *`, it held every element beside another.
        return "", "~" if held == "+" and combinators else held
    return rest, held


# jQuery's relative selector applied to what a selector literal found (`$("#selflink")
# .find("> a")`: phpMyAdmin's): `.find` of a string is jQuery's (an array's takes a function).
_FOUND_THEN_RELATIVE = re.compile(
    r"""[\w$]\(\s*(["'])([^"'\\\n]{1,300})\1\s*\)\s*\.\s*find\(\s*"""
    r"""(["'])(\s*[>+~][^"'\\\n]{0,300})\3\s*\)"""
)


# What every such call holds: a `find(` whose string starts with a combinator. Looked for first:
# the whole pattern starts at every call in a script (2 ms on a WordPress theme's 88 KB).
_RELATIVE_FIND = re.compile(r"""find\(\s*["']\s*[>+~]""")


def _found_then_relative(text: str) -> list[tuple[str, str]]:
    """Each relative selector a script applies to what a selector literal found, read whole
    (`#selflink > a`), and the relative literal itself. Alone, `"> a"` is about every parent
    (`* > a`: the script's element may have been found in ways no name shows): phpMyAdmin's
    `$("#selflink").find("> a")` held every link that is a child."""
    found: list[tuple[str, str]] = []
    if not _RELATIVE_FIND.search(text):
        return found
    for match in _FOUND_THEN_RELATIVE.finditer(text):
        receiver, relative = match.group(2), match.group(4)
        if _is_selector_list(receiver):
            wholes = (f"{part.strip()} {relative.strip()}" for part in split_top_level(receiver))
            found.append((", ".join(wholes), relative))
    return found


# A suffix: what a literal appended to a value not known until run time starts with, from a
# `-` or `_` (`"-group .inline-related"`: `-group`).
_SUFFIX = re.compile(r"[-_][\w-]*[\w]")
# ... and where a script cannot be read in step: a literal after a `+`.
_APPENDED = re.compile(r"""\+\s*["'`]([-_][\w-]*[\w])""")


def _suffixes(concatenations: list[jslex.Concatenation]) -> set[str]:
    """What scripts append to values they hold at run time: each literal that follows an
    operand not known until then (`m + "_form"`, `"#" + prefix + "-empty"`)."""
    found = set()
    for operands in concatenations:
        for before, operand in itertools.pairwise(operands):
            if before is jslex.UNKNOWN and isinstance(operand, str):
                suffix = _SUFFIX.match(operand)
                if suffix:
                    found.add(suffix.group(0))
    return found


def _is_structural_selector(literal: str) -> bool:
    return len(literal) <= 300 and bool(_SELECTORISH.search(literal)) and _is_selector_list(literal)


def _structural_alone(literal: str) -> str | None:
    """A literal read as a selector of its own (`_completed`), if it is a structural one."""
    if len(literal) > 300:  # (no selector, completed or not: not kept below)
        return None
    # (Nor one with no combinator nor positional pseudo-class: completing adds none. Most of a
    # page's values are such, each its own, `data-id="item-123"`: not asked of the memo, where
    # thousands of them would push out the site's repeated literals.)
    if not _SELECTORISH.search(literal):
        return None
    return _short_structural_alone(literal)


def _structural_pieces(pieces: list[str]) -> list[str]:
    """The pieces read as selectors of their own that are structural (`_structural_alone`), in
    their order. Only a piece with a combinator or a positional pseudo-class can be one, and
    one search of them all finds those: a page's thousands of values (`data-id="item-123"`),
    each searched apart, cost a first load more than the rest of its scripts' references."""
    joined = "\n".join(pieces)  # (no match runs across a line's end: `:` then `nth`, say)
    starts = list(itertools.accumulate((len(piece) + 1 for piece in pieces), initial=0))
    found, last = [], -1
    for match in _SELECTORISH.finditer(joined):
        index = bisect.bisect_right(starts, match.start()) - 1
        if index != last:  # (a piece with more than one match is read once)
            last = index
            if (selector := _structural_alone(pieces[index])) is not None:
                found.append(selector)
    return found


# A site's scripts repeat their short literals on every page, and a page's scripts repeat
# theirs (`"click"`, `"div"`): each is asked once. (Kept to literals of a selector's length,
# `_is_structural_selector`: at most 300 characters each.)
@functools.lru_cache(maxsize=8192)
def _short_structural_alone(literal: str) -> str | None:
    completed = _completed(literal)
    return completed if _is_structural_selector(completed) else None


_UNKNOWN_IN_VALUE = re.compile(r"\[\s*([A-Za-z_][\w-]*)\s*[~|^$*]?=[^\]]*\0[^\]]*\]")


# An unknown piece that starts a name (`"#" + id`) or ends a prefix (`"btn-" + kind`) is the
# rest of that name. After a whole name (`".menu" + sub`) it may start with a combinator
# (`" li"`): not widened, so the chain is read by its pieces.
_UNKNOWN_IN_NAME = re.compile(r"([#.])(?:[\w-]*[-_])?\0(?:[\w-]*[-_]\0)*[\w-]*")


def _joined_selector(operands: jslex.Concatenation) -> str | None:
    """A concatenation read as one selector, an operand whose value is not known widened to
    what it may be: in an id or a class, any holding the known pieces (`"li." + kind + " > a"`
    is `li[class] > a`, `"#" + id + "-empty"` is `[id$="-empty"]`); in an attribute's value,
    any. None where it may be more (a tag, a combinator, a whole selector):
    then its pieces are read one by one. One that starts with such an operand
    (`sel + " > li"`) is relative to what that selector found: read by its pieces, as a
    relative selector."""
    if operands[0] is jslex.UNKNOWN:
        return None
    text = "".join("\0" if operand is jslex.UNKNOWN else operand for operand in operands)
    text = _UNKNOWN_IN_VALUE.sub(r"[\1]", text)
    text = _UNKNOWN_IN_NAME.sub(_widened_name, text)
    return None if "\0" in text else text


def _widened_name(found: re.Match[str]) -> str:
    """A name partly known (`"#" + id + "-empty"`, `"." + prefix + "controls"`) as the
    attribute tests its known pieces make: an id starts and ends with them, a class holds
    them (`[class*="controls"]`; `[class]` alone held every element with a class beside
    another, WordPress's media player)."""
    first, *middle, last = found.group(0)[1:].split("\0")
    if found.group(1) == ".":
        tests = [f'[class*="{piece}"]' for piece in (first, *middle, last) if piece]
        return "".join(tests) or "[class]"
    tests = [f'[id^="{first}"]'] if first else []
    tests += [f'[id*="{piece}"]' for piece in middle if piece]
    tests += [f'[id$="{last}"]'] if last else []
    return "".join(tests) or "[id]"


# Attributes a script reads or queries (not those it only writes): in selector syntax
# (`[data-testid="x"]`, also built from pieces), through getAttribute/hasAttribute/..., or as
# `dataset.camelCase`. A test hook only rendered by a template is no dependency of the app.
_ATTRIBUTE_QUERY = re.compile(r"\[\s*([A-Za-z_][\w-]*)\s*(?=[\]~|^$*=])")


_ATTRIBUTE_CALL = re.compile(
    r"(?:get|has|remove|toggle)Attribute(?:NS|Node)?\(\s*(?:null\s*,\s*)?[\"'`]([\w:-]+)"
)


# A script reading an element's id as data: the id, as a property or through jQuery's or the
# DOM's attribute reads, sliced, split or matched in place (`$link.attr('id').substr(2)`:
# DokuWiki's media manager; `this.id.replace("row-", "")`). Sizzle's `context.getAttribute("id")`
# only escapes the id it was given (assigned first), so it is no such read.
# (No optional `?` of `?.id` first: every position of a bundle would start a try, 8x the time;
# `?.id` holds `.id`, which a search finds the same.)
_ID_READ = (
    r"""(?:\.id\b|\.(?:attr|prop)\(\s*["'`]id["'`]\s*\)|getAttribute\(\s*["'`]id["'`]\s*\))"""
)
# ... sliced or matched: not jQuery UI's and Sizzle's escaping of an id for a selector,
# `id.replace(/([^A-Za-z0-9_\-])/g, "\\$1")` (a class of what is not, to escape it), nor any
# replacement by a regex that writes backslashes, which escapes or unescapes the id as a whole
# for a selector or a string: jQuery UI's datepicker, `"#" + inst.id.replace(/\\\\/g, "\\")`,
# in the full jQuery UI bundle (1.13, RT's and Debian's: every page loading it was read as
# parsing its ids, and kept the id of every element its scripts find by a class), and RT 5's
# patch of it, `data.id.replace(/'/g, "\\'")`.
_REGEX_LITERAL = r"/(?:[^/\\\n\[]|\\.|\[(?:[^\]\\\n]|\\.)*\])+/[a-z]*"
_ID_PARSE = (
    r"\s*\??\.\s*(?:substr|substring|slice|split|replace(?:All)?(?!\s*\(\s*/\(?\[\^)"
    r"(?!\s*\(\s*" + _REGEX_LITERAL + r"\s*,\s*[\"'`]\\\\)|match|"
    r"matchAll|indexOf|lastIndexOf|startsWith|endsWith|charAt|charCodeAt|search)\s*\("
)
_ID_PARSED = re.compile(_ID_READ + _ID_PARSE)
# ... or read into a variable first, and that sliced or matched a little further on
# (WordPress's `var id = $(this).attr('id'); id = id.substr(...)`).
_ID_READ_INTO = re.compile(
    r"(?:var|let|const)\s+([\w$]+)\s*=\s*[\w$.()'\"\s]{0,200}?\??" + _ID_READ + r"\s*[;,\n]"
)


def _parses_ids(text: str) -> bool:
    if _ID_PARSED.search(text):
        return True
    for found in _ID_READ_INTO.finditer(text):
        after = text[found.end() : found.end() + 2000]
        if re.search(r"(?<![\w$.])" + re.escape(found.group(1)) + _ID_PARSE, after):
            return True
    return False


# Steps a script takes from an element it holds to a sibling by jQuery's traversal with a
# selector, each as the direction and the selector (`AssetRefs.steps_held`): `.next("span")`
# (DokuWiki's media manager hides and toggles the list of allowed file extensions after its
# link by it: wrapped, the list showed, moving the page below it, and its link did nothing),
# `.nextAll()`, `.prev()`, `.prevAll()`, `.siblings()`. Only steps that name what they step to:
# a bare `.next()` is every iterator's too, and libraries step to any sibling everywhere
# (`.siblings()`, `nextElementSibling`): read as such, they left no element beside a held one
# wrappable, and Wagtail's login page with no drift at all.
_SIBLING_STEP = re.compile(
    r"""\.(next|nextAll|prev|prevAll|siblings)\(\s*(["'`])((?:\\.|(?!\2)[^\\\n]){1,200})\2\s*\)"""
)
_STEP_DIRECTIONS = {
    "next": ("+",),
    "nextAll": ("~",),
    "prev": ("-",),
    "prevAll": ("-~",),
    "siblings": ("~", "-~"),
}


# A pseudo-class, which narrows what a compound selector matches (`.ui-front:visible`).
_PSEUDO = re.compile(r":{1,2}[A-Za-z-]+(?:\([^()]*\))?")


def _steps_held(text: str) -> frozenset[str]:
    return frozenset(
        f"{direction} {target}"
        for method, _, selector in _SIBLING_STEP.findall(text)
        if (target := _step_target(selector))
        for direction in _STEP_DIRECTIONS[method]
    )


# jQuery's pseudo-classes of a type of control (`:checkbox` is `input[type=checkbox]`): a step
# to one steps to a control, not to any sibling.
_CONTROL_PSEUDO = re.compile(
    r":(?:input|text|password|radio|checkbox|submit|image|reset|button|file|header)\b"
)


def _step_target(selector: str) -> str | None:
    """What a step to a sibling names, without its pseudo-classes (jQuery UI's
    `.siblings(".ui-front:visible")` steps to no more than `.ui-front`) and its escapes; None
    when that leaves nothing (`:visible`, `:not(.deleted)`: a step to any sibling, not read,
    as a bare one), but any element for a control's (`:checkbox`)."""
    if _CONTROL_PSEUDO.search(selector):
        return "*"
    return _PSEUDO.sub("", selector.replace("\\", "")).strip() or None


def js_refs(text: str, values: Iterable[str] = ()) -> AssetRefs:
    """Every word a script could use to find an element: the words of the values it holds
    (its literals and object keys, `shifts.jslex`; every word of its text if it cannot be read
    in step), and the attributes it reads or queries. `values` are strings a script reads as
    they are (data-* attribute values)."""
    return _refs(text, values, None)


def joined_js_refs(blocks: Sequence[str], values: Iterable[str] = ()) -> AssetRefs:
    """`js_refs` of the scripts joined (`jslex.JOINER`: a page's inline scripts), each read
    once for all the pages that hold it (`jslex.joined_literals`)."""
    return _refs(jslex.JOINER.join(blocks), values, blocks)


def _refs(text: str, values: Iterable[str], blocks: Sequence[str] | None) -> AssetRefs:
    free_names: set[str] = set()
    concatenations: list[jslex.Concatenation] = []
    try:
        held = (
            jslex.literals(text, free_names, concatenations)
            if blocks is None
            else jslex.joined_literals(blocks, free_names, concatenations)
        )
        held += values
        suffixes = _suffixes(concatenations)
    except jslex.Unreadable:
        held = [text, *values]  # every word, and what looks like a string
        held += [literal for pair in _JS_STRING.findall(text) for literal in pair if literal]
        concatenations = []
        suffixes = set(_APPENDED.findall(text))
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
    for whole, relative in _found_then_relative(text):
        # (One that names nothing, `"+*"`, is read as relative to what scripts hold: the
        # sibling right after them, which is narrower than any of `.first`'s siblings.)
        named = _relative_to_held(relative.strip())[1] is None
        if named and pieces[relative] > 0 and _is_structural_selector(whole):
            joined.append(whole)
            pieces[relative] -= 1
    # A piece of a selector built from pieces (`"h2 + " + tag`), not read whole: what follows
    # the combinator is not known, so any element (`h2 + *`).
    structural_selectors = [*joined, *_structural_pieces(list(pieces.elements()))]
    parts = [
        _relative_to_held(part)
        for literal in structural_selectors
        for part in split_top_level(literal)
    ]
    read = selector_refs(selector for selector, _ in parts)
    code_and_values = "\n".join([text, *values])  # `data-target="[data-testid=x]"` too
    attributes = {name.lower() for name in _ATTRIBUTE_QUERY.findall(code_and_values)}
    attributes |= {name.lower() for name in _ATTRIBUTE_CALL.findall(text)}
    read_attributes = frozenset(attributes | dataset)
    return AssetRefs(
        words=frozenset(words),
        prefixes=frozenset(prefixes),
        suffixes=frozenset(suffixes),
        free_names=frozenset(free_names),
        attributes=read_attributes,
        script_attributes=read_attributes,  # (a script's reads are all a script's)
        parses_ids=_parses_ids(text),
        structure=read.structure,
        follows_held=frozenset(held for _, held in parts if held in ("+", "~")),
        steps_held=_steps_held(text),
    )
