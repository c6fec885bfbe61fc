"""Per-request values in a page (nonces, CSRF and form keys, session tokens): what no shift's
decision may depend on, so that two loads of a page that differ only in them are shifted alike,
and the second is the first with its values swapped in, at the cost of a comparison.

A volatile value is a run of 8 or more `[A-Za-z0-9_-]` with a digit in it: what nonces, tokens
and keys look like, and what words and most names do not. The locator drift's seeded coin masks
them (`mask`); `swaps` finds them between two loads of a page, and says when the difference is
anything else (then the page is shifted afresh).
"""

from __future__ import annotations

import array
import bisect
import dataclasses
import enum
import functools
import html
import re
import sys
import threading
import typing
import weakref

from shifts import native

_VOLATILE_BYTES = re.compile(rb"[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*")
# A word's bytes, `[A-Za-z0-9_-]`: what a volatile value is a run of (and a name a word of).
WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
MIN_LENGTH = 8
_DIFFERENT = re.compile(rb"[^\x00]")
_CHUNK = 4096
# The attributes a value may change in between two loads shifted alike: where no shift reads
# it for a decision (ids, classes and labels are read; these are carried through). A `name`
# is read by the wrappers' coins with its values masked as here (Redmine names each form anew
# at each request), and elsewhere only compared whole, as a swap keeps it.
_CARRIED = frozenset(
    {
        b"name",
        b"href",
        b"src",
        b"srcset",
        b"action",
        b"formaction",
        b"content",
        b"value",
        b"nonce",
        b"integrity",
        b"poster",
    }
)
MAX_VALUES = 64  # distinct per-request values in a page, at most: beyond, it is shifted afresh


# A whole run of 8 or more with a digit in it: where a run starts (no run character before it),
# at least 8 run characters follow, and the run holds a digit. One pattern, no Python callback
# per run: `mask` is asked of every candidate element's text on a first load. Possessive: what
# comes before the run's first digit is taken once, never given back (a greedy run stepped back
# through every word of 8 letters or more, `consectetur`, looking for a digit: 1.5x the time).
_VOLATILE_RUN = re.compile(
    rf"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]{{{MIN_LENGTH}}})[A-Za-z_-]*+[0-9][A-Za-z0-9_-]*+"
)


# (Both patterns below match nothing without a digit, which most texts and names of a page's
# controls hold none of: a search for one in C costs a tenth of a pattern's step per character.)
_DIGIT = re.compile(r"[0-9]")


def mask(text: str) -> str:
    """`text` with every volatile value replaced by `#`."""
    return _VOLATILE_RUN.sub("#", text) if _DIGIT.search(text) else text


# ... and in a text, any number too: a text's numbers are the app's data, not what a control
# is (a clock, as WordPress's settings show the time to the second; a count, a date, a price).
# Read, they had the same seed wrap a page differently at each load.
_VOLATILE_RUN_OR_NUMBER = re.compile(_VOLATILE_RUN.pattern + "|[0-9]+")


def mask_text(text: str) -> str:
    """`text` with every volatile value, and every number left, replaced by `#`."""
    return _VOLATILE_RUN_OR_NUMBER.sub("#", text) if _DIGIT.search(text) else text


# In a name (an id, a class), what only a request's randomness makes: a whole run of 8 or more
# hex digits holding a letter and a digit (PHP's `uniqid()`: Tasty Recipes' rating inputs are
# `tasty_recipes_rating_input_6a0f6f8893708`, another at each load), a whole UUID (whose
# 4-digit parts are no such run), or a run of 10 or more digits (a timestamp). A counter the
# app keeps (`post-1234`, `menu-item-678`) is no such run, and names its element alike at
# every load.
_RANDOM_IN_NAME = re.compile(
    r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}"
    r"|(?=[0-9]*[A-Fa-f])(?=[A-Fa-f]*[0-9])[0-9A-Fa-f]{8,}|[0-9]{10,})"
    r"(?![0-9A-Fa-f])"
)


@functools.lru_cache(maxsize=65_536)  # (a page repeats its class attributes thousands of times)
def name_key(name: str) -> str:
    """A name as a seeded coin reads it: its random runs (`_RANDOM_IN_NAME`) as `#`, so that a
    name an app makes anew at each request is decided alike at every load."""
    return _RANDOM_IN_NAME.sub("#", name) if len(name) >= 8 else name


def is_volatile(value: bytes) -> bool:
    return len(value) >= MIN_LENGTH and _VOLATILE_BYTES.fullmatch(value) is not None


@dataclasses.dataclass(frozen=True)
class Swaps:
    """What tells a page's next load from it, when a shift decides nothing by it: per-request
    values (`values`, {old: new}), each swapped in wherever it is, and numbers in a text
    (`numbers`: where each is in the old page, the old word, the new one), each spliced in at
    its place (a number is too short to be the same value wherever it occurs)."""

    values: dict[bytes, bytes]
    numbers: tuple[Number, ...] = ()

    def numbers_moved(self) -> typing.Iterator[tuple[int, Number]]:
        """Each number with how far it moved on its way into the next load: the changes of
        length of the numbers before it (a value keeps its length). Its place in the next load
        is `number.position` plus that, and so is its text's."""
        moved = 0
        for number in self.numbers:
            yield moved, number
            moved += len(number.after) - len(number.before)

    def applied_to(self, old: bytes) -> bytes:
        """The next load these swaps tell from `old`: each value swapped in wherever it is, each
        number spliced in at its place."""
        new = old
        for before, after in self.values.items():
            new = new.replace(before, after)
        for moved, number in self.numbers_moved():
            at = number.position + moved
            new = new[:at] + number.after + new[at + len(number.before) :]
        return new


