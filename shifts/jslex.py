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


def literals(text: str) -> list[str]:
    """The contents of the text's string, template and regex literals, and its object keys."""
    found: list[str] = []
    position, depth = 0, 0
    substitutions: list[int] = []  # the brace depth each open `${` returns to
    division_next = False  # whether a slash here divides (after a value) or starts a regex
    previous = ""  # the kind of the last token that was not space or comment
    while position < len(text):
        token = _CODE.match(text, position)
        assert token is not None  # (`punctuation` matches any character)
        kind, position = token.lastgroup, token.end()
        if kind in ("space", "comment"):
            continue
        if kind == "string":
            found.append(_unescaped(token.group()[1:-1]))
            division_next = True
        elif kind == "template" or (
            kind == "close" and substitutions and depth - 1 == substitutions[-1]
        ):
            if kind == "close":
                depth = substitutions.pop()
            position, opened = _template_text(text, position, found)
            if opened:
                substitutions.append(depth)
                depth += 1
            division_next = not opened
        elif kind == "name":
            division_next = token.group() not in _BEFORE_AN_EXPRESSION
            after = _CODE.match(text, _skip_space(text, position))
            if previous in ("open", "comma") and after is not None and after.lastgroup == "colon":
                found.append(token.group())  # an object key: `{active: on}`
        elif kind == "slash" and not division_next:
            regex = _REGEX.match(text, position - 1)
            if regex is None or text.startswith("/*", position - 1):
                raise Unreadable(f"a slash at {position - 1} is neither a division nor a regex")
            found.append(_unescaped(regex.group()))
            position, division_next = regex.end(), True
        elif kind == "open":
            depth += 1
            division_next = False
        elif kind == "close":
            depth -= 1
            division_next = True  # (a block's end before a regex is rare; an object's is not)
        elif kind == "punctuation" and token.group() in "\"'":
            raise Unreadable(f"a string at {position - 1} is not closed on its line")
        else:
            division_next = kind in ("number", "value_end")
        previous = "comma" if token.group() == "," else str(kind)
    if substitutions:
        raise Unreadable("a template literal is not closed")
    return found


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position


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
