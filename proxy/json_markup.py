"""HTML that an app's XHR answers carry inside JSON: found, and put back shifted.

Many apps answer an XHR with JSON whose strings hold the markup the page then inserts:
phpMyAdmin's every screen after the first (`{"message": "<div ...", "success": true}`),
Drupal's AJAX commands (`[{"command": "insert", "data": "<div ..."}]`), GitLab's `{"html": ...}`
and `note_html`, WordPress's REST `rendered`. Served as the upstream wrote them, a `-Perc`
episode on such an app is `Src` after its first page. Each such string is shifted as an HTML
fragment of its page is (`proxy.rewrite`), and put back where it was: the rest of the text is
the upstream's bytes, so a script reads the same answer but that markup.

Which strings: never the source an editor edits and saves back, or the drift would be saved
into the app's data, for every later episode: WordPress's REST API sends a post's `content.raw`
beside `content.rendered`, its admin-ajax sends the `<img class="wp-image-5">` the classic
editor inserts into the post as `data`, and Drupal's `editorGetUntransformedText` command sends
a field's source as `data`. So a key that names rendered markup wherever it is (`html`, a name
ending in it, `rendered`, Wagtail's `htmlFragment`), or one an app's answer says is its screen:
phpMyAdmin's (an object with a `success` flag: `message`, `error`, `menu`, ...) and Drupal's
commands that insert markup (`data` of `insert` and `openDialog`). The value of such a key (or
each item of an array that is its value), if its text is markup: after whitespace, a tag or a
comment.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# Keys that name rendered markup in any answer (case, `_` and `-` aside): `html` and the names
# ending in it (GitLab's `note_html`, `description_html`), WordPress's REST `rendered`, and
# Wagtail's `htmlFragment` (the screen its ModalWorkflow choosers put in place of a tab: an
# uploaded image's duplicate, an upload form shown again with its errors).
RENDERED_KEYS = frozenset({"rendered", "htmlfragment"})
RENDERED_KEY_ENDING = "html"
# phpMyAdmin's answers (its `ResponseRenderer`): an object with a boolean `success`, the
# screen in `message` (or `error`), the menu, the link to the screen, a notice.
SCREEN_KEYS = frozenset({"message", "error", "errors", "menu", "selflink", "displaymessage"})
# Drupal's AJAX commands that put their `data` into the page (not `editorGetUntransformedText`,
# whose `data` is a field's source for an editor).
INSERTING_COMMANDS = frozenset({"insert", "openDialog"})
JSON_TYPES = ("application/json", "text/json")

# A JSON string, or one of the characters that give the text its structure (numbers, `true`,
# `false` and `null` are skipped: they change no key).
# (The string's pattern unrolled: a run of plain characters is one step of the regex engine,
# not one alternation per character, which took seconds over a few MB.)
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]', re.DOTALL)
# A string token whose value may begin with a tag: a `<` (or its escape, PHP's `JSON_HEX_TAG`)
# after whitespace, written or escaped.
_MAY_BE_MARKUP = re.compile(r'"(?:[ \t\r\n]|\\[nrt]|\\u00(?:20|0[9aAdD]))*(?:<|\\u003[cC])')
# A value that is markup: after whitespace, a tag or a comment (a script answer's literals too).
MARKUP = re.compile(r"[ \t\r\n]*<[!A-Za-z]")
# ... and where one may start in a JSON text, after a `:`, `[` or `,` (in C: an answer of API
# data whose strings only hold a `<` inside is no markup, and is not parsed).
_VALUE_MAY_BE_MARKUP = re.compile(
    r'[:\[,][ \t\r\n]*"(?:[ \t\r\n]|\\[nrt]|\\u00(?:20|0[9aAdD]))*(?:<|\\u003[cC])'
)


def is_json_type(mime: str | None) -> bool:
    """Whether a response of this type is JSON (`application/json`, `text/json`, `+json`)."""
    return mime is not None and (mime in JSON_TYPES or mime.endswith("+json"))


def markup_keys(pairs: list[tuple[str, Any]]) -> frozenset[str]:
    """The keys of one JSON object (its pairs, in order) whose values are markup the page
    inserts: a key that names rendered markup, or one its answer's shape says is a screen."""
    return _markup_keys(pairs, dict(pairs))