class Number(typing.NamedTuple):
    """A number in a text that a page's next load has another of, in the old page: where it
    is, the old word and the new one, and where the text it is in starts and ends (a start
    tag's, for a word in an attribute's value: `attribute`, the attribute's name, a `data-*`
    one or a hidden input's `value`)."""

    position: int
    before: bytes
    after: bytes
    text_start: int
    text_end: int
    attribute: bytes | None = None


def swaps(old: bytes, new: bytes) -> Swaps | None:
    """How `new` differs from `old`, if only so (`Swaps`): every difference either a whole
    volatile value in a place no shift decides by (text, or a carried attribute such as href
    or value), each old value always becoming the same new one and of its length, or a word of
    a text that is another number (`_number_may_change`: MediaWiki writes its response time
    into every page's script, WordPress's settings the time to the second). None otherwise.

    One pass per distinct value, not per occurrence (a nonce is in every link of a page): the
    first difference names a value, which is swapped everywhere (a number where it is), and the
    next difference is looked for in what is left."""
    if old == new:
        return None
    found: dict[bytes, bytes] = {}
    numbers: list[Number] = []
    swapped = old
    shift = 0  # (how much longer `swapped` is than `old`: the numbers of other lengths so far)
    while (position := _first_difference(swapped, new)) is not None:
        start = _word_start(swapped, new, position)
        end, new_end = _word_end(swapped, position), _word_end(new, position)
        before, after = swapped[start:end], new[start:new_end]
        if not before or not after or len(found) + len(numbers) == MAX_VALUES:
            return None  # (a difference in what is no word: punctuation, a tag)
        if len(before) != len(after) or not is_volatile(before):
            at = start - shift  # (where it is in `old`: every number spliced so far is before)
            held = _element_value_at(old, at)
            if not _number_may_change(old, at, before, after, held):
                return None
            attribute = None if held is None else held.name
            numbers.append(Number(at, before, after, *_text_around(old, at), attribute))
            swapped = swapped[:start] + after + swapped[end:]
            shift += len(after) - len(before)
            continue
        if (
            before in found
            or not is_volatile(after)
            # A value the old page held already (an id the new value names, a word a
            # script reads) is no new per-request value: shifts decide by its occurrences.
            or contains(old, after)
            or not _carried_everywhere(old, before)
        ):
            return None
        found[before] = after
        # (the page's first value: where it is in the page, found once for its next loads)
        swapped = (
            replaced_at(old, _places_in(old, before), len(before), after)
            if swapped is old
            else swapped.replace(before, after)
        )
    # An id with a character no word has (`x.1`, `form:field1`, `café1`) is counted where it
    # occurs in the page, words or not (the drift's `_Mentions`): a value or a number that
    # held it, or holds it now, counts one mention more or less (`x.15` then `x.25`: a
    # mention of `x.1` gone; a nonce `x.abc12345` beside an id `x.abc1`).
    if any(old.count(name) != new.count(name) for name in _odd_ids(old)):
        return None
    return Swaps(found, tuple(numbers))


