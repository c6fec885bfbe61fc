"""HTML that an app's XHR answers carry inside JSON: found, and put back shifted.

Many apps answer an XHR with JSON whose strings hold the markup the page then inserts:
phpMyAdmin's every screen after the first (`{"message": "<div ..."}`), Drupal's AJAX commands
(`[{"command": "insert", "data": "<div ..."}]`), WordPress's admin-ajax (`{"success": true,
"data": "<tr ..."}`), GitLab's `{"html": ...}` and `note_html`. Served as the upstream wrote
them, a `-Perc` episode on such an app is `Src` after its first page. Each such string is
shifted as an HTML fragment of its page is (`proxy.rewrite`), and put back where it was: the
rest of the text is the upstream's bytes, so a script reads the same answer but that markup.

Which strings: the values of a key (an array's items by the array's key) whose name says the
value is markup to insert, not the source an editor edits and saves back: WordPress's REST API
sends a post's `content.raw` beside `content.rendered`, and the raw one drifted would be saved
into the post by the block editor, for every later episode. And of those, the ones whose text
is markup: after whitespace, a tag or a comment.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

# Keys whose string values are markup an app inserts (case, `_` and `-` aside), and the endings
# that say so (`note_html`, `bodyHtml`; phpMyAdmin's `displayMessage`). Not `content`, `body`,
# `raw`, `text`, `source` or `template`: what an editor edits, or a script fills in.
MARKUP_KEYS = frozenset(
    {"html", "data", "message", "error", "errors", "menu", "selflink", "navigation", "rendered"}
    | {"markup"}
)
MARKUP_KEY_ENDINGS = ("html", "message")
JSON_TYPES = ("application/json", "text/json")

# A JSON string, or one of the characters that give the text its structure (numbers, `true`,
# `false` and `null` are skipped: they change no key).
# (The string's pattern unrolled: a run of plain characters is one step of the regex engine,
# not one alternation per character, which took seconds over a few MB.)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]', re.DOTALL)
# A string token whose value may begin with a tag: a `<` (or its escape, PHP's `JSON_HEX_TAG`)
# after whitespace, written or escaped.
_MAY_BE_MARKUP = re.compile(r'"(?:[ \t\r\n]|\\[nrt]|\\u00(?:20|0[9aAdD]))*(?:<|\\u003[cC])')
_MARKUP = re.compile(r"[ \t\r\n]*<[!A-Za-z]")


def is_json_type(mime: str | None) -> bool:
    """Whether a response of this type is JSON (`application/json`, `text/json`, `+json`)."""
    return mime is not None and (mime in JSON_TYPES or mime.endswith("+json"))


def is_markup_key(key: str) -> bool:
    name = key.lower().replace("_", "").replace("-", "")
    return name in MARKUP_KEYS or name.endswith(MARKUP_KEY_ENDINGS)


@dataclass(frozen=True)
class MarkupString:
    """A string value of a JSON text that holds markup: where its token is in the text (the
    quotes included), its key, and its value."""

    start: int
    end: int
    key: str
    value: str
    ascii_only: bool  # written with every other character escaped: so it is written back


def markup_strings(text: str) -> list[MarkupString]:
    """The markup strings of a JSON text, in order; none when the text is no JSON."""
    if "<" not in text and "\\u003" not in text:
        return []  # (most answers: no markup, and not worth a parse)
    try:
        if not _holds_markup_strings(text):
            return []  # (a big answer of API data with a `<` somewhere: no walk of its tokens)
    except (ValueError, RecursionError):
        return []  # no JSON, or nested deeper than Python's parser goes: served as it came
    found: list[MarkupString] = []
    # For each open object or array: the key its next value is under (an array's: its own).
    keys: list[str | None] = []
    in_object: list[bool] = []
    value_next = False  # after a `:`, or in an array: the next string is a value, not a key
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "{[":
            key = keys[-1] if keys and value_next else None
            keys.append(key)
            in_object.append(token == "{")
            value_next = token == "["
        elif token in "}]":
            keys.pop()
            in_object.pop()
            value_next = bool(in_object) and not in_object[-1]
        elif token == ":":
            value_next = True
        elif token == ",":
            value_next = bool(in_object) and not in_object[-1]
        elif in_object and in_object[-1] and not value_next:
            keys[-1] = json.loads(token) if "\\" in token else token[1:-1]  # a key
        else:
            key = keys[-1] if keys else None
            if key is not None and is_markup_key(key) and _MAY_BE_MARKUP.match(token):
                value = json.loads(token)
                if _MARKUP.match(value):
                    found.append(
                        MarkupString(match.start(), match.end(), key, value, token.isascii())
                    )
            value_next = bool(in_object) and not in_object[-1]
    return found


def _holds_markup_strings(text: str) -> bool:
    """Whether the JSON text has a markup string where `markup_strings` looks (raises
    ValueError when it is no JSON): one parse in C, and the keys of each object read once."""
    found = False

    def read_object(pairs: list[tuple[str, Any]]) -> None:
        nonlocal found
        found = found or any(_is_markup_key(key) and _holds_markup(value) for key, value in pairs)

    json.loads(text, object_pairs_hook=read_object)
    return found


def _holds_markup(value: Any) -> bool:
    """A markup string, or an array holding one (at any depth; an object's are its keys')."""
    if isinstance(value, str):
        return _MARKUP.match(value) is not None
    return isinstance(value, list) and any(_holds_markup(item) for item in value)


_is_markup_key = functools.lru_cache(maxsize=4096)(is_markup_key)


def with_strings_replaced(
    text: str, replaced: list[tuple[MarkupString, str]], ascii_only: bool = False
) -> str:
    """The JSON text with each of its strings' values replaced, the rest of it byte for byte
    (a string written back as it was: escaped to ASCII if it was, or if `ascii_only`)."""
    parts: list[str] = []
    at = 0
    for string, value in sorted(replaced, key=lambda pair: pair[0].start):
        escaped = ascii_only or string.ascii_only
        parts += [text[at : string.start], json.dumps(value, ensure_ascii=escaped)]
        at = string.end
    parts.append(text[at:])
    return "".join(parts)


@dataclass
class ShiftedAnswer:
    """What the shifts did to a JSON answer's markup strings together, as a page's record reads
    what they did to a page (`proxy.har.page_record`): their notes summed, their change maps
    one after the other; no runtime (a fragment gets none)."""

    strings: int
    changed: int
    notes: dict[str, Any]
    changes: list[dict[str, Any]]
    runtime: dict[str, Any] = field(default_factory=dict)


def summed_notes(all_notes: list[dict[str, Any]]) -> dict[str, Any]:
    """What each shift did to several fragments of one answer: its counts added up (the share
    of controls whose locator changed over the sum), any other note as the first one says."""
    summed: dict[str, Any] = {}
    for notes in all_notes:
        for shift, note in notes.items():
            if not isinstance(note, dict):
                summed.setdefault(shift, note)
                continue
            into = summed.setdefault(shift, {})
            for name, value in note.items():
                counted = isinstance(value, int) and not isinstance(value, bool)
                if counted and isinstance(into.get(name, 0), int):
                    into[name] = into.get(name, 0) + value
                else:
                    into.setdefault(name, value)
    for note in summed.values():
        if isinstance(note, dict) and "share" in note and note.get("interactive"):
            note["share"] = round(note.get("locators_changed", 0) / note["interactive"], 3)
    return summed
