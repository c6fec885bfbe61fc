"""Per-request values in a page (nonces, CSRF and form keys, session tokens): what no shift's
decision may depend on, so that two loads of a page that differ only in them are shifted alike,
and the second is the first with its values swapped in, at the cost of a comparison.

A volatile value is a run of 8 or more `[A-Za-z0-9_-]` with a digit in it: what nonces, tokens
and keys look like, and what words and most names do not. The locator drift's seeded coin masks
them (`mask`); `swaps` finds them between two loads of a page, and says when the difference is
anything else (then the page is shifted afresh).
"""

from __future__ import annotations

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
    if _in_raw_text(page, position):
        # A script's or a style's text, where a `<` opens no tag: WordPress writes its
        # admin's settings, the time of the request among them, after `/* <![CDATA[ */`.
        return True
    if open_tag < 0:
        return False  # a tag longer than the look-back: not judged, not swapped
    attribute = _ATTRIBUTE_VALUE_TO_HERE.search(page, open_tag + 1, position)
    if attribute is None:
        return False  # the tag's own name, or an attribute's: never swapped
    name = attribute.group(1).lower()
    return name in _CARRIED or name.startswith(b"data-")


def _in_raw_text(page: bytes, position: int) -> bool:
    """Whether `position` is in the text of a `<script>` or a `<style>`: the last of them
    opened before it, its start tag ended, and no end tag of either since (a script's string
    that says `"<style>"` opens nothing once its script has ended; one that says
    `"</style>"` reads as an end here: not swapped, shifted afresh, which is only slower).
    Tags in upper case are not looked for, with the same result."""
    opened = max(page.rfind(b"<script", 0, position), page.rfind(b"<style", 0, position))
    if opened < 0 or page.find(b">", opened, position) < 0:
        return False
    return (
        max(page.rfind(b"</script", opened, position), page.rfind(b"</style", opened, position)) < 0
    )