def _number_may_change(
    page: bytes, position: int, before: bytes, after: bytes, held: _Held | None
) -> bool:
    """Whether the word `before` at `position` may become `after` with no shift deciding
    otherwise: only digits differ, or both are whole numbers (every pattern a coin masks by,
    and a coin's cut, read the two alike: `volatile.mask_text` before the cut), the
    word is in a text (a script's, a style's, a comment's too) or in a `data-*` attribute's
    value (which scripts read as they read their own strings; a coin reads no such value, and
    the shift's state says whether a selector tests it: `Number.attribute`), not in another
    attribute (a coin reads a link's and a name's values unmasked, relabel a label's), and
    neither word is an id or a class of the page (the drift counts an id's mentions, and looks
    names up in what scripts hold). `held`: the element's value that holds it
    (`_element_value_at`), if one does."""
    kind = _kind_at(page, position)
    if held is not None and _in_hidden_value(page, held):
        # What no shift reads (a form's state: Draft.js's random block keys, `jl3ez`, in
        # the JSON of Wagtail's editor), whatever the word.
        return not _ESCAPED.search(page, max(0, position - 3), position) and not (
            _is_a_name(page, before) or _is_a_name(page, after)
        )
    if len(before) != len(after):
        if not (before.isdigit() and after.isdigit()):
            return False  # (a number of another length: a whole one, `9` then `10`)
        # A coin reads a container's text across its tags, masked: the word the number is a
        # part of there (`Inbox<b>4</b>` is `Inbox4`, masked `Inbox#`) may be a run of 8 or
        # more, masked whole, with one of the two (`#` for `Inbox372`). (With none of the
        # text beside it, or 7 digits or more, a number is masked whole either way.)
        shorter, longer = sorted((len(before), len(after)))
        if shorter < MIN_LENGTH - 1 and _joined_length(
            page, position, position + len(before)
        ) >= max(1, MIN_LENGTH - longer):
            return False
    elif any(
        a != b and not (_is_digit(a) and _is_digit(b)) for a, b in zip(before, after, strict=True)
    ):
        return False
    if held is not None and held.name.startswith(b"data-"):
        if not _read_as_written(page, held, position, position + len(before)):
            return False
        kind = _Kind.UNREAD_TEXT  # (read as a script's string is: the same refusals)
    if kind not in (None, _Kind.UNREAD_TEXT):
        return False
    if (
        kind is _Kind.UNREAD_TEXT
        and _AFFIX_ENDS.intersection((before[0], before[-1]))
        and any(before in name or after in name for name in _names(page).names)
    ):
        # A script's word that starts or ends with `-` or `_` is what it appends to a value
        # or prefixes it with (`id + "-3"`, `"row3-" + n`): a name it may build, of the page's
        # names that hold it.
        return False
    # A character's code, not a number: a reference (`&#9728;`, `&#x26;`, `&sup2;`) or a
    # script's or a style's escape (`"\x33"`, `\u{33}`, `.\31 0`) is another character at
    # each load, which coins, labels and a script's names read as it is.
    if _ESCAPED.search(page, max(0, position - 3), position):
        return False
    # A value an attribute test of a selector holds (`[data-col="3"] > a`, `[id^="row3"]`, a
    # script's `'[data-col="' + 3`): the drift's structural rules match elements by it.
    if kind is _Kind.UNREAD_TEXT and _IN_ATTRIBUTE_TEST.search(
        page, max(0, position - _ATTRIBUTE_TEST_LOOK_BACK), position
    ):
        return False
    return not _is_a_name(page, before) and not _is_a_name(page, after)


def _joined_length(page: bytes, start: int, end: int) -> int:
    """How many word characters a text as a coin reads it (an element's, across its tags and
    comments, its references decoded, its scripts' and styles' texts in it) joins to the word
    `start`..`end` of the page's text, on both sides (up to `MIN_LENGTH` each): what the word
    is a part of there. 0 in a comment (which no coin reads) or in a tag."""
    markup = _markup(page)
    at = markup.span_at(start)
    if at is not None and (markup.kinds[at] is not _Kind.UNREAD_TEXT or _is_comment(page, at)):
        return 0
    joined = 0
    for step in (-1, 1):
        position, count = (start if step < 0 else end), 0
        while count < MIN_LENGTH and 0 < position < len(page) + (step < 0):
            byte_at = position - 1 if step < 0 else position
            span = markup.span_at(byte_at)
            if (
                span is not None
                and span != at
                and (markup.kinds[span] is not _Kind.UNREAD_TEXT or _is_comment(page, span))
            ):
                position = markup.starts[span] if step < 0 else markup.ends[span]
                continue  # (a tag or a comment: the text goes on past it)
            reference = (
                _REFERENCE_BEFORE.search(page, max(0, position - 40), position)
                if step < 0
                else _REFERENCE.match(page, position)
            )
            if reference is not None:
                text = html.unescape(reference.group().decode("latin-1"))
                if not set(text) <= WORD_CHARACTERS:
                    break
                count += len(text)
                position = reference.start() if step < 0 else reference.end()
                continue
            if page[byte_at] not in WORD_BYTES:
                break
            count += 1
            position += step
        joined += count
    return joined


def _is_comment(page: bytes, span: int) -> bool:
    """Whether the markup span `span` (`_markup`) is a comment (`<!...>`, `<?...>`)."""
    start = _markup(page).starts[span]
    return page[start : start + 2] in (b"<!", b"<?")


_REFERENCE_START = rb"&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*)"
_REFERENCE = re.compile(_REFERENCE_START + rb";?")
_REFERENCE_BEFORE = re.compile(_REFERENCE_START + rb";\Z")


def _in_hidden_value(page: bytes, held: _Held) -> bool:
    """Whether `held` is the value of an `<input type="hidden">`: no shift reads it (a coin
    reads an input's name, relabel a button's value, the change map no value)."""
    if held.name != b"value":
        return False
    tag = _TAG_NAME.match(page, held.tag_start, held.tag_end)
    if tag is None or tag.group(1).lower() != b"input":
        return False
    types = [
        _unquoted(attribute.group(2) or b"").strip().lower()
        for attribute in _attributes(page, held.tag_start, held.tag_end)
        if attribute.group(1).lower() == b"type"
    ]
    return types[:1] == [b"hidden"]  # (the first of the name is the one the element has)


class _Held(typing.NamedTuple):
    name: bytes  # the attribute's, in lower case
    tag_start: int
    tag_end: int
    attribute: re.Match[bytes]  # (`_ONE_ATTRIBUTE`'s: its value is group 2)


