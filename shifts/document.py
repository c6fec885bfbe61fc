"""An HTML document under rewrite: raw bytes first, an lxml tree only when a shift asks for one.

Injections that only add markup (a popup runtime, a stylesheet) are spliced into the bytes
without parsing, so an execution-only page costs a search, not a parse. Shifts that change
structure ask for `tree`, mark the document changed, and it is serialized once at the end.
"""

from __future__ import annotations

import array
import bisect
import codecs
import copy
import dataclasses
import functools
import html
import itertools
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from lxml import etree

from shifts import native
from shifts.encoding import (
    detect_encoding,
    is_ascii_compatible,
    is_ascii_transparent,
    libxml2_encoding,
    meta_charset,
)
from shifts.parsing import parse_html
from shifts.urls import as_requested
from shifts.volatile import (
    WORD_BYTES,
    Number,
    Swaps,
    attribute_in_serialized_tag,
    contains,
    count_in,
    places_of,
    replaced_at,
)

# A change map's entry holds the first this many characters of its element's text.
CHANGE_MAP_TEXT_CHARS = 80
_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)
_DOCUMENT_START = re.compile(rb"<(?:html|head|body)(?=[\s/>])", re.IGNORECASE)
_DOCTYPE = re.compile(rb"<!doctype[^>]*>", re.IGNORECASE)
_HTML_START = re.compile(rb"<html(?:\s[^>]*)?>", re.IGNORECASE)
_HEAD_START = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)
_SKIPPABLE = re.compile(rb"\s+|<!--.*?-->|<\?.*?>", re.DOTALL)
_DOCUMENT_END_TAG = re.compile(rb"</(?:body|html)\s*>", re.IGNORECASE)
# A raw text element whose text may hold an end tag's bytes: found by its start tag, and ended
# where `.*?</\1\s*>` would end it (`_raw_text_blocks`).
_RAW_TEXT_START = re.compile(rb"<(script|style|textarea|title)\b[^>]*>", re.IGNORECASE)
_RAW_TEXT_NAMES = (b"script", b"style", b"textarea", b"title")  # (its names: where it may match)
# Where `_without_document_end_tags` looks: the document's end tags and the raw text elements'
# start and end tags (`_tag_starts`: what follows a `<`).
_RAW_TEXT_TAGS = (*_RAW_TEXT_NAMES, *(b"/" + name for name in _RAW_TEXT_NAMES))
_END_TAGS_AND_RAW_TEXT = (b"/body", b"/html", *_RAW_TEXT_TAGS)
_END_TAG_CLOSE = re.compile(rb"\s*>")
_TAG_OR_COMMENT = re.compile(rb"<!--|<(/?)([A-Za-z][A-Za-z0-9-]*)")
_RAW_TEXT = frozenset({b"script", b"style", b"title", b"noscript", b"template", b"textarea"})
_RAW_TEXT_END = {name: re.compile(rb"</" + name + rb"\s*>", re.IGNORECASE) for name in _RAW_TEXT}
_META_CHARSET = re.compile(rb"<meta\b[^>]*charset[^>]*>", re.IGNORECASE)
# The bytes after the prolog a <meta charset> that deferred scripts follow is looked for in.
_CHARSET_WINDOW = 1024
# (a whitespace character at a time: `\s+` in the loop split n spaces 2^n ways before a match
# failed, as on a <title> between indented <meta> tags and the charset)
_ONLY_VOID_HEAD_TAGS = re.compile(rb"(?:\s|<(?:meta|link)\b[^>]*>)*", re.IGNORECASE)
_HEAD_TAGS = frozenset(
    {b"meta", b"link", b"title", b"style", b"script", b"base", b"noscript", b"template"}
)


_PLACES_KEPT = 4  # values a frozen document keeps the places of (`_places_of`)