def _markup_keys(
    pairs: list[tuple[str, Any]], values: dict[str, Any], left: Counter[str] | None = None
) -> frozenset[str]:
    """`markup_keys`; `left` counts the markup strings under the object's other keys."""
    screen = SCREEN_KEYS if isinstance(values.get("success"), bool) else frozenset()
    command = values.get("command")
    inserts = isinstance(command, str) and command in INSERTING_COMMANDS
    keys = []
    for key, value in pairs:
        if not _holds_markup(value):
            continue
        name = key.lower().replace("_", "").replace("-", "")
        if (
            name in RENDERED_KEYS
            or name.endswith(RENDERED_KEY_ENDING)
            or name in screen
            or (inserts and key == "data")
        ):
            keys.append(key)
        elif left is not None:
            left[key] += _markup_count(value)
    return frozenset(keys)


@dataclass(frozen=True)
class MarkupString:
    """A string value of a JSON text that holds markup: where its token is in the text (the
    quotes included), its key, and its value."""

    start: int
    end: int
    key: str
    value: str
    ascii_only: bool  # written with every other character escaped: so it is written back


@dataclass(frozen=True)
class MarkupAnswer:
    """What a JSON answer holds for the drift, read in one parse: its markup strings, in
    order, and (of one that has any) the scripts it names for its page (`named_scripts`)."""

    strings: list[MarkupString]
    scripts: list[str]
    # The markup strings under keys no rule reads, by key: an editor's source (WordPress's
    # `raw`), or a screen under a key the service does not know (phpMyAdmin's recent tables,
    # `list`); they go out as they came, and the log says so (`markup_left`).
    left: dict[str, int] = field(default_factory=dict)


NO_MARKUP = MarkupAnswer([], [])


def read_answer(text: str) -> MarkupAnswer:
    """A JSON text's markup strings and named scripts; none when the text is no JSON."""
    if _VALUE_MAY_BE_MARKUP.search(text) is None:
        return NO_MARKUP  # (most answers: no string starts with a tag, and not worth a parse)
    # Which keys of each object hold markup, decided on the parsed values (one parse in C),
    # object by object in the order they close; the walk below only finds where they are.
    by_object: list[frozenset[str]] = []
    left: Counter[str] = Counter()

    def read_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        values = dict(pairs)
        by_object.append(_markup_keys(pairs, values, left))
        return values

    try:
        decoded = json.loads(text, object_pairs_hook=read_object)
    except (ValueError, RecursionError):
        return NO_MARKUP  # no JSON, or nested deeper than Python's parser goes: as it came
    if not any(by_object):
        # (a big answer of API data with a `<` somewhere: no walk of it)
        return MarkupAnswer([], [], dict(left)) if left else NO_MARKUP
    strings = _walk(text, by_object)
    return MarkupAnswer(strings, _named_in(decoded) if strings else [], dict(left))


def markup_strings(text: str) -> list[MarkupString]:
    """The markup strings of a JSON text, in order; none when the text is no JSON."""
    return read_answer(text).strings


def _walk(text: str, by_object: list[frozenset[str]]) -> list[MarkupString]:
    """The strings of `text` that `by_object` names (the markup keys of each object, in the
    order the objects close), found by their tokens."""
    found: list[MarkupString] = []
    closed = 0
    # Each open object or array: whether it is an object, the key its next value is under (an
    # array's: its object's key for it), and its object's strings that may be markup.
    open_: list[tuple[bool, list[Any], list[MarkupString]]] = []
    value_next = False  # after a `:`, or in an array: the next string is a value, not a key
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "{[":
            key = open_[-1][1][0] if open_ and value_next else None
            strings = open_[-1][2] if open_ and token == "[" else []
            open_.append((token == "{", [key], strings))
            value_next = token == "["
        elif token in "}]":
            is_object, _, strings = open_.pop()
            if is_object:
                keys = by_object[closed]
                closed += 1
                found += [string for string in strings if string.key in keys]
            value_next = bool(open_) and not open_[-1][0]
        elif token == ":":
            value_next = True
        elif token == ",":
            value_next = bool(open_) and not open_[-1][0]
        elif open_ and open_[-1][0] and not value_next:
            open_[-1][1][0] = json.loads(token) if "\\" in token else token[1:-1]  # a key
        else:
            key = open_[-1][1][0] if open_ else None
            if key is not None and _MAY_BE_MARKUP.match(token):
                value = json.loads(token)
                if MARKUP.match(value):
                    string = MarkupString(match.start(), match.end(), key, value, token.isascii())
                    open_[-1][2].append(string)
            value_next = bool(open_) and not open_[-1][0]
    return sorted(found, key=lambda string: string.start)