def _element_value_at(page: bytes, position: int) -> _Held | None:
    """The attribute whose value holds `position`, where the parser gives an element that
    value as the page has it: not a tag in a title's or a textarea's text (text to the parser,
    which a coin reads as a container's text), not an attribute a tag has twice past the first
    (the parser keeps the first), not a second `<html>`, `<head>` or `<body>` (the parser
    drops it, attributes and all). None otherwise."""
    markup = _markup(page)
    at = markup.span_at(position)
    if at is None or markup.kinds[at] is not _Kind.START_TAG or at in markup.in_text:
        return None
    start, end = markup.starts[at], markup.ends[at]
    tag = _TAG_NAME.match(page, start, end)
    if tag is None:
        return None
    if (name := tag.group(1).lower()) in _ONCE_TAGS:
        first = re.search(rb"<" + name + rb"[\t\n\f\r />]", page, re.IGNORECASE)
        if first is None or first.start() != start:
            return None
    seen: set[bytes] = set()
    for attribute in _attributes(page, start, end):
        attribute_name = attribute.group(1).lower()
        if attribute.start(2) <= position < attribute.end(2):
            if attribute_name in seen:
                return None
            return _Held(attribute_name, start, end, attribute)
        if position < attribute.end():
            return None
        seen.add(attribute_name)
    return None


_ONCE_TAGS = frozenset({b"html", b"head", b"body"})


def _read_as_written(page: bytes, held: _Held, start: int, end: int) -> bool:
    """Whether the word `start`..`end` of a `data-*` value is read from the value as the page
    writes it: scripts read the value with its references decoded (`&#61;` is `=`, `&#45;`
    a `-` that joins the word to the one before) and over its line ends, so the refusals
    made on the page's bytes (an attribute test open before it, a character's code, a name)
    are made again on what they read: the word is whole there, and no attribute test or
    escape is open before it in the value."""
    value_start, value_end = held.attribute.span(2)
    if page[value_start : value_start + 1] in (b'"', b"'"):
        value_start += 1
        if page[value_end - 1 : value_end] == page[value_start - 1 : value_start]:
            value_end -= 1
    before = html.unescape(page[value_start:start].decode("latin-1"))
    after = html.unescape(page[end:value_end].decode("latin-1"))
    if before[-1:] in WORD_CHARACTERS or after[:1] in WORD_CHARACTERS:
        return False
    return not (_ESCAPED_TEXT.search(before) or _IN_ATTRIBUTE_TEST_TEXT.search(before))


WORD_CHARACTERS = frozenset(map(chr, WORD_BYTES))  # (a word's, as a text reads them)


def attribute_in_serialized_tag(body: bytes, position: int) -> bytes | None:
    """The lower-case name of the attribute whose value holds `position` in a serialized tree
    (libxml2 writes every `<` and `>` of a value and of a text as a reference: a tag runs from
    the `<` before to the `>` after); None where `position` is in no tag's value."""
    start = body.rfind(b"<", 0, position)
    end = body.find(b">", position)
    if start < 0 or end < 0 or body.find(b">", start, position) >= 0:
        return None
    if _TAG_NAME.match(body, start, end + 1) is None:
        return None
    return _attribute_at(body, start, end + 1, position)


# What ends right before a word that is a character's code: `&`, `&#`, `\`, `\u{`. In the
# page's bytes, and in a value's text as scripts read it (its references decoded).
_ESCAPED_END = r"(?:&#?|\\|\\u\{)\Z"
_ESCAPED, _ESCAPED_TEXT = re.compile(_ESCAPED_END.encode()), re.compile(_ESCAPED_END)
# An attribute test open before a word: `[name=`, `[name^=`, `[*|name=`, ... and its value so
# far (no `]`). In the page's bytes, on its line; in a value's text, over its line ends, as a
# selector there is read.
_ATTRIBUTE_TEST = r"\[%(s)s*(?:[\w*-]*\|)?[A-Za-z_][\w:-]*%(s)s*[~|^$*]?=[^\]%(n)s]*\Z"
_IN_ATTRIBUTE_TEST = re.compile((_ATTRIBUTE_TEST % {"s": r"[\t\f\r ]", "n": r"\n"}).encode())
_IN_ATTRIBUTE_TEST_TEXT = re.compile(_ATTRIBUTE_TEST % {"s": r"\s", "n": ""})
_ATTRIBUTE_TEST_LOOK_BACK = 256


_AFFIX_ENDS = frozenset(b"-_")


class PageReading:
    """What the swaps read of a page they are made from (its markup, its names, where its
    values are), kept as long as this object is: `ShiftedPages` keeps one with each page shifted
    whole, so that every next load of the page reads it once, however many other pages are read
    meanwhile. (Read only among the last few pages, an agent browsing more than a few pages
    read each page again at each of its next loads.) The same bytes share one reading."""

    def __init__(self, page: bytes) -> None:
        self.page = page
        self.values: dict[tuple[object, ...], object] = {}
        # About the bytes its readings hold (`_footprint`): from half the page's size to many
        # times it (a page of thousands of tiny tags), so a cache that keeps it counts it.
        self.size = 0