@dataclass(frozen=True)
class FrozenDocument:
    """A document part-way through its shifts, as bytes and state: resumed without a parse
    (`HtmlDocument.thaw`), so shifts that come after need not see a tree again."""

    body: bytes  # the tree as serialized so far, before any markup is spliced into <head>
    encoding: str
    head_markup: tuple[str, ...]
    early_markup: tuple[str, ...]
    notes: dict[str, object]
    changes: list[dict[str, object]]
    runtime: dict[str, object]
    changed: bool
    # Where `to_bytes` splices into `body`: the start of <head> and the end of it (found by a
    # scan of the head, once, instead of at every load of the page); None if not ASCII.
    splice_points: tuple[int, int] | None = None
    # What a shift replaced in the page's bytes wherever it occurs (`replace_bytes`: a
    # deployment's target origin), found there or not.
    replaced: tuple[bytes, ...] = ()
    # What a shift looked for in the page's bytes before it asked the tree (`holds_bytes`:
    # relayout's list markers, relabel's labels), found there or not.
    looked_for: tuple[bytes, ...] = ()
    # The `data-*` attributes a shift may have decided by the values of
    # (`HtmlDocument.data_attributes_tested`); None: any.
    data_attributes_tested: frozenset[str] | None = None

    @functools.cached_property
    def state_json(self) -> str:
        """The notes, change map and runtime rules as one JSON text, made once (a page loaded
        again with new per-request values swaps them in there)."""
        return json.dumps([self.notes, self.changes, self.runtime])

    @functools.cached_property
    def _words_held(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """The words of the strings this document's state (but its element paths, whose
        indexes are no page's text) and markup hold: where a page's text may be copied (a
        control's text in the change map); the word each string as long as the change map's
        texts are cut ends in (a text cut short may end in a word's start); and the words of
        the state's keys (the labels relabel moves)."""
        strings = [*self.head_markup, *self.early_markup]
        keys: list[str] = []
        pending: list[object] = [self.notes, self.changes, self.runtime]
        while pending:
            value = pending.pop()
            if isinstance(value, str):
                strings.append(value)
            elif isinstance(value, dict):
                keys.extend(key for key in value if isinstance(key, str))
                pending.extend(item for key, item in value.items() if key != "path")
            elif isinstance(value, list):
                pending.extend(value)
        cut = (string for string in strings if len(string) == CHANGE_MAP_TEXT_CHARS)
        ends = (_LAST_WORD.search(string) for string in cut)
        return (
            frozenset(_WORD.findall(" ".join(strings))),
            frozenset(end.group() for end in ends if end is not None),
            frozenset(_WORD.findall(" ".join(keys))),
        )

    @functools.cached_property
    def _words_joined(self) -> tuple[str, str]:
        """The words of the state and markup, and those of the state's keys, each as one
        text (`_words_held`): where a part of a word is looked for."""
        words, _, key_words = self._words_held
        return " ".join(words), " ".join(key_words)

    def _holds(self, number: Number, page: bytes) -> bool:
        """Whether this document's state or markup may hold the number's word, or depend on
        it: the old word, or a string that ends in its start up to a digit that differs (a
        text cut short), or a key's word that is the old or the new one (a label relabel
        moves, `Step 1`, that the page's text may become). A word next to a tag, a comment or
        a character reference in the `page` may be a part of one of the text's words, which
        reads it with what is on the other side (`Inbox<span>31</span>`, `Save<br>2 files`,
        `&#65;2` are `Inbox31`, `Save2`, `A2`): then a word that holds it is looked for."""
        words, ends, key_words = self._words_held
        before, after = number.before.decode(), number.after.decode()
        differs = next(
            (at for at, (a, b) in enumerate(zip(before, after)) if a != b),  # noqa: B905
            min(len(before), len(after)),  # (`9` then `95`: the new digits are past the old)
        )
        cuts = range(differs + 1, len(before))
        end = number.position + len(number.before)
        if (
            page[number.position - 1 : number.position] in _JOINED_AFTER
            or page[end : end + 1] in _JOINED_BEFORE
        ):
            joined, keys_joined = self._words_joined
            return (
                before in joined
                or before in keys_joined
                or after in keys_joined
                or any(word.endswith(before[:cut]) for word in ends for cut in cuts)
            )
        if before in words or before in key_words or after in key_words:
            return True
        return any(before[:cut] in ends for cut in cuts)

    @functools.cached_property
    def _places(self) -> dict[bytes, array.array[int]]:
        """A value -> where it is in this body (`_places_of`)."""
        return {}

    def _places_of(self, value: bytes) -> array.array[int]:
        """Where `value` is in this body (`volatile.places_of`), kept for the page the next
        loads are swapped from: each load of it swaps a nonce's new value in at the same
        places, where the body was scanned to count the value and again to replace it. (How
        often the page holds it is kept with the page's reading: `volatile.count_in`.)"""
        places = self._places.get(value)
        if places is None:
            if len(self._places) >= _PLACES_KEPT:  # (the page's first value, mostly: one)
                self._places.clear()
            places = self._places[value] = places_of(self.body, value)
        return places

    @property
    def places_bytes(self) -> int:
        """What the places kept for the next loads hold (`_places_of`): the cache counts it."""
        return sum(map(sys.getsizeof, list(self._places.values())))

    def with_values_swapped(self, swaps: Swaps, raw: bytes) -> FrozenDocument | None:
        """This document as the same shifts leave a page that differs from its `raw` only by
        `swaps` (shifts.volatile): each per-request value swapped in wherever it is, each
        number spliced in at its place. None where the shifts did not carry each through as
        the page had it (as often, and as the same bytes), so the page must be shifted
        afresh. Only in an encoding whose ASCII bytes are always their characters (a value
        or a number found in the bytes is then one in the text: in Shift_JIS `ア317` is the
        bytes of `A317`, in GB18030 a digit byte is a part of `À`)."""
        if not is_ascii_transparent(self.encoding):
            return None
        searched = self.replaced + self.looked_for
        if searched and not _apart_from(searched, swaps, raw):
            return None
        if not _read_alike(swaps, raw):
            return None
        body = self.body
        for before, after in swaps.values.items():
            if body is self.body and before:  # (the first value: its places, read once)
                places = self._places_of(before)
                if len(places) != count_in(raw, before) or contains(body, after):
                    return None
                body = replaced_at(body, places, len(before), after)
                continue
            if body.count(before) != raw.count(before) or contains(body, after):
                return None
            body = body.replace(before, after)
        points = self.splice_points
        if swaps.numbers:
            spliced = self._numbers_spliced(body, swaps, raw)
            if spliced is None:
                return None
            body, points = spliced
        text = {before.decode(): after.decode() for before, after in swaps.values.items()}
        # (this document's state JSON, made once, is what every later swap reads: a page's
        # change map holds thousands of entries; values keep their lengths, and the splice
        # points move by the numbers' changes of length)
        return dataclasses.replace(replace_values(self, text, body), splice_points=points)

    def _numbers_spliced(
        self, body: bytes, swaps: Swaps, raw: bytes
    ) -> tuple[bytes, tuple[int, int] | None] | None:
        """`body` with each of the `swaps`' numbers spliced in where the page had it, and the
        splice points (`splice_points`) moved by the numbers' changes of length: found by the
        text around it in the page (`_NUMBER_CONTEXT` each side at most, within its text; the
        page's values swapped in), which must be once in the page and once in `body`. None
        where it is not (the shifts changed the text), or where this document's state or
        markup holds the old word (a control's text in the change map: shifted afresh, it
        would hold the new one)."""
        if any(self._holds(number, raw) for number in swaps.numbers):
            return None
        tested = self.data_attributes_tested
        if any(
            number.attribute is not None
            and number.attribute.startswith(b"data-")
            and (tested is None or number.attribute.decode() in tested)
            for number in swaps.numbers
        ):
            return None  # (a selector may match the element by the value: `[data-step="3"]`)
        page = Swaps(swaps.values).applied_to(raw)  # (the numbers spliced in one by one)
        points = self.splice_points
        for moved, number in swaps.numbers_moved():
            before, after = number.before, number.after
            position, text_start, text_end = (
                number.position + moved,
                number.text_start + moved,
                number.text_end + moved,
            )
            start = max(text_start, position - _NUMBER_CONTEXT)
            end = min(text_end, position + len(before) + _NUMBER_CONTEXT)
            if number.attribute is not None:  # (what the serializer writes as the page has it)
                start, end = _plain_around(page, position, position + len(before), start, end)
            context = page[start:end]
            if page.count(context) != 1 or body.count(context) != 1:
                return None
            at = body.find(context) + position - start
            if number.attribute is not None and (
                attribute_in_serialized_tag(body, at) != number.attribute
            ):
                return None  # (the parser dropped it: the context is another text's, written
                # as it is in the tree and as a reference in the page, `/s/&#55;/`)
            body = body[:at] + after + body[at + len(before) :]
            page = page[:position] + after + page[position + len(before) :]
            if points is not None:
                longer = len(after) - len(before)
                points = (
                    points[0] + longer if points[0] > at else points[0],
                    points[1] + longer if points[1] > at else points[1],
                )
        if points is not None and points[0] != _early_point(body):
            return None  # (a number of another length in a head's `<link>` moved a `<meta
            # charset>` past the 1024 bytes after the prolog that deferred scripts follow, or in)
        return body, points


def _plain_around(page: bytes, start: int, end: int, low: int, high: int) -> tuple[int, int]:
    """`start`..`end` widened, within `low`..`high`, over the bytes around it that a tag's
    serialization writes as the page has them (`_PLAIN`): not a quote, which it may write as
    a reference or bare, nor a reference's `&` or `;`, nor a line's end."""
    while start > low and page[start - 1] in _PLAIN:
        start -= 1
    while end < high and page[end] in _PLAIN:
        end += 1
    return start, end


_PLAIN = frozenset(WORD_BYTES | frozenset(b" /.:,!?()[]{}+*=~@$%^|#"))


def _read_alike(swaps: Swaps, old: bytes) -> bool:
    """Whether the shifts read the page the `swaps` tell from `old` as they read `old` where
    they read its bytes, not its tree (`_read_of_the_bytes`). (Values keep their lengths: with
    no number, only the first bytes are read, and are swapped.)"""
    hidden = any(number.attribute == b"value" for number in swaps.numbers)
    if not swaps.numbers:
        old = old[: _FIRST_BYTES_READ + max(map(len, swaps.values), default=0)]
    return _read_of_the_bytes(swaps.applied_to(old), hidden) == _read_of_the_bytes(old, hidden)


_FIRST_BYTES_READ = 4096


def _read_of_the_bytes(page: bytes, hidden: bool) -> tuple[object, ...]:
    """What the shifts read of a page's bytes, not its tree, that a swap may change: the
    charset a <meta> in the first 1024 bytes names (`detect_encoding`: the page's encoding),
    and whether a doctype is in the first 4096 (`is_fragment`, `_without_invented_doctype`:
    libxml2's doctype kept or dropped), which a number of another length before them moves
    past the cut or into it, and a number or a value in them makes another (`iso-8859-2`
    in a comment, a script, a data value); where a hidden input's word changes (any word:
    `<input type="hidden" value="<body ...">`), whether a document's start tag is anywhere
    (`is_fragment`) too. (In an encoding a swap is made in, the bytes are ASCII's as these
    patterns read them.)"""
    read = meta_charset(page), _DOCTYPE.search(page[:_FIRST_BYTES_READ]) is not None
    return (*read, _DOCUMENT_START.search(page) is not None) if hidden else read


def _apart_from(strings: tuple[bytes, ...], swaps: Swaps, old: bytes) -> bool:
    """Whether no occurrence of any of `strings` (what a shift replaced in the page's bytes,
    `replace_bytes`) overlaps a byte the `swaps` change, in the old page or in the new: the
    shift then replaces the same occurrences in both. (A value or a number may complete one,
    `http://target.abcd1234` then `http://target.test1234`, or end one, `:8080` then `:8081`
    after a target's host: a whole shift maps it back, and counts it in its notes.)"""
    new = swaps.applied_to(old)
    in_old = [(m.start(), m.end()) for b in swaps.values for m in re.finditer(re.escape(b), old)]
    in_new = [
        (m.start(), m.end()) for a in swaps.values.values() for m in re.finditer(re.escape(a), new)
    ]
    for moved, number in swaps.numbers_moved():
        in_old.append((number.position, number.position + len(number.before)))
        in_new.append((number.position + moved, number.position + moved + len(number.after)))
    return not any(
        page.find(string, max(0, start - len(string) + 1), end + len(string) - 1) >= 0
        for string in strings
        for page, spans in ((old, in_old), (new, in_new))
        for start, end in spans
    )


_WORD = re.compile(r"[A-Za-z0-9_-]+")
# What ends right before a word, and starts right after it, that the text may read with more
# of a word beside it: the end of a tag, a comment or a character reference, the start of a
# tag, a comment or a reference.
_JOINED_AFTER = frozenset({b">", b";"})
_JOINED_BEFORE = frozenset({b"<", b"&"})
_LAST_WORD = re.compile(r"[A-Za-z0-9_-]+\Z")
# The bytes each side of a number that find where a page's number is in its shift: enough to
# be unique (`"wgBackendResponseTime":372});`), and few enough that a shift's change near it
# (a class renamed before a clock's text) is rare.
_NUMBER_CONTEXT = 24


def replace_values(frozen: FrozenDocument, text: dict[str, str], body: bytes) -> FrozenDocument:
    """The frozen state's strings (markup, notes, change map, runtime rules) with `text`'s
    values swapped in: a page's nonce is in its change map's locators, say. (Through JSON, in
    C, and only where a value is there at all: a big page's change map holds thousands.)
    `body`: the frozen body with the values swapped in already."""

    def swapped_text(value: str) -> str:
        for before, after in text.items():
            value = value.replace(before, after)
        return value

    state = frozen.state_json
    if any(before in state for before in text):
        notes, changes, runtime = json.loads(swapped_text(state))
    else:
        notes, changes, runtime = frozen.notes, frozen.changes, frozen.runtime
    return dataclasses.replace(
        frozen,
        body=body,
        head_markup=tuple(swapped_text(markup) for markup in frozen.head_markup),
        early_markup=tuple(swapped_text(markup) for markup in frozen.early_markup),
        notes=notes,
        changes=changes,
        runtime=runtime,
    )


class HtmlDocument:
    def __init__(self, raw: bytes, header_charset: str | None = None) -> None:
        self.original = raw
        self.encoding = detect_encoding(raw, header_charset)
        self._frozen_changed = False
        self._tree: etree._Element | None = None
        self._tree_changed = False
        self._bytes_edits: list[tuple[bytes, bytes]] = []
        self._replaced: list[bytes] = []  # (every string `replace_bytes` was asked for)
        self._looked_for: list[bytes] = []  # (every string `holds_bytes` was asked for)
        self._head_markup: list[str] = []
        self._early_markup: list[str] = []  # deferred scripts: at the start of <head>
        # What each shift did on this page (shift name -> summary), recorded as an event.
        self.notes: dict[str, object] = {}
        # The page's change map: each element a shift changed, its locators before and after.
        self.changes: list[dict[str, object]] = []
        # Changed elements whose after-paths a later shift may have moved (taken again when
        # the document is settled), and those recorded since the tree was last asked for
        # (where the shift that recorded them left them: no shift has had the tree since).
        self._changed_elements: list[tuple[etree._Element, dict[str, object]]] = []
        self._recorded: list[tuple[etree._Element, dict[str, object]]] = []
        # Results shifts share on this page (e.g. the protected elements), computed once.
        self.cache: dict[str, object] = {}
        # Configuration for the client runtime, filled by shifts; one runtime tag carries it all.
        self.runtime: dict[str, object] = {}
        # A thawed document's splice points, valid while its body is the frozen one.
        self._splice_points: tuple[bytes, int, int] | None = None
        # The `data-*` attributes a shift's selectors (or the assets' it asked) test, whose
        # values it may have decided by; None: not known, any. A number in another `data-*`
        # value is spliced into a next load (`FrozenDocument.with_values_swapped`).
        self.data_attributes_tested: frozenset[str] | None = frozenset()

    @functools.cached_property
    def is_fragment(self) -> bool:
        """Whether the markup is a fragment, not a page (`is_fragment`): asked by the drift and
        the serialization, read once."""
        return is_fragment(self.original, self.encoding)

    @property
    def changed(self) -> bool:
        return (
            self._frozen_changed
            or self._tree_changed
            or bool(self._head_markup)
            or bool(self._early_markup)
            or bool(self._bytes_edits)
        )

    def freeze(self) -> FrozenDocument:
        """The document so far; serializes the tree (once) if a shift changed it."""
        self._settle_changes()
        body = self._body_so_far()
        points = (
            (_early_point(body), _insertion_point(body))
            if is_ascii_compatible(self.encoding)
            else None
        )
        frozen = FrozenDocument(
            body=body,
            encoding=self.encoding,
            head_markup=tuple(self._head_markup),
            early_markup=tuple(self._early_markup),
            notes=_copied(self.notes),
            # The entries themselves, not copies (thousands on a big page: a deep copy cost
            # half as much as the shift): settled above, no shift writes to them again, and
            # the document is not shifted further once frozen (`thaw` goes on from a copy).
            changes=list(self.changes),
            runtime=_copied(self.runtime),
            changed=self.changed,
            splice_points=points if points is not None and points[0] <= points[1] else None,
            replaced=tuple(self._replaced),
            looked_for=tuple(self._looked_for),
            data_attributes_tested=self.data_attributes_tested,
        )
        # Its state is never changed again (above; the swaps make new values), and is kept
        # with the page in the shifted-page cache: Python's collector, which would walk each
        # of its containers once at its next run and again at every full one, need not see
        # them (the page's change map: three dicts and two lists a changed control).
        if native.untrack is not None:
            native.untrack((frozen.notes, frozen.changes, frozen.runtime))
        return frozen

    @classmethod
    def thaw(cls, frozen: FrozenDocument) -> HtmlDocument:
        """A document that goes on from `frozen` (its own copies of the state: shifts that
        come after change this one, never the frozen one)."""
        doc = cls(frozen.body, frozen.encoding)
        doc.encoding = frozen.encoding
        doc._frozen_changed = frozen.changed
        doc._head_markup = list(frozen.head_markup)
        doc._early_markup = list(frozen.early_markup)
        doc.notes = _copied(frozen.notes)
        # The frozen change entries are shared, not copied (hundreds on a big page): only the
        # entries a document recorded itself are ever written to (their after-paths).
        doc.changes = list(frozen.changes)
        doc.runtime = _copied(frozen.runtime)
        doc._replaced = list(frozen.replaced)
        doc._looked_for = list(frozen.looked_for)
        doc.data_attributes_tested = frozen.data_attributes_tested
        if frozen.splice_points is not None:
            doc._splice_points = (frozen.body, *frozen.splice_points)
        return doc

    @property
    def tree(self) -> etree._Element:
        """The parsed document (parsed once, on first use). Call mark_changed() after edits."""
        # Whoever asks for the tree may move what was recorded so far (a relayout after the
        # drift): those paths are taken again once every shift has run.
        self._changed_elements += self._recorded
        self._recorded = []
        if self._tree is None:
            source = _without_document_end_tags(self._apply_bytes_edits(self.original))
            root = parse_html(source, self.encoding)
            self._tree = root
        return self._tree

    def mark_changed(self) -> None:
        self._tree_changed = True

    def record_changes(self, recorded: list[tuple[etree._Element, dict[str, object]]]) -> None:
        """Add each element's change (with `after.path`, where the element is now) to the
        change map, in order. The path is taken again once every shift has run, where the
        element finally is, if a shift asked for the tree after these were recorded (only one
        that has it can move it: a page's thousands of paths are not taken twice when the drift
        is the last to have it)."""
        self.changes.extend([change for _, change in recorded])
        self._recorded.extend(recorded)

    def _settle_changes(self) -> None:
        if self._tree is None:
            return
        tree = self._tree.getroottree()
        for element, change in self._changed_elements:
            after = change["after"]
            assert isinstance(after, dict)
            after["path"] = tree.getpath(element)
        self._changed_elements = []

    def inject_head(self, markup: str) -> None:
        """Add markup at the end of <head> (or the start of <body>, or the end of the document):
        where a stylesheet comes after the page's own.

        Markup is inserted in order of calls and must be ASCII so it splices into any
        ASCII-compatible encoding unchanged.
        """
        self._head_markup.append(markup)

    def inject_deferred_script(self, markup: str) -> None:
        """Add a deferred <script> at the start of <head> (after a <meta charset> that opens
        it): a deferred script runs after parsing wherever it stands, so its place needs no
        scan of the head. ASCII only, like `inject_head`."""
        self._early_markup.append(markup)

    def replace_bytes(self, old: bytes, new: bytes) -> int:
        """Replace every occurrence of an ASCII byte string (e.g. an origin in absolute URLs).

        Returns how many occurrences the original holds; zero leaves the document unchanged.
        """
        self._replaced.append(old)
        if is_ascii_compatible(self.encoding):
            count = self.original.count(old)
        else:
            count = self.original.decode(self.encoding, "replace").count(old.decode("ascii"))
        if count:
            self._bytes_edits.append((old, new))
        return count

    def holds_bytes(self, needle: bytes) -> bool:
        """Whether the page's bytes hold `needle` (what a shift looks for before it asks the
        tree, to skip the parse where it is in no text): kept, found or not, so that a next
        load whose swaps make or unmake an occurrence is shifted afresh (a hidden input's
        `<nav`, an entity-written button's label in its value)."""
        self._looked_for.append(needle)
        return needle in self.original

    def start_is_settled(self) -> bool:
        """Whether this document, made of a page's first bytes, serves as the start of what the
        whole page would (`to_bytes`), the rest following unchanged: nothing was parsed or
        replaced, only deferred scripts go in (at the early point, `_early_point`), the
        encoding is ASCII-compatible, and what places them is all in these bytes: the
        charset's window after the prolog, and the end of whatever stopped the prolog (a
        `<!--` with its `-->`, a tag with its `>`), which more bytes could otherwise complete.
        A streamed page's start is shifted so (`proxy.shifted_start`)."""
        if (
            self._tree is not None
            or self._bytes_edits
            or self._head_markup
            or not is_ascii_compatible(self.encoding)
        ):
            return False
        body = self.original
        start = _after_prolog(body)
        if start + _CHARSET_WINDOW > len(body):
            return False
        if body.startswith(b"<!--", start):
            return body.find(b"-->", start + 4) >= 0
        return not body.startswith(b"<", start) or body.find(b">", start) >= 0

    def to_bytes(self) -> bytes:
        """The document as it should be served; the original bytes when nothing changed."""
        if not self.changed:
            return self.original
        body = self._body_so_far()
        known = self._splice_points
        if known is not None and known[0] is body:  # (the frozen body: its points are known)
            _, early_at, head_at = known
            early = "".join(self._early_markup).encode("ascii", "xmlcharrefreplace")
            head = "".join(self._head_markup).encode("ascii", "xmlcharrefreplace")
            return b"".join((body[:early_at], early, body[early_at:head_at], head, body[head_at:]))
        if self._head_markup:
            body = _splice(body, "".join(self._head_markup), self.encoding, _insertion_point)
        if self._early_markup:
            body = _splice(body, "".join(self._early_markup), self.encoding, _early_point)
        return body

    def _body_so_far(self) -> bytes:
        self._settle_changes()
        if self._tree is not None and self._tree_changed:
            body = _without_invented_doctype(
                _serialize(
                    self._tree,
                    self.encoding,
                    self.is_fragment,
                    _valued_booleans(_as_ascii_markup(self.original, self.encoding)),
                ),
                self.original,
                self.encoding,
            )
            bom = _bom_of(self.original)
            if bom and not body.startswith(bom):
                # libxml2 writes no BOM, and the BOM is what the page was decoded by: without
                # it a browser reads the bytes by a <meta charset> that says otherwise, or by
                # its guess (windows-1252), and every non-ASCII label comes out garbled.
                body = bom + body
            return body
        return self._apply_bytes_edits(self.original)

    def _apply_bytes_edits(self, body: bytes) -> bytes:
        if not self._bytes_edits:
            return body
        if not is_ascii_compatible(self.encoding):
            text = body.decode(self.encoding, "replace")
            for old, new in self._bytes_edits:
                text = text.replace(old.decode("ascii"), new.decode("ascii"))
            return text.encode(self.encoding, "xmlcharrefreplace")
        for old, new in self._bytes_edits:
            body = body.replace(old, new)
        return body


# libxml2's HTML serializer percent-escapes URI attributes (href, src, action, a@name): a link
# to "/a b" would come out as "/a%20b", a different byte string for the same task. Values it
# would touch are swapped for placeholders while serializing and put back verbatim.
_URI_ATTRIBUTES = etree.XPath("//*[@href or @src or @action] | //a[@name]")
_URI_SAFE = re.compile(r"[A-Za-z0-9\-_.!~*'()@/:=?;#%&,+<>]*")
_MARKER_SALT = "5f3a9c1e"  # (any fixed word: a page holding the prefix gets the next one)
# It also writes HTML 4's boolean attributes bare, their values dropped: `selected="selected"`
# came out `selected`, which a script reads as "": Redmine's issue form sets each select to its
# `option[selected=selected]`, and found none (its tracker and status blank, on the page and
# after a tracker change). Those with a value are written under a placeholder name each, their
# own put back. libxml2 reads a bare one as valued with its name (`disabled="disabled"`), so a
# value that is the attribute's name is written only for an attribute the page writes with one.
# (HTML 4's others, `compact`, `nowrap`, ..., are written bare as before: no script of this
# century reads their values, and each name looked for costs a pass over the page.)
_READ_BOOLEANS = ("checked", "selected", "disabled", "readonly", "multiple", "defer")
# `name=` and a value that is not empty, its name's literal first (a pattern that starts with a
# class of characters is tried at every byte: 2 ms per name on a 180 KB page, 0.1 ms so).
_READ_BOOLEAN_NAMES = tuple(name.encode() for name in _READ_BOOLEANS)
_VALUED = {
    name: re.compile(rf"""{name}=(?:"[^"]|'[^']|[^\s"'>])""".encode()) for name in _READ_BOOLEANS
}
_BEFORE_AN_ATTRIBUTE = frozenset(b" \t\n\r\f\"'/")


def _written(root: etree._Element, encoding: str, fragment: bool) -> bytes:
    """The tree as bytes; of a fragment, what is in the `<head>` and `<body>` libxml2 put
    around it, in order, without them (`is_fragment`)."""
    if not fragment:
        return cast(bytes, etree.tostring(root.getroottree(), method="html", encoding=encoding))
    parts = []
    for container in (root.find("head"), root.find("body")):
        if container is None:
            continue
        parts.append((container.text or "").encode(encoding, "xmlcharrefreplace"))
        parts += [
            cast(bytes, etree.tostring(child, method="html", encoding=encoding))
            for child in container
        ]
    return b"".join(parts)


def is_fragment(original: bytes, encoding: str) -> bool:
    """Whether the markup is a fragment (what an XHR loads into a page: a `<tr>`, a `<li>`),
    not a page: no doctype, and no `<html>`, `<head>` or `<body>`. libxml2 puts one around it, and a
    script inserting what comes back reads its first tag (jQuery parses `<tr>...` in a table,
    `<html>...` in a `<div>`, where a row's tags are dropped: WordPress's Quick Edit)."""
    markup = _as_ascii_markup(original, encoding)
    return _DOCUMENT_START.search(markup) is None and not _DOCTYPE.search(markup[:4096])


def _as_ascii_markup(raw: bytes, encoding: str) -> bytes:
    """Bytes whose tags are ASCII's, as the patterns here read them: `raw` itself, or, in an
    encoding whose tags' bytes are not ASCII's (UTF-16), its text in UTF-8."""
    if is_ascii_compatible(encoding):
        return raw
    return raw.decode(encoding, "replace").encode("utf-8")


def _valued_booleans(markup: bytes) -> frozenset[str]:
    """Those of the boolean attributes scripts read (`_READ_BOOLEANS`) that the markup (its
    tags in ASCII) writes with a value that is not empty somewhere (`name="..."`; `name =` is
    taken for bare, and so is `name=""`, which a browser reads as a bare one), in a tag: not
    in a script's, a style's or a comment's text (`var disabled=true;`), nor in text. A
    search for each in C first: a pattern of them all cost half a parse."""
    found = [name.decode() for name in _assigned_names(markup, _READ_BOOLEAN_NAMES)]
    if not found:
        return frozenset()
    lowered = markup.lower()
    # (Most pages that hold one hold it in a script, `t.defer=...`, `el.disabled=true`: after
    # no byte an attribute can follow, and no comment a tag's attributes could close around,
    # none is an attribute, and the page's raw texts and comments are not taken out to see.)
    if not any(
        _may_be_an_attribute(lowered, match.start())
        for name in found
        for match in _VALUED[name].finditer(lowered)
    ):
        return frozenset()
    tags = _COMMENT.sub(b"", _without_raw_texts(lowered))
    return frozenset(
        name
        for name in found
        if any(_is_an_attribute(tags, match.start()) for match in _VALUED[name].finditer(tags))
    )


def _without_raw_texts(lowered: bytes) -> bytes:
    r"""The lowered markup with each raw text element's text taken out, its tags kept
    (`<script defer="defer">`). Its definition: the pattern
    `(<(script|style|textarea|title)\b[^>]*>).*?(</\2\s*>)` (DOTALL) replaced by its first
    and last groups. Found as that pattern finds them (`_raw_text_blocks`), where it can match
    (`_tag_starts`, in C), not tried at every `<` of the page (a third of a ms of a 180 KB
    page's first load; a tenth so)."""
    kept, position = [], 0
    for _, opened, closing, end in _raw_text_blocks(lowered, _tag_starts(lowered, _RAW_TEXT_TAGS)):
        kept += [lowered[position:opened], lowered[closing:end]]
        position = end
    kept.append(lowered[position:])
    return b"".join(kept)


_COMMENT = re.compile(rb"<!--.*?-->", re.DOTALL)
_QUOTED = re.compile(rb"\"[^\"]*\"|'[^']*'")
_TAG_LOOK_BACK = 4096  # a tag longer than this before the attribute: not judged (bare)


def _may_be_an_attribute(markup: bytes, at: int) -> bool:
    """Whether what starts at `at` could be an attribute once the markup's raw texts and
    comments are taken out (`_is_an_attribute` of what is left): what comes before it is a
    byte an attribute follows, or a comment's end, which taking the comment out replaces by
    what came before the comment."""
    return at > 0 and (markup[at - 1] in _BEFORE_AN_ATTRIBUTE or markup.endswith(b"-->", 0, at))


def _is_an_attribute(markup: bytes, at: int) -> bool:
    """Whether what starts at `at` is an attribute of a start tag: after a space, a quote or a
    `/`, inside a tag (after a `<` and a letter, and no `>` between but in a quoted value)."""
    if at == 0 or markup[at - 1] not in _BEFORE_AN_ATTRIBUTE:
        return False
    start = markup.rfind(b"<", max(0, at - _TAG_LOOK_BACK), at)
    if start < 0 or not markup[start + 1 : start + 2].isalpha():
        return False
    between = markup[start:at]
    return b">" not in between or b">" not in _QUOTED.sub(b"", between)


def _with_any_of(root: etree._Element, names: frozenset[str]) -> list[etree._Element]:
    """The elements of `root`'s document that have any of the attributes `names`, in
    document order. In C where it can be (`shifts.native`: the walk that
    `selectors.with_any_attributes` makes); libxml2's XPath tests every element's attributes
    once per name, a third of what serializing a 180 KB page costs."""
    top = root.getroottree().getroot()
    below = native.with_any_attributes(top, names) if native.with_any_attributes else None
    if below is None:
        return cast(list[etree._Element], _any_of_query(names)(root))
    return [top, *below[0]] if not names.isdisjoint(top.keys()) else below[0]


@functools.lru_cache(maxsize=64)
def _any_of_query(names: frozenset[str]) -> etree.XPath:
    return etree.XPath("//*[" + " or ".join(f"@{name}" for name in sorted(names)) + "]")


def _links_to_keep(root: etree._Element) -> list[tuple[etree._Element, str, str]]:
    """(element, name, value) for each link of the document (an `href`, `src` or `action`, an
    anchor's `name`) whose value libxml2 would escape, in document order. In C where it can be
    (`shifts.native`): a page's every link is read, and most are written as they are."""
    return native.either(native.links_to_keep, _links_to_keep_read, root)


def _links_to_keep_read(root: etree._Element) -> list[tuple[etree._Element, str, str]]:
    """`_links_to_keep` in Python: its definition, which the C one follows."""
    found = []
    for element in cast(list[etree._Element], _URI_ATTRIBUTES(root)):
        for name in ("href", "src", "action", "name"):
            value = element.get(name)
            if value is None or (name == "name" and element.tag != "a"):
                continue
            if not _URI_SAFE.fullmatch(value):
                found.append((element, name, value))
    return found


def _serialize(
    root: etree._Element,
    encoding: str,
    fragment: bool = False,
    valued_booleans: frozenset[str] = frozenset(),
) -> bytes:
    """The tree as bytes, its attributes' values as they are: link values libxml2 would
    escape, and the values of the boolean attributes the page writes with one
    (`valued_booleans`), which it would drop, written under placeholders and put back."""
    written_as = libxml2_encoding(encoding)
    kept: list[tuple[etree._Element, str, str]] = []
    for element, name, value in _links_to_keep(root):
        if not settable(element, [(name, value)]):
            # lxml cannot put it back as it came: the same request in what it can set (a
            # control character encoded, `\x01 ` at an end dropped, as a browser does); an
            # anchor's name, no URL, as libxml2 writes it.
            value = as_requested(value)
            if name == "name" or not settable(element, [(name, value)]):
                continue
            element.set(name, value)
            if _URI_SAFE.fullmatch(value):
                continue
        kept.append((element, name, value))
    # (each element with a boolean attribute's value, and which: one placeholder name per
    # attribute, as an element has each once)
    booleans: list[tuple[etree._Element, list[str]]] = []
    if valued_booleans:
        for element in _with_any_of(root, valued_booleans):
            names = [name for name in valued_booleans if element.get(name)]
            if names and settable(element, element.items()):  # (each set anew, renamed)
                booleans.append((element, names))
    if not kept and not booleans:  # (most pages: nothing to keep, one serialization)
        return _written(root, written_as, fragment)
    placed = len(kept) + sum(len(names) for _, names in booleans)
    # The placeholders' prefix must occur nowhere else in the page: one the serialization holds
    # more often than it was put in is taken again with the next prefix.
    for attempt in itertools.count():
        marker = f"x-keep-{attempt}-{_MARKER_SALT}"
        if any(
            element.get(f"{marker}-{name}") is not None
            for element, names in booleans
            for name in names
        ):
            continue  # (an attribute of the page's named as a placeholder: merged into it, lost)
        for index, (element, name, _) in enumerate(kept):
            element.set(name, f"{marker}-{index}")
        for element, names in booleans:
            _renamed_attributes(element, {name: f"{marker}-{name}" for name in names})
        body = _written(root, written_as, fragment)
        for element, name, value in kept:
            element.set(name, value)
        for element, names in booleans:
            _renamed_attributes(element, {f"{marker}-{name}": name for name in names})
        if body.count(marker.encode(encoding)) == placed:
            break
    for name in valued_booleans:
        body = body.replace(f"{marker}-{name}=".encode(encoding), f"{name}=".encode(encoding))
    for index, (_, _, value) in reversed(list(enumerate(kept))):
        original = html.escape(value, quote=True).encode(encoding, "xmlcharrefreplace")
        body = body.replace(f"{marker}-{index}".encode(encoding), original)
    return body


def settable(
    element: etree._Element, attributes: Iterable[tuple[str | bytes, str | bytes]]
) -> bool:
    """Whether lxml sets these attributes again as they are: it refuses a name or a value with
    a character XML forbids, which libxml2's HTML parser keeps (`data-\x01`, `href="/a\x01"`).
    Such a one is not taken out and put back, which would raise with the page's attributes
    half set: a link is written as the same request in what lxml can set, a boolean bare."""
    attributes = list(attributes)
    # (What lxml refuses is none of these: most attributes ask no more. A loop, not `all()` of
    # a generator: asked of each class value the drift makes, hundreds a page, 0.6 the cost.)
    for name, value in attributes:
        if not (isinstance(name, str) and isinstance(value, str) and (name + value).isprintable()):
            break
    else:
        return True
    scratch = element.makeelement("x")  # (in the page's document: an HTML one's rules)
    try:
        for name, value in attributes:
            scratch.set(name, value)
    except ValueError:
        return False
    return True


def _renamed_attributes(element: etree._Element, renames: dict[str, str]) -> None:
    """The element's attributes renamed (`renames`: old name to new), each in its place among
    the others (their order is the page's)."""
    items = element.items()
    element.attrib.clear()
    for name, value in items:
        element.set(renames.get(str(name), name), value)


def _without_document_end_tags(body: bytes) -> bytes:
    """The page without its </body> and </html> end tags (outside scripts and styles).

    libxml2 drops everything after </html>, where old templates often put scripts and markup
    that browsers still render into the body. Without the end tags it parses them where a
    browser does, and the serializer writes the end tags back once, at the end.
    """
    tags = _tag_starts(body, _END_TAGS_AND_RAW_TEXT)
    ends = [
        found.span()
        for start in tags
        if (found := _DOCUMENT_END_TAG.match(body, start)) is not None
    ]
    if not ends:
        return body
    # (An end tag never straddles a raw text element's start or end: each is in one or out.)
    blocks = [(start, end) for start, _, _, end in _raw_text_blocks(body, tags)]
    starts = [start for start, _ in blocks]
    kept, position = [], 0
    for start, end in ends:
        block = bisect.bisect_right(starts, start) - 1
        if block >= 0 and start < blocks[block][1]:
            continue  # (a script's text)
        kept.append(body[position:start])
        position = end
    kept.append(body[position:])
    return b"".join(kept)


def _raw_text_blocks(body: bytes, tags: list[int]) -> Iterator[tuple[int, int, int, int]]:
    """Where the raw text elements are (where each starts, its text starts and ends, and it
    ends: its start tag to its end tag), as the pattern
    `<(script|...)\\b[^>]*>.*?</\\1\\s*>` (ignoring case) finds them one after the other,
    without its step per byte of their text: 2.5 ms of a 250 KB page with 78 scripts, 0.5 ms
    so. An element with no end tag is none, and the next is looked for after its `<`. `tags`:
    where their start and end tags may be (`_tag_starts` of `_END_TAGS_AND_RAW_TEXT`), the only
    places either pattern can match."""
    position = 0
    for candidate in tags:
        if candidate < position or (start := _RAW_TEXT_START.match(body, candidate)) is None:
            continue
        end_tag = b"</" + start.group(1).lower()
        close = None
        for at in itertools.islice(tags, bisect.bisect_left(tags, start.end()), None):
            if body[at : at + len(end_tag)].lower() == end_tag and (
                close := _END_TAG_CLOSE.match(body, at + len(end_tag))
            ):
                break
        if close is None:
            position = start.start() + 1
            continue
        yield start.start(), start.end(), at, close.end()
        position = close.end()


_NEVER_CHANGED = frozenset({str, int, float, bool, type(None), bytes})


def _copied(state: Any) -> Any:
    """A deep copy of a document's notes or runtime rules: their dicts and lists copied, the
    values no one changes in place kept (a fifth of `copy.deepcopy`'s time, which looks each
    object up in a memo: a small page's first load copies them twice). Anything else is
    `copy.deepcopy`'s to copy. They are JSON's values (`state_json`): no cycle, and nothing
    shared that must stay one object."""
    kind = type(state)
    if kind is dict:
        return {key: _copied(value) for key, value in state.items()}
    if kind is list:
        return [_copied(value) for value in state]
    return state if kind in _NEVER_CHANGED else copy.deepcopy(state)


def _tag_starts(page: bytes, names: tuple[bytes, ...]) -> list[int]:
    """Where `<` and one of the lowercase `names` start in the page, in any case, in order:
    where a pattern for such a tag can match. In C where it can be (`shifts.native`): a
    pattern searched for in Python is tried at every `<` of the page, and a word found with
    `bytes.find` is looked for at a tenth of a parse's speed in a page of attributes."""
    return native.either(native.tag_starts, _tag_starts_read, page, names)


def _tag_starts_read(page: bytes, names: tuple[bytes, ...]) -> list[int]:
    """`_tag_starts` in Python: its definition, which the C one follows."""
    lowered = page.lower()
    found = set()
    for name in names:
        needle = b"<" + name
        at = lowered.find(needle)
        while at != -1:
            found.add(at)
            at = lowered.find(needle, at + 1)
    return sorted(found)


def _assigned_names(page: bytes, names: tuple[bytes, ...]) -> list[bytes]:
    """Those of the lowercase `names` that the page holds with `=` right after them, in any
    case, in their order. In C where it can be (`shifts.native`), as `_tag_starts`."""
    return native.either(native.assigned_names, _assigned_names_read, page, names)


def _assigned_names_read(page: bytes, names: tuple[bytes, ...]) -> list[bytes]:
    """`_assigned_names` in Python: its definition, which the C one follows."""
    lowered = page.lower()
    return [name for name in names if name + b"=" in lowered]


def _bom_of(raw: bytes) -> bytes:
    for bom in (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        if raw.startswith(bom):
            return bom
    return b""


def _without_invented_doctype(body: bytes, original: bytes, encoding: str) -> bytes:
    """libxml2 invents an HTML 4.0 doctype for a page that has none, which would move a page
    from one rendering mode to another: it is dropped again (in the page's own encoding: in
    UTF-16, the doctype's bytes are not ASCII's)."""
    if _DOCTYPE.search(_as_ascii_markup(original[:8192], encoding)[:4096]):
        return body
    if is_ascii_compatible(encoding):
        return _DOCTYPE.sub(b"", body, count=1).lstrip(b"\n")
    text = body.decode(encoding)
    bom = text[:1] if text[:1] == "\ufeff" else ""
    kept = _DOCTYPE.sub(b"", text[len(bom) :].encode("utf-8"), count=1).lstrip(b"\n")
    return (bom + kept.decode("utf-8")).encode(encoding)


def _splice(body: bytes, markup: str, encoding: str, where: Callable[[bytes], int]) -> bytes:
    if not is_ascii_compatible(encoding):
        text = body.decode(encoding, "replace")
        spliced = _splice(text.encode("utf-8"), markup, "utf-8", where)
        return spliced.decode("utf-8").encode(encoding, "xmlcharrefreplace")
    insert = markup.encode("ascii", "xmlcharrefreplace")
    position = where(body)
    view = memoryview(body)  # (the page copied once, not its two parts and then them)
    return b"".join((view[:position], insert, view[position:]))


def _early_point(body: bytes) -> int:
    """After the doctype, <html> and <head> start tags, and a <meta charset> among the first
    1024 bytes that only whitespace and other <meta> or <link> tags precede (the charset
    declaration must stay within those bytes; nothing is ever put inside a raw-text element)."""
    start = _after_prolog(body)
    charset = _META_CHARSET.search(body, start, start + _CHARSET_WINDOW)
    if charset is not None and _ONLY_VOID_HEAD_TAGS.fullmatch(body, start, charset.start()):
        return charset.end()
    return start


def _insertion_point(body: bytes) -> int:
    """Where injected <style>/<script> go: at the end of <head> when the head holds only head
    elements (so injected CSS comes after the page's own); otherwise at the start of the
    document, after the doctype, <html>, <head> and a <meta charset>. Never inside an element
    whose text it would become (an unclosed <title>, a <h1> before </head>, the end of a page
    of unclosed tags)."""
    start = _after_prolog(body)
    position, after_charset = start, start
    while True:
        tag = _TAG_OR_COMMENT.search(body, position)
        if tag is None:
            return after_charset
        if tag.group(0) == b"<!--":
            comment_end = body.find(b"-->", tag.end())
            if comment_end < 0:
                return after_charset
            position = comment_end + 3
            continue
        name = tag.group(2).lower()
        if tag.group(1):  # an end tag
            if name == b"head":
                return tag.start()  # the head held nothing but head elements
            position = tag.end()
            continue
        if name not in _HEAD_TAGS:
            return after_charset  # body content already: the head has ended implicitly
        end = body.find(b">", tag.end())
        if end < 0:
            return after_charset
        position = end + 1
        if name in _RAW_TEXT:  # its text runs to its end tag, whatever it contains
            end_tag = _RAW_TEXT_END[name].search(body, position)
            if end_tag is None:
                return after_charset
            position = end_tag.end()
        elif name == b"meta" and b"charset" in body[tag.start() : position].lower():
            after_charset = position  # the charset declaration must stay in the first 1024 bytes


def _after_prolog(body: bytes) -> int:
    """The offset after a BOM, comments, the doctype and the <html> and <head> start tags."""
    position = 3 if body.startswith(b"\xef\xbb\xbf") else 0
    for pattern in (_DOCTYPE, _HTML_START, _HEAD_START):
        while True:
            skipped = _SKIPPABLE.match(body, position)
            if not skipped or skipped.end() == position:
                break
            position = skipped.end()
        found = pattern.match(body, position)
        if found:
            position = found.end()
    return position