# A string that names a script: a path or URL ending in `.js` (a query after it, never inside
# it: `index.php?route=/x&f=a.js` is no script): phpMyAdmin's `scripts` (`{"name": "sql.js"}`),
# Drupal's `add_js` command (`{"src": "/core/misc/x.js?v=1"}`).
_SCRIPT = re.compile(r"[^\s\"'<>?#]+\.js(?:\?[^\s\"'<>#]*)?")
# How many scripts one answer may name (phpMyAdmin's screens name a dozen): past that it is no
# screen's list, and nothing is fetched for it.
MAX_NAMED_SCRIPTS = 64


def named_scripts(text: str) -> list[str]:
    """The scripts a JSON answer names for its page to load (`_named_in`)."""
    return _named_in(json.loads(text))


def _named_in(answer: Any) -> list[str]:
    """The scripts a decoded JSON answer names for its page to load, in order, each as named
    (its query kept: the URL the page loads): phpMyAdmin's `scripts` in an answer of its
    shape (an object with a boolean `success`; its `ajax.js` adds them to the page once the
    screen is in), the `src` of Drupal's `add_js` commands. Never any other string, which is
    the app's data (a file listing's `config.js`, a label `Node.js`)."""
    names: list[str] = []

    def strings(value: Any, key: str | None = None) -> None:
        if isinstance(value, str):
            if key in (None, "name", "src") and _SCRIPT.fullmatch(value):
                names.append(value)
        elif isinstance(value, list):
            for item in value:
                strings(item, key)
        elif isinstance(value, dict):
            for name, item in value.items():
                strings(item, name)

    def read(value: Any) -> None:
        if isinstance(value, list):
            for item in value:
                read(item)
        elif isinstance(value, dict):
            if isinstance(value.get("success"), bool):
                strings(value.get("scripts"))
            if value.get("command") == "add_js":
                strings(value.get("data"))
            for item in value.values():
                read(item)

    read(answer)
    return list(dict.fromkeys(names))


def _path(name: str) -> str:
    return name.split("#")[0].split("?")[0]


def script_places(named: list[str], known_urls: list[str]) -> dict[str, str | None]:
    """Where each named script is, as a URL on the origin of `known_urls` (the scripts the
    knowledge holds), with the query it is named with or that of the known scripts beside it;
    None where nothing places it. A URL is itself; a path from the root is the origin's. A
    relative name is placed by the known names beside it: the names of one directory are one
    app's, under one base, the one most of them are known under (the first named's of
    equals), else the base of the nearest directory above theirs that has one. phpMyAdmin
    names `ajax.js` and a dozen more of `/js/dist/` (`?v=5.2.1`), so `sql.js` is
    `/js/dist/sql.js?v=5.2.1`, not the CodeMirror mode `/js/vendor/codemirror/mode/sql/sql.js`
    its pages also load; it names `vendor/jquery/jquery.min.js`, at `/js/vendor/...`, so
    `vendor/jquery/x.js` is under `/js/`, and `table/change.js` (no known name under
    `table/`) under `/js/dist/`. Past `MAX_NAMED_SCRIPTS` names, no relative one is placed."""
    queries: dict[str, str] = {}  # each known path (no query) -> its first URL's query
    for url in known_urls:
        path, _, query = url.split("#")[0].partition("?")
        queries.setdefault(path, query)
    origin = next((f"{p.scheme}://{p.netloc}" for p in map(urlsplit, known_urls)), None)
    # Each ending of a known path after a `/` -> the bases it is under (`/js/dist/sql.js`:
    # `sql.js` under `/js/dist/`, `dist/sql.js` under `/js/`), found in one look-up per name.
    under: dict[str, list[str]] = {}
    for path in queries:
        local = urlsplit(path).path
        for at, character in enumerate(local):
            if character == "/":
                under.setdefault(local[at + 1 :], []).append(local[: at + 1])
    relative = [name for name in named if "://" not in name and not name.startswith("/")]
    votes: dict[tuple[str, ...], dict[str, int]] = {}  # each directory: its names' bases
    if len(relative) <= MAX_NAMED_SCRIPTS:
        for name in relative:
            counted = votes.setdefault(_directory(name), {})
            for known_base in dict.fromkeys(under.get(_path(name), [])):
                counted[known_base] = counted.get(known_base, 0) + 1
    chosen = {
        directory: max(counted, key=counted.__getitem__)  # (the first of equals)
        for directory, counted in votes.items()
        if counted
    }
    places: dict[str, str | None] = {}
    for name in named:
        own_query = name.split("#")[0].partition("?")[2]
        if "://" in name:
            places[name] = name.split("#")[0]
        elif name.startswith("//") or origin is None:
            places[name] = None
        elif name.startswith("/"):
            places[name] = origin + name.split("#")[0]
        else:
            directory = _directory(name)
            bases = (chosen.get(directory[:depth]) for depth in range(len(directory), -1, -1))
            base = next((found for found in bases if found is not None), None)
            if base is None:
                places[name] = None
                continue
            place = origin + base + _path(name)
            query = own_query or queries.get(place) or _query_under(queries, origin + base)
            places[name] = place + (f"?{query}" if query else "")
    return places