# The pages whose readings are kept, by their bytes (a bytes object keeps its hash): an entry
# goes when its reading is no longer held.
_KEPT: weakref.WeakValueDictionary[bytes, PageReading] = weakref.WeakValueDictionary()


_KEEPING = threading.Lock()  # (two threads keeping a page's reading at once share one)


def keep_reading(page: bytes) -> PageReading:
    """The reading of `page`, kept while the object returned is held."""
    with _KEEPING:
        reading = _KEPT.get(page)
        if reading is None:
            reading = _KEPT[page] = PageReading(page)
        return reading


def _read_once[R](
    recent_calls: int,
) -> typing.Callable[[typing.Callable[..., R]], typing.Callable[..., R]]:
    """`reading(page, *args)` made once per page and arguments: kept with the page's reading
    while one is kept (`keep_reading`), else among the last `recent_calls` calls."""

    def decorate(reading: typing.Callable[..., R]) -> typing.Callable[..., R]:
        recent = functools.lru_cache(maxsize=recent_calls)(reading)
        name = reading.__name__

        @functools.wraps(reading)
        def read(page: bytes, *args: object) -> R:
            kept = _KEPT.get(page)
            if kept is None:
                return recent(page, *args)
            key = (name, *args)
            if key not in kept.values:  # (pure: two threads making it at once make the same)
                made = kept.values[key] = reading(page, *args)
                kept.size += _footprint(made)
            return typing.cast(R, kept.values[key])

        return read

    return decorate


def _footprint(value: object) -> int:
    """About the memory a reading holds: each object's own size, and what it holds (a name
    held twice is counted twice)."""
    if isinstance(value, _Markup):
        return sum(map(sys.getsizeof, (value.starts, value.ends, value.kinds, value.in_text)))
    if isinstance(value, tuple):  # (`_Names`: its sets)
        return sys.getsizeof(value) + sum(map(_footprint, value))
    if isinstance(value, frozenset):  # (of bytes: each its own size, in C)
        return sys.getsizeof(value) + sum(map(sys.getsizeof, value))
    return sys.getsizeof(value)


class _Names(typing.NamedTuple):
    names: frozenset[bytes]  # the ids and class names, as written and as read
    # The words of the ids and class names as the parser reads them (references decoded:
    # `row&#45;4` is `row-4`); the tags' and attributes' names in lower case, as a selector
    # reads them in any case (`h3` selects an `<H3>`, `[DATA-K3]` a `data-k3`).
    words: frozenset[bytes]
    markup_names: frozenset[bytes]
    # Every word in a tag's or an attribute's name, or in an id's or a class's value, as
    # written, and the `words`: what is whole in a name of the page (`_is_a_name`).
    name_words: frozenset[bytes]


@_read_once(recent_calls=8)
def _names(page: bytes) -> _Names:
    """The page's ids and class names, and what `_Names` says."""
    names: set[bytes] = set()
    words: set[bytes] = set()
    markup_names: set[bytes] = set()
    name_words: set[bytes] = set()
    markup = _markup(page)
    for start, end, kind in zip(markup.starts, markup.ends, markup.kinds, strict=True):
        if kind is not _Kind.START_TAG:
            continue
        if (tag := _TAG_NAME.match(page, start, end)) is not None:
            markup_names.add(tag.group(1).lower())
            name_words.update(_NAME_WORD.findall(tag.group(1)))
        for attribute in _attributes(page, start, end):
            written = attribute.group(1)
            name, value = written.lower(), _unquoted(attribute.group(2) or b"")
            markup_names.add(name)
            name_words.update(_NAME_WORD.findall(written))
            if name not in (b"class", b"id"):
                continue
            text = _as_read(value)
            words.update(_NAME_WORD.findall(text))
            name_words.update(_NAME_WORD.findall(value))
            if name == b"class":
                names.update(value.split())
                names.update(text.split())
            else:
                names.update((value, text))
    return _Names(*map(frozenset, (names, words, markup_names, name_words | words)))


def places_of(page: bytes, value: bytes) -> array.array[int]:
    """Where `value` starts in `page`, each place past the last one's end, from the left: where
    `page.replace(value, new)` puts `new` (`replaced_at`). About eight bytes a place (no piece
    of the page is made, as `split` makes them all). ValueError for an empty value."""
    if not value:
        raise ValueError("no places of an empty value")
    places, at = array.array("q"), page.find(value)
    while at >= 0:
        places.append(at)
        at = page.find(value, at + len(value))
    return places


def replaced_at(page: bytes, places: array.array[int], length: int, new: bytes) -> bytes:
    """`page.replace(value, new)`, the value of `length` bytes being at `places`
    (`places_of`): the page's bytes between them joined by `new`, with no search."""
    view, start, pieces = memoryview(page), 0, []
    for place in places:
        pieces.append(view[start:place])
        start = place + length
    pieces.append(view[start:])
    return new.join(pieces)


@_read_once(recent_calls=8)
def _places_in(page: bytes, value: bytes) -> array.array[int]:
    """`places_of`, kept with the page's reading: a page's next loads each swap a new value in
    for its same old one."""
    return places_of(page, value)


