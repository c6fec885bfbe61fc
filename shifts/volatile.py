"""Per-request values in a page (nonces, CSRF and form keys, session tokens): what no shift's
decision may depend on, so that two loads of a page that differ only in them are shifted alike,
and the second is the first with its values swapped in, at the cost of a comparison.

A volatile value is a run of 8 or more `[A-Za-z0-9_-]` with a digit in it: what nonces, tokens
and keys look like, and what words and most names do not. The locator drift's seeded coin masks
them (`mask`); `swaps` finds them between two loads of a page, and says when the difference is
anything else (then the page is shifted afresh).
"""

from __future__ import annotations

import bisect
import functools
import re

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
# The attribute whose value runs up to the end of the text searched (the leftmost match is the
# attribute itself: a query's `a=b` inside its value starts further right).
_ATTRIBUTE_VALUE_TO_HERE = re.compile(
    rb"""(?<![^\s"'])([^\s"'<>/=]+)\s*=\s*(?:"[^"<>]*|'[^'<>]*|[^\s"'<>]*)$"""
)
MAX_VALUES = 64  # distinct per-request values in a page, at most: beyond, it is shifted afresh
_LOOK_BACK = 4096  # how far back the start of the tag a value sits in is looked for


# A whole run of 8 or more with a digit in it: where a run starts (no run character before it),
# at least 8 run characters follow, and the run holds a digit. One pattern, no Python callback
# per run: `mask` is asked of every candidate element's text on a first load.
_VOLATILE_RUN = re.compile(
    rf"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]{{{MIN_LENGTH}}})[A-Za-z0-9_-]*[0-9][A-Za-z0-9_-]*"
)


def mask(text: str) -> str:
    """`text` with every volatile value replaced by `#`."""
    return _VOLATILE_RUN.sub("#", text)


# ... and in a text, any number too: a text's numbers are the app's data, not what a control
# is (a clock, as WordPress's settings show the time to the second; a count, a date, a price).
# Read, they had the same seed wrap a page differently at each load.
_VOLATILE_RUN_OR_NUMBER = re.compile(_VOLATILE_RUN.pattern + "|[0-9]+")


def mask_text(text: str) -> str:
    """`text` with every volatile value, and every number left, replaced by `#`."""
    return _VOLATILE_RUN_OR_NUMBER.sub("#", text)


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


def swaps(old: bytes, new: bytes) -> dict[bytes, bytes] | None:
    """The volatile values `new` has where `old` has others ({old value: new value}), if that
    is all that tells the two apart: same length, every difference a whole volatile value in a
    place no shift decides by (text, or a carried attribute such as href or value), each old
    value always becoming the same new one. None otherwise.

    One pass per distinct value, not per occurrence (a nonce is in every link of a page): the
    first difference names a value, which is swapped everywhere, and the next difference is
    looked for in what is left."""
    if len(old) != len(new) or old == new:
        return None
    found: dict[bytes, bytes] = {}
    swapped = old
    while (position := _first_difference(swapped, new)) is not None:
        start, end = _widen(swapped, new, position, position + 1)
        before, after = swapped[start:end], new[start:end]
        if (
            before in found
            or len(found) == MAX_VALUES
            or not (is_volatile(before) and is_volatile(after))
            # A value the old page held already (an id the new value names, a word a
            # script reads) is no new per-request value: shifts decide by its occurrences.
            or after in old
            or not _carried_everywhere(old, before)
        ):
            return None
        found[before] = after
        swapped = swapped.replace(before, after)
    return found


def _first_difference(old: bytes, new: bytes) -> int | None:
    """Where two pages of one length first differ, found by comparing chunks (a memcmp each)
    and, in the first chunk that differs, the XOR of its two versions as integers (0 wherever
    they agree)."""
    for chunk in range(0, len(old), _CHUNK):
        mine, theirs = old[chunk : chunk + _CHUNK], new[chunk : chunk + _CHUNK]
        if mine != theirs:
            xor = int.from_bytes(mine, "big") ^ int.from_bytes(theirs, "big")
            run = _DIFFERENT.search(xor.to_bytes(len(mine), "big"))
            return chunk + run.start() if run else None
    return None


def _widen(old: bytes, new: bytes, start: int, end: int) -> tuple[int, int]:
    """The whole value around a difference: widened while both pages have token characters."""
    while start > 0 and old[start - 1] in WORD_BYTES and new[start - 1] in WORD_BYTES:
        start -= 1
    while end < len(old) and old[end] in WORD_BYTES and new[end] in WORD_BYTES:
        end += 1
    return start, end


