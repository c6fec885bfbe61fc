"""Charset detection for HTML bodies, following the order a browser uses."""

from __future__ import annotations

import codecs
import functools
import re

from lxml import etree

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    # By its byte order: libxml2 takes a plain "UTF-16" for little-endian, and read a
    # big-endian page as noise.
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def normalize_charset(label: str | None) -> str | None:
    """Python's codec name for a charset label, or None if Python does not know it."""
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'")).name
    except LookupError:
        return None
    # Browsers decode ISO-8859-1 and US-ASCII labels as windows-1252.
    return "cp1252" if name in ("latin-1", "iso8859-1", "ascii") else name


# Python's codec names that libxml2 (iconv) spells otherwise.
_LIBXML2_NAMES = {
    "utf-16-le": "UTF-16LE",
    "utf-16-be": "UTF-16BE",
    "utf-32-le": "UTF-32LE",
    "utf-32-be": "UTF-32BE",
    "iso2022_jp": "ISO-2022-JP",
    "iso2022_kr": "ISO-2022-KR",
    "mac-roman": "MACINTOSH",
    "mac-cyrillic": "MACCYRILLIC",
    "kz1048": "KZ-1048",
}


@functools.cache
def libxml2_encoding(encoding: str) -> str:
    """The name libxml2 parses and serializes `encoding` (a Python codec name) by: Python
    writes EUC-KR as euc_kr and UTF-16LE as utf-16-le, which lxml's parser refuses."""
    for candidate in (encoding, _LIBXML2_NAMES.get(encoding), encoding.replace("_", "-")):
        if candidate is None:
            continue
        try:
            etree.HTMLParser(encoding=candidate)
        except LookupError:
            continue
        return candidate
    return encoding


def detect_encoding(raw: bytes, header_charset: str | None) -> str:
    """BOM, then the Content-Type charset, then a <meta> in the first 1024 bytes, then UTF-8."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name
    from_header = normalize_charset(header_charset)
    if from_header:
        return from_header
    label = meta_charset(raw)
    if label is not None:
        from_meta = normalize_charset(label.decode("ascii", "replace"))
        # A UTF-16 label inside an ASCII-readable document is a lie the spec says to ignore.
        if from_meta and not from_meta.startswith("utf-16"):
            return from_meta
    return "utf-8"


def meta_charset(raw: bytes) -> bytes | None:
    """The charset label a <meta> in the page's first 1024 bytes names, as written (None:
    none), which `detect_encoding` reads after a BOM and the Content-Type."""
    match = _META_CHARSET.search(raw[:1024])
    return match.group(1) if match else None


# Multi-byte encodings whose every byte of a character past ASCII is past ASCII too.
_EUC = frozenset({"euc_jp", "euc_jis_2004", "euc_jisx0213"})
# ISO-2022's, HZ's and UTF-7's shifts: ASCII bytes that read as another character after them.
_SHIFTED = b"\x1b$B0!\x1b(B\x1b$)C\x0e0!\x0f~{0!~}+ADA-"


@functools.cache
def is_ascii_transparent(encoding: str) -> bool:
    """Whether every byte below 0x80 in this encoding's text is the ASCII character it is,
    never a part of another: UTF-8, the single-byte encodings, EUC-JP. Not Shift_JIS, Big5,
    GBK (a letter is a character's second byte: `ア` is `\\x83A`), GB18030 (a digit is a
    four-byte character's second or fourth: `À` is `\\x810\\x868`), nor ISO-2022-JP or HZ
    (a kanji is two ASCII bytes after a shift: `亜` is `0!`)."""
    if not is_ascii_compatible(encoding):
        return False
    name = codecs.lookup(encoding).name
    if name in _EUC:
        return True
    every_byte = bytes(range(256)).decode(name, "replace")
    return (
        len(every_byte) == 256
        and every_byte[:128] == bytes(range(128)).decode("ascii")
        and _SHIFTED.decode(name, "replace") == _SHIFTED.decode("ascii")
    )


def is_ascii_compatible(encoding: str) -> bool:
    """Whether ASCII markup can be spliced into bytes of this encoding without decoding."""
    probe = "</head><script>"
    try:
        return probe.encode(encoding) == probe.encode("ascii")
    except (LookupError, UnicodeError):
        return False