def count_in(page: bytes, value: bytes) -> int:
    """`page.count(value)`, from its places kept with the page's reading (`_places_in`): the
    swaps of each next load read them, and the swapped shift asks how often the value is in
    the page at each load too."""
    return len(_places_in(page, value))


@_read_once(recent_calls=8)
def _odd_ids(page: bytes) -> frozenset[bytes]:
    """The page's ids that hold a character no word has and a digit, as the drift counts them
    (their text, in UTF-8: `x.1`, `form:f1`, `café1`). Asked at every swap, so not read from
    every attribute of every tag (`_names`): the places an id could be are found in the bytes
    (`_ID_NAME`), and only the tags that could hold such an id are read: a tag whose first
    such place has a value that could be one, or that has two (the first may be no attribute's
    name: `<a title=' id=' id="x.1">`). Each tag is read at most once, and each value read up to
    its tag's end: a candidate's value never hides another candidate (`id="` in a script, a
    comment or a value, up to the next quote, may hold a real id)."""
    markup = _markup(page)
    found: set[bytes] = set()
    first = read = -1  # (the tag of the last candidate, the last tag read)
    for candidate in _ID_NAME.finditer(page):
        at = markup.span_at(candidate.start())
        if at is None or at == read or markup.kinds[at] is not _Kind.START_TAG:
            continue  # (a script's text, a comment; a tag read already)
        if at != first:
            first = at
            value = _VALUE.match(page, candidate.end(), markup.ends[at])
            written = _unquoted(value.group())  # type: ignore[union-attr]
            if not _NO_WORD_CHARACTER.search(written) or not (
                b"&" in written or any(map(_is_digit, written))
            ):
                continue  # (as written: a reference, its `&`, can make any text)
        read = at
        for attribute in _attributes(page, markup.starts[at], markup.ends[at]):
            if attribute.group(1).lower() != b"id" or attribute.group(2) is None:
                continue
            text = _as_read(_unquoted(attribute.group(2)))
            if not set(text) <= WORD_BYTES and any(map(_is_digit, text)):
                found.add(text)
    return frozenset(found)


def _as_read(value: bytes) -> bytes:
    """An attribute's value as the parser reads it, references decoded (in UTF-8)."""
    return html.unescape(value.decode(errors="replace")).encode() if b"&" in value else value


_NO_WORD_CHARACTER = re.compile(rb"[^A-Za-z0-9_-]")  # (a quote in a value is none too)


_NAME_WORD = re.compile(rb"[A-Za-z0-9_-]+")


def _unquoted(value: bytes) -> bytes:
    """An attribute's value as written (`_ATTRIBUTE`'s group 2) without its quotes."""
    if value[:1] in (b'"', b"'"):
        return value[1:-1] if len(value) > 1 and value[-1:] == value[:1] else value[1:]
    return value


def _text_around(page: bytes, position: int) -> tuple[int, int]:
    """Where the text that holds `position` starts and ends: a script's, a style's or a
    comment's text span, or the text between two spans of markup."""
    markup = _markup(page)
    if (at := markup.span_at(position)) is not None:
        return markup.starts[at], markup.ends[at]
    before = bisect.bisect_right(markup.starts, position) - 1  # (the span before the text)
    start = markup.ends[before] if before >= 0 else 0
    end = markup.starts[before + 1] if before + 1 < len(markup.starts) else len(page)
    return start, end


def _is_digit(byte: int) -> bool:
    return 0x30 <= byte <= 0x39


def _is_a_name(page: bytes, word: bytes) -> bool:
    """Whether `word` is, whole, in an id or a class attribute of `page` or in a tag's or an
    attribute's name, as written, or in an id or a class as the parser reads it (references
    decoded), or a tag's or an attribute's name in another case (`_Names`). A word is a run
    of word characters: whole in a name or a value, it is one of the runs there."""
    names = _names(page)
    return word in names.name_words or word.lower() in names.markup_names


def contains(page: bytes, word: bytes) -> bool:
    """`word in page` (`contains_read`), by the C library's `memmem` where it is built: a next
    load asks whether its new value is in the page it is swapped from and in that page's shift
    (two scans of the page's size, where Python's search is slow on markup)."""
    return native.either(native.contains, contains_read, page, word)


def contains_read(page: bytes, word: bytes) -> bool:
    """Whether `word` is in `page`: `shifts.native.contains`'s definition."""
    return word in page


def _first_difference(old: bytes, new: bytes) -> int | None:
    """Where two pages first differ (the end of the shorter, where one starts the other), found
    by comparing chunks (a memcmp each) and, in the first chunk that differs, the XOR of its
    two versions as integers (0 wherever they agree). None where they are the same."""
    shorter = min(len(old), len(new))
    for chunk in range(0, shorter, _CHUNK):
        mine, theirs = old[chunk : chunk + _CHUNK], new[chunk : chunk + _CHUNK]
        if mine != theirs:
            size = min(len(mine), len(theirs))
            xor = int.from_bytes(mine[:size], "big") ^ int.from_bytes(theirs[:size], "big")
            run = _DIFFERENT.search(xor.to_bytes(size, "big"))
            return chunk + (run.start() if run else size)
    return None if len(old) == len(new) else shorter