@functools.lru_cache(maxsize=8)
def _carried_everywhere(page: bytes, value: bytes) -> bool:
    """Whether every occurrence of `value` in `page` is carried (`_carried_at`). Kept for a few
    pages: the page a setting's swaps are made from is asked about its same values at every
    load, and a nonce in every link of it is hundreds of tags to read back into (the bytes'
    hash is kept by the bytes object, so a page asked again costs a lookup)."""
    return all(_carried_at(page, at.start()) for at in re.finditer(re.escape(value), page))


def _carried_at(page: bytes, position: int) -> bool:
    """Whether a value at `position` is in text or in a carried attribute, not in a name."""
    window_start = max(0, position - _LOOK_BACK)
    open_tag = page.rfind(b"<", window_start, position)
    close_tag = page.rfind(b">", window_start, position)
    if close_tag > open_tag:
        return True  # text (or a script's or a style's), which no decision reads as a name
    if open_tag >= 0:
        attribute = _ATTRIBUTE_VALUE_TO_HERE.search(page, open_tag + 1, position)
        if attribute is not None:
            name = attribute.group(1).lower()
            if name in _CARRIED or name.startswith(b"data-"):
                return True
    # A script's or a style's text, where a `<` opens no tag: WordPress writes its admin's
    # settings, the time of the request among them, after `/* <![CDATA[ */`. (Asked last:
    # the page's raw texts are found once, and only for a value that looks like a name.)
    return _in_raw_text(page, position)


# What a tokenizer reads as tags and comments, outside raw text: a comment, a bogus comment
# (`<!...>`, `<?...>`), an end tag, or a start tag whose quoted attribute values may hold `>`.
_MARKUP = re.compile(
    rb"<!--.*?(?:-->|\Z)|<[!?][^>]*(?:>|\Z)|</[^>]*(?:>|\Z)"
    rb"|<([A-Za-z][^\t\n\f\r />]*)(?:[^>\"']|\"[^\"]*(?:\"|\Z)|'[^']*(?:'|\Z))*(?:>|\Z)",
    re.DOTALL,
)
# Elements whose text runs to their end tag, tags or not: a `<script` in a title is text.
_RAW_TEXT_ELEMENTS = frozenset(
    {b"script", b"style", b"textarea", b"title", b"xmp", b"iframe", b"noembed", b"noframes"}
    | {b"noscript"}
)
_END_TAG = {
    name: re.compile(rb"</" + name + rb"[\t\n\f\r />]", re.IGNORECASE)
    for name in _RAW_TEXT_ELEMENTS
}
_SCRIPT_OR_STYLE_END = re.compile(rb"</(?:script|style)", re.IGNORECASE)


def _in_raw_text(page: bytes, position: int) -> bool:
    """Whether `position` is in the text of a `<script>` or a `<style>` (`_raw_texts`)."""
    spans = _raw_texts(page)
    at = bisect.bisect_right(spans, (position, len(page) + 1)) - 1
    return at >= 0 and spans[at][0] <= position < spans[at][1]


@functools.lru_cache(maxsize=8)
def _raw_texts(page: bytes) -> list[tuple[int, int]]:
    """The spans of the page's `<script>` and `<style>` texts, as a tokenizer reads them: not
    a `<script` in a comment, in an attribute's value, in a title's or a textarea's text, nor
    `<scripts>` or `<script-x>`; tags in any case. Each span ends at the first `</script` or
    `</style` in it, whatever follows (`</SCRIPT >`): shorter, never longer, than the text
    any parser reads, so a value past it is judged as a tag's, and only shifted afresh."""
    spans: list[tuple[int, int]] = []
    position = 0
    while (start := page.find(b"<", position)) >= 0:
        markup = _MARKUP.match(page, start)
        if markup is None:
            position = start + 1  # a `<` that opens nothing: text
            continue
        position = markup.end()
        name = (markup.group(1) or b"").lower()
        if name not in _RAW_TEXT_ELEMENTS or page[position - 1 : position] != b">":
            continue
        end = _END_TAG[name].search(page, position)
        text_end = end.start() if end else len(page)
        if name in (b"script", b"style"):
            first_end = _SCRIPT_OR_STYLE_END.search(page, position, text_end)
            spans.append((position, first_end.start() if first_end else text_end))
        position = text_end
    return spans
