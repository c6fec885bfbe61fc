"""The values a script's text holds: its string, template and regex literals, and the keys of
its object literals.

A script can only find an element by a name it holds as a value: a selector, an id, a class
(`querySelector(".menu")`, `getElementById("main")`, `/\\bopen\\b/.test(el.className)`) or an
object key a framework turns into a class (`{active: on}`). An identifier (`this.wrapper`,
`main`) is a name in the program, not a value. So the words of these literals, not every word
of the code, are what a script may use (`shifts.references.js_refs`).

Telling a regex from a division takes the token before the slash (as every JavaScript lexer
does); a text this reader cannot follow to its end in step (an unterminated literal, unbalanced
template braces) raises `Unreadable`, and the caller falls back to every word of the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shifts.kept import KeptByText

_CODE = re.compile(
    r"""
     (?P<space>\s+)
    |(?P<comment>//[^\n\r\u2028\u2029]*|/\*.*?\*/)
    |(?P<string>"(?:[^"\\\n\r]|\\.)*"|'(?:[^'\\\n\r]|\\.)*')
    |(?P<template>`)
    |(?P<name>[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*)
    |(?P<number>\.?\d[\w.]*)
    |(?P<slash>/)
    |(?P<open>\{)
    |(?P<close>\})
    |(?P<colon>:)
    |(?P<value_end>[)\]])
    |(?P<punctuation>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_REGEX = re.compile(r"/(?:[^/\\\[\n\r]|\\.|\[(?:[^\]\\\n\r]|\\.)*\])+/[A-Za-z]*")
_TEMPLATE_TEXT = re.compile(r"(?:[^`\\$]|\\.|\$(?!\{))*", re.DOTALL)
# After these words a slash starts a regex (`return /x/.test(s)`), after other names a division.
_BEFORE_AN_EXPRESSION = frozenset(
    {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw"}
    | {"case", "do", "else", "yield", "await"}
)
_BEFORE_A_CONDITION = frozenset({"if", "while", "for", "with"})
# Objects whose properties name elements by id or name (`window.main`, `document.all.x`).
_NAMED_ACCESS = frozenset(
    {"window", "self", "top", "parent", "frames", "globalThis", "document", "forms"}
    | {"elements", "all"}
)


# `\u0061` is the letter a; `\n` in a string or `\b` in a regex is no letter of a word.
_ESCAPE = re.compile(
    r"\\(?:u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|([A-Za-z0-9])|(.))"
)


def _unescaped(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(_one_escape, text)


def _one_escape(escape: re.Match[str]) -> str:
    code = escape.group(1) or escape.group(2) or escape.group(3)
    if code:
        return chr(min(int(code, 16), 0x10FFFF))
    return " " if escape.group(4) else escape.group(5)


class Unreadable(ValueError):
    """The text could not be read to its end in step (not JavaScript, or cut off)."""


# An operand of a concatenation that is not a string literal (`id` in `"#" + id + " > li"`).
UNKNOWN = None
Concatenation = list[str | None]


@dataclass(frozen=True)
class Reading:
    """What `literals` reads of a text alone, and whether a text joined after it with `;` and
    a line end (`JOINER`) is read as if alone (`joins`): its end leaves nothing open that the
    next text's tokens would be read in (a parenthesis, a brace, a class's heading, a line
    comment the `;` would fall into, a `/*` that found no `*/` in it and could in the next)."""

    found: tuple[str, ...]
    free_names: frozenset[str]
    concatenations: tuple[tuple[str | None, ...], ...]
    joins: bool


JOINER = ";\n"  # (how a page's inline scripts are joined: a statement ends where the next begins)


# (what a reading holds is at most about its text: its literals, a few names)
READINGS: KeptByText[Reading | None] = KeptByText(max_chars=4 * 1024 * 1024)


def read_alone(text: str) -> Reading | None:
    """`literals` of the text, alone (None: `Unreadable`), kept (`READINGS`): a site's pages
    repeat most of their inline scripts, each page's own values (a nonce, a post's id) in a
    few of them."""
    return READINGS.get_or_make(text, _reading_of)


def _reading_of(text: str) -> Reading | None:
    free_names: set[str] = set()
    concatenations: list[Concatenation] = []
    ends: list[bool] = []
    try:
        found = literals(text, free_names, concatenations, ends_clean=ends)
    except Unreadable:
        return None
    chains = tuple(tuple(operands) for operands in concatenations)
    return Reading(tuple(found), frozenset(free_names), chains, ends[0])


def joined_literals(
    texts: Sequence[str],
    free_names: set[str],
    concatenations: list[Concatenation],
) -> list[str]:
    """`literals(JOINER.join(texts), free_names, concatenations)`, each text read alone once
    (`read_alone`; 81 KB of a WordPress theme's inline script cost 45-60 ms to read again at
    each page whose other inline scripts held new values). A text that leaves something open is
    read joined with those after it, as far as it takes to close (a run of texts, itself read
    once); past `RUN` texts, the rest is read whole."""
    found: list[str] = []
    names: set[str] = set()  # (given once all are read alone: read joined, they are read again)
    chains: list[Concatenation] = []
    start = 0
    while start < len(texts):
        end = start + 1
        reading = read_alone(texts[start])
        while reading is not None and not reading.joins and end < len(texts):
            end = len(texts) if end - start >= RUN else end + 1
            reading = read_alone(JOINER.join(texts[start:end]))
        if reading is None:  # (what cannot be read alone may be read joined: all of it is)
            return literals(JOINER.join(texts), free_names, concatenations)
        found += reading.found
        names |= reading.free_names
        chains += [list(operands) for operands in reading.concatenations]
        start = end
    free_names |= names
    concatenations += chains
    return found


RUN = 4  # (texts read joined to close what one left open, before the rest is read whole)


def literals(
    text: str,
    free_names: set[str] | None = None,
    concatenations: list[Concatenation] | None = None,
    strings: list[tuple[int, int, str]] | None = None,
    ends_clean: list[bool] | None = None,
) -> list[str]:
    """The contents of the text's string, template and regex literals, its comments, and its
    object keys. `free_names`, if given, receives the identifiers the text uses unqualified or
    through named access (`main`, `window.main`, `document.forms.login`): legacy code reaches
    an element with such an id by them. `concatenations`, if given, receives each chain of
    operands joined by `+` that holds a string literal and another operand (`"a#" + id + "+*"`
    is `["a#", UNKNOWN, "+*"]`): a selector built from pieces is read whole from it.
    `strings`, if given, receives where each string literal is (its quotes included) and the
    token before it, comments aside (`+=` for that operator, `${` when the literal opens a
    template's substitution): a script answer's markup is put back there if it is a whole
    value (`proxy.script_markup`). `ends_clean`, if given, receives whether the text ends with
    nothing open: no parenthesis, brace or class heading, not in a line comment, and no `/*`
    that found no `*/` (read as a division)."""
    found: list[str] = []
    chain = _Chain(concatenations)
    position = 0
    # Per open `(`: whether a regex may follow its `)` (`if (x) /re/`); per open `{`: a block
    # (a regex may follow its `}`), an object literal (a division may), or a template's `${`.
    parens: list[bool] = []
    braces: list[str] = []
    division_next = False  # whether a slash here divides (after a value) or starts a regex
    in_class_heading = False  # after `class` (`class A extends B.C`): its `{` opens a body
    previous, before_previous = "", ""  # the last two tokens that were not space
    in_line_comment = False  # (the text ends in a `//` comment)
    comment_opened = False  # (a `/*` read as a division: no `*/` closed it in the text)
    # (The loop runs once per token of megabytes of code: names bound outside it.)
    match, length = _CODE.match, len(text)
    while position < length:
        token = match(text, position)
        assert token is not None  # (`punctuation` matches any character)
        kind, position = token.lastgroup, token.end()
        if kind == "space":
            continue
        value = token.group()
        if kind == "comment":
            # Its words count too: were the reading out of step, this "comment" could be the
            # rest of a line after a `//` inside a string (`'https://...'`).
            found.append(value)
            in_line_comment = position == length and value[1] == "/"
            continue
        if kind == "string":
            if strings is not None:
                strings.append(
                    (token.start(), position, _token_before(previous, before_previous, braces))
                )
            found.append(_unescaped(value[1:-1]))
            chain.operand(found[-1], previous)
            division_next = True
        elif kind == "template" or (kind == "close" and braces and braces[-1] == "${"):
            if kind == "close":
                braces.pop()
            position, opened = _template_text(text, position, found)
            if opened:
                braces.append("${")
            division_next = not opened
        elif kind == "name":
            chain.operand(UNKNOWN, previous)
            if free_names is not None and (previous != "." or before_previous in _NAMED_ACCESS):
                free_names.add(value)
            # A keyword after a dot is a property (`x.in / 2`), which a division follows.
            division_next = previous == "." or value not in _BEFORE_AN_EXPRESSION
            if previous in ("{", ",") and _is_a_key(text, position):
                found.append(value)  # an object key: `{active: on}`, `{active}`
            elif value == "class" and previous != ".":
                in_class_heading = True
        elif kind == "slash" and not division_next:
            regex = _REGEX.match(text, position - 1)
            if regex is None or text.startswith("/*", position - 1):
                raise Unreadable(f"a slash at {position - 1} is neither a division nor a regex")
            found.append(_unescaped(regex.group()))
            position, division_next = regex.end(), True
        elif kind == "open":
            # A class's body is a block: a statement, maybe a regex, starts after its `}`.
            block = in_class_heading or _opens_a_block(previous, before_previous)
            braces.append("block" if block else "object")
            division_next = in_class_heading = False
        elif kind == "close":
            # After a block a statement starts (`}` then `/re/.test(s)`), after an object a
            # value ends (`{a: 1} / 2` is rare, `({}) / 2` is the paren's).
            division_next = bool(braces) and braces.pop() == "object"
        elif value == "(":
            parens.append(previous in _BEFORE_A_CONDITION)
            division_next = False
        elif value == ")":
            division_next = not (parens and parens.pop())
        elif kind == "punctuation" and value in "\"'":
            raise Unreadable(f"a string at {position - 1} is not closed on its line")
        elif value in "+-" and text[position : position + 1] == value:
            if chain.operands:
                chain.end()
            position += 1  # `i++ / 2`, `++i`: what the slash after it is stays as it was
            continue
        else:
            division_next = kind in ("number", "value_end")
            # (a division before a `*`: a `/*` with no `*/` after it here, which a text
            # joined after this one could close)
            comment_opened = comment_opened or (kind == "slash" and text.startswith("*", position))
        if kind == "number":
            chain.operand(UNKNOWN, previous)
        elif chain.operands and kind not in ("string", "name"):
            chain.other(value)  # (with no operand yet, nothing to end or continue)
        previous, before_previous = value, previous
    chain.end()
    if braces and "${" in braces:
        raise Unreadable("a template literal is not closed")
    if ends_clean is not None:
        ends_clean.append(
            not (parens or braces or in_class_heading or in_line_comment or comment_opened)
        )
    return found


class _Chain:
    """Follows `a + b + c` token by token. An operand is a string literal or a name with its
    properties (`this.id`); anything else (a call's parenthesis, a template, an operator but
    `+`) ends the chain, which is then kept if it joins a string to something."""

    def __init__(self, into: list[Concatenation] | None) -> None:
        self.into = into
        self.operands: Concatenation = []
        self.awaiting = False  # after a `+`: the next token is an operand
        self.in_name = False  # the last operand is a name, which `.x` may continue

    def operand(self, value: str | None, previous: str) -> None:
        if self.into is None:
            return
        if value is UNKNOWN and self.in_name and previous == ".":
            return  # `this.id`: one operand
        if self.operands and not self.awaiting:
            self.end()
        self.operands.append(value)
        self.awaiting, self.in_name = False, value is UNKNOWN

    def other(self, token: str) -> None:
        if self.into is None:
            return
        if token == "+" and self.operands and not self.awaiting:
            self.awaiting = True
        elif not (token == "." and self.in_name and not self.awaiting):
            self.end()

    def end(self) -> None:
        if (
            self.into is not None
            and len(self.operands) > 1
            and any(operand is not UNKNOWN for operand in self.operands)
        ):
            self.into.append(self.operands)
        self.operands, self.awaiting, self.in_name = [], False, False


def _token_before(previous: str, before_previous: str, braces: list[str]) -> str:
    """The token before a literal as `literals` gives it with its `strings`: `+=` for that
    operator (read as `+` then `=`), `${` right after a template's substitution opened."""
    if previous == "=" and before_previous == "+":
        return "+="
    if previous in ("`", "}") and braces and braces[-1] == "${":
        return "${"
    return previous


def _opens_a_block(previous: str, before_previous: str) -> bool:
    """Whether a `{` after these tokens opens a block (a function's, `if (x) {`, `=> {`,
    `else {`, a statement's) rather than an object literal (`= {`, `({`, `, {`, `: {`)."""
    if previous in ("", ")", ";", "{", "}", "else", "do", "try", "finally"):
        return True
    return previous == ">" and before_previous == "="  # `=> {`


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


def _is_a_key(text: str, position: int) -> bool:
    """Whether the name that ends at `position` is followed by `:`, `,` or `}`."""
    after = _CODE.match(text, _skip_space(text, position))
    return after is not None and (after.lastgroup == "colon" or after.group() in (",", "}"))


def _template_text(text: str, position: int, found: list[str]) -> tuple[int, bool]:
    """Read a template literal's text from `position` to its end or its next `${`: the
    position after it, and whether a substitution opened."""
    part = _TEMPLATE_TEXT.match(text, position)
    assert part is not None  # (it matches the empty string)
    found.append(_unescaped(part.group()))
    position = part.end()
    if text.startswith("`", position):
        return position + 1, False
    if text.startswith("${", position):
        return position + 2, True
    raise Unreadable("a template literal is not closed")