def _word_start(old: bytes, new: bytes, position: int) -> int:
    """Where the word around a difference starts: back while both pages have word characters
    (they are the same before it)."""
    while position > 0 and old[position - 1] in WORD_BYTES and new[position - 1] in WORD_BYTES:
        position -= 1
    return position


def _word_end(page: bytes, position: int) -> int:
    """Where the word that a difference at `position` is in ends, in one page."""
    while position < len(page) and page[position] in WORD_BYTES:
        position += 1
    return position


def _carried_everywhere(page: bytes, value: bytes) -> bool:
    """Whether every occurrence of `value` in `page` is carried (`_carried_at`). Kept with the
    page's reading (`PageReading`): the page a setting's swaps are made from is asked about its
    same values at every load, and a nonce in every link of it is hundreds of tags to read back
    into (the bytes' hash is kept by the bytes object, so a page asked again costs a lookup).
    A value the page does not hold (a run the swaps so far made of a new value: `n1-88` after
    `tok-88`'s `tok` became `n1`) is another at each load: not kept, or the reading would grow
    by one at every load of the page."""
    return value not in page or _carried_everywhere_held(page, value)


@_read_once(recent_calls=8)
def _carried_everywhere_held(page: bytes, value: bytes) -> bool:
    return all(_carried_at(page, at.start()) for at in re.finditer(re.escape(value), page))


def _carried_at(page: bytes, position: int) -> bool:
    """Whether a value at `position` is in text or in a carried attribute, not in a name.

    Read from the page's markup as a tokenizer reads it (`_markup`, once per page): a `>` in an
    attribute's value (`title="a>b"`, Knockout's `visible: n > 0`) ends no tag, and a `<` in a
    script's text (WordPress writes its admin's settings, the request's time among them, after
    `/* <![CDATA[ */`) opens none."""
    markup = _markup(page)
    at = markup.span_at(position)
    if at is None or markup.kinds[at] is _Kind.UNREAD_TEXT:
        return True  # text, a script's, a style's or a comment's: no decision reads it as a name
    if markup.kinds[at] is _Kind.OPAQUE:
        return False  # an end tag, a script's text past a `</style`
    start, end = markup.starts[at], markup.ends[at]
    if _CHARSET_META.match(page, start, end):
        return False  # the page's encoding (`content="text/html; charset=iso-8859-2"`)
    name = _attribute_at(page, start, end, position)
    return name is not None and (name in _CARRIED or name.startswith(b"data-"))


# A `<meta>` that names the page's encoding: what it says decides how every text is read.
_CHARSET_META = re.compile(rb"<meta[\t\n\f\r /][^>]*charset", re.IGNORECASE)


def _kind_at(page: bytes, position: int) -> _Kind | None:
    """What the markup span that holds `position` is (`_markup`); None in text."""
    markup = _markup(page)
    at = markup.span_at(position)
    return None if at is None else markup.kinds[at]


_SPACE = rb"\t\n\f\r "
# A start tag's attribute as a tokenizer reads it (spaces and `/` before it skipped): its name
# (group 1), then maybe `=` and its value (group 2), quoted to the closing quote, `>` and `<`
# and all, or unquoted to a space or `>`.
_ATTRIBUTE_VALUE = rb"""("[^"]*(?:"|\Z)|'[^']*(?:'|\Z)|[^%(s)s>]*)""" % {b"s": _SPACE}
_ATTRIBUTE = rb"[%(s)s/]*([^%(s)s/>][^%(s)s/>=]*)(?:[%(s)s]*=[%(s)s]*%(v)s)?" % {
    b"s": _SPACE,
    b"v": _ATTRIBUTE_VALUE,
}
_ONE_ATTRIBUTE = re.compile(_ATTRIBUTE)
# Where an id's value could start: `id`, in any case, where a tokenizer starts an attribute's
# name (after a space, a `/` or a value's closing quote: `_ATTRIBUTE`), then `=`. More than the
# ids (a script's text, a value, another name ending in `id`): each is checked in its tag
# (`_odd_ids`). A value as `_ATTRIBUTE` reads it (`_VALUE`), read up to the tag's end.
_ID_NAME = re.compile(rb"""(?<=[%(s)s/"'])id[%(s)s]*=[%(s)s]*""" % {b"s": _SPACE}, re.I)
_VALUE = re.compile(_ATTRIBUTE_VALUE)
_TAG_NAME = re.compile(rb"<([A-Za-z][^%(s)s/>]*)" % {b"s": _SPACE})
# What a tokenizer reads as markup: a start tag (group 1 its name, as in `_TAG_NAME`) with its
# attributes, a comment (`<!-->` is a whole one, and `--!>` ends one) or a bogus comment
# (`<!...>`, `<?...>`), both the group `comment`, or an end tag; any of them unclosed runs to the
# end of the page.
_MARKUP = re.compile(
    rb"%(t)s(?:%(a)s)*[%(s)s/]*(?:>|\Z)"
    rb"|(?P<comment><!--(?:-?>|.*?(?:--!?>|\Z))|<[!?][^>]*(?:>|\Z))|</[^>]*(?:>|\Z)"
    % {b"s": _SPACE, b"t": _TAG_NAME.pattern, b"a": _ATTRIBUTE},
    re.DOTALL,
)