def _directory(name: str) -> tuple[str, ...]:
    return tuple(_path(name).split("/")[:-1])


def _query_under(queries: dict[str, str], base: str) -> str:
    """The query of the first known script under `base` that has one (`?v=5.2.1`)."""
    return next((query for path, query in queries.items() if path.startswith(base) and query), "")


@dataclass(frozen=True)
class ScriptGaps:
    """Of the scripts an answer or fragment names: those not where `script_places` puts them
    among the known ones, and the URLs of those it places (what can be learnt)."""

    unknown: list[str]
    located: list[str]


def script_gaps(named: list[str], known_urls: list[str]) -> ScriptGaps:
    known = {_path(url) for url in known_urls}
    places = script_places(named, known_urls)
    unknown = [name for name in named if (at := places[name]) is None or _path(at) not in known]
    return ScriptGaps(unknown, [at for name in unknown if (at := places[name]) is not None])


def unknown_scripts(named: list[str], known_urls: list[str]) -> list[str]:
    """The named scripts that are not where `script_places` puts them among `known_urls` (by
    path: `sql.js` at `/js/dist/sql.js` is known as `/js/dist/sql.js?v=1`)."""
    return script_gaps(named, known_urls).unknown


def located_scripts(unknown: list[str], named: list[str], known_urls: list[str]) -> list[str]:
    """The URLs the unknown named scripts are at (`script_places`), those it places."""
    places = script_places(named, known_urls)
    return [at for name in unknown if (at := places.get(name)) is not None]


def _holds_markup(value: Any) -> bool:
    """A markup string, or an array holding one (at any depth; an object's are its keys')."""
    if isinstance(value, str):
        return MARKUP.match(value) is not None
    return isinstance(value, list) and any(_holds_markup(item) for item in value)


MAX_LEFT_KEYS = 20  # (an answer's keys are the app's: a log line names the first ones)


def left_keys(answer: MarkupAnswer) -> dict[str, int]:
    """The keys an answer's markup was left under, for its log: each name at most 64
    characters (the strings of names cut to the same one added up), the `MAX_LEFT_KEYS` that
    left the most strings, most first."""
    cut: Counter[str] = Counter()
    for key, count in answer.left.items():
        cut[key[:64]] += count
    return dict(cut.most_common(MAX_LEFT_KEYS))


def _markup_count(value: Any) -> int:
    """The markup strings of a value `_holds_markup` says holds some."""
    if isinstance(value, str):
        return 1 if MARKUP.match(value) is not None else 0
    return sum(map(_markup_count, value)) if isinstance(value, list) else 0


def with_strings_replaced(
    text: str, replaced: list[tuple[MarkupString, str]], ascii_only: bool = False
) -> str:
    """The JSON text with each of its strings' values replaced, the rest of it byte for byte
    (a string written back as it was: escaped to ASCII if it was, or if `ascii_only`)."""
    return spliced(
        text,
        replaced,
        lambda string, value: json.dumps(value, ensure_ascii=ascii_only or string.ascii_only),
    )


def spliced(
    text: str,
    replaced: list[tuple[MarkupString, str]],
    written: Callable[[MarkupString, str], str],
) -> str:
    """`text` with each string's token (its quotes included) replaced by what `written` makes
    of its new value, the rest of it byte for byte."""
    parts: list[str] = []
    at = 0
    for string, value in sorted(replaced, key=lambda pair: pair[0].start):
        parts += [text[at : string.start], written(string, value)]
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