def _attribute_at(page: bytes, start: int, end: int, position: int) -> bytes | None:
    """The lower-case name of the attribute whose value holds `position`, in the start tag
    `start`..`end`; None where `position` is in the tag's name or an attribute's name."""
    for attribute in _attributes(page, start, end):
        if attribute.start(2) <= position < attribute.end(2):
            return attribute.group(1).lower()
        if position < attribute.end():
            return None
    return None


def _attributes(page: bytes, start: int, end: int) -> typing.Iterator[re.Match[bytes]]:
    """The attributes of the start tag `start`..`end`, as `_ONE_ATTRIBUTE` reads them."""
    cursor = _TAG_NAME.match(page, start, end).end()  # type: ignore[union-attr]
    while (attribute := _ONE_ATTRIBUTE.match(page, cursor, end)) is not None:
        yield attribute
        cursor = attribute.end()


# Elements whose text runs to their end tag, tags or not: a `<script` in a title opens no
# script. (Tags in their text are still read as tags, as a parser that reads them as markup
# would: a class in a `<noscript>`'s `<img>` is a name.)
_RAW_TEXT_ELEMENTS = frozenset(
    {b"script", b"style", b"textarea", b"title", b"xmp", b"iframe", b"noembed", b"noframes"}
    | {b"noscript"}
)
_END_TAG = {
    name: re.compile(rb"</" + name + rb"[\t\n\f\r />]", re.IGNORECASE)
    for name in _RAW_TEXT_ELEMENTS
}
_SCRIPT_OR_STYLE_END = re.compile(rb"</(?:script|style)", re.IGNORECASE)


class _Kind(enum.Enum):
    START_TAG = "a start tag: a value in it is judged by its attribute"
    UNREAD_TEXT = "a script's, a style's or a comment's text: carried"
    OPAQUE = "an end tag, a script's text past a `</style`: not carried"


@dataclasses.dataclass
class _Markup:
    """A page's markup as sorted, disjoint spans: where each starts, ends, and what it is.
    What no span holds is text."""

    # (Kept with the page for its next loads: positions as machine integers, 8 bytes each, not
    # a list's 36.)
    starts: array.array[int] = dataclasses.field(default_factory=lambda: array.array("q"))
    ends: array.array[int] = dataclasses.field(default_factory=lambda: array.array("q"))
    kinds: list[_Kind] = dataclasses.field(default_factory=list)
    # The start tags in a title's, a textarea's (...) text: text to the parser, whose values
    # are then its text's (a coin reads a container's text), no element's attributes.
    in_text: set[int] = dataclasses.field(default_factory=set)

    def add(self, start: int, end: int, kind: _Kind) -> None:
        self.starts.append(start)
        self.ends.append(end)
        self.kinds.append(kind)

    def span_at(self, position: int) -> int | None:
        """The index of the span that holds `position`; None in text."""
        at = bisect.bisect_right(self.starts, position) - 1
        return at if at >= 0 and position < self.ends[at] else None


@_read_once(recent_calls=8)
def _markup(page: bytes) -> _Markup:
    """The page's tags, comments and script and style texts, as a tokenizer reads them. A
    `<script` in a comment, in an attribute's value, in a title's or a textarea's text, or
    `<scripts>` or `<script-x>`, opens no script; tags in any case. A script's or a style's
    text ends at its first `</script` or `</style`, whatever follows (`</SCRIPT >`): shorter,
    never longer, than the text any parser reads; what follows up to its end tag is opaque,
    so a value there is judged a name's, and only shifted afresh.

    Kept with the page's reading (`PageReading`): the page a setting's swaps are made from is
    asked about its values at every load."""
    markup = _Markup()
    position, raw_until = 0, 0  # (in a title's or a textarea's text until `raw_until`)
    while (start := page.find(b"<", position)) >= 0:
        found = _MARKUP.match(page, start)
        if found is None:
            position = start + 1  # a `<` that opens nothing: text
            continue
        position = found.end()
        name = (found.group(1) or b"").lower()
        if name:
            kind = _Kind.START_TAG
        else:
            kind = _Kind.UNREAD_TEXT if found.group("comment") else _Kind.OPAQUE
        markup.add(start, position, kind)
        if start < raw_until:
            markup.in_text.add(len(markup.starts) - 1)
        if start < raw_until or name not in _RAW_TEXT_ELEMENTS or page[position - 1] != 0x3E:
            continue
        end = _END_TAG[name].search(page, position)
        text_end = end.start() if end else len(page)
        if name not in (b"script", b"style"):
            raw_until = text_end
            continue
        first_end = _SCRIPT_OR_STYLE_END.search(page, position, text_end)
        markup.add(position, first_end.start() if first_end else text_end, _Kind.UNREAD_TEXT)
        if first_end is not None:
            markup.add(first_end.start(), text_end, _Kind.OPAQUE)
        position = text_end
    return markup
