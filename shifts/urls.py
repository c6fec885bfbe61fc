"""A link's target as a browser's URL parser reads it, as far as it reads it alike in every part
of a URL (path, query, fragment) and every scheme: what the serializer writes for a link lxml
cannot write back as it came, and what the alignment checker compares links by."""

from __future__ import annotations

from urllib.parse import quote

# What the parser drops: C0 controls and spaces at either end, tabs and newlines anywhere.
_ENDS = "".join(map(chr, range(0x21)))
# What every part of a URL percent-encodes: the other C0 controls, space, `"`, `<`, `>`, DEL.
# (Not `` ` ``, `{`, `}`, `'`, `^`: encoded in some parts only.)
_ENCODED = {c: f"%{c:02X}" for c in (*range(0x21), 0x22, 0x3C, 0x3E, 0x7F)} | {
    0x09: None,
    0x0A: None,
    0x0D: None,
}
_ASCII = "".join(map(chr, range(0x21, 0x7F)))  # (what `quote` leaves as it is)


def as_requested(url: str, utf8: bool = False) -> str:
    """`url` with what the parser drops dropped and what every part encodes encoded; with
    `utf8` (a UTF-8 page's link, whose query is encoded in UTF-8 as its path and fragment are),
    its non-ASCII characters encoded too. Two links alike so request the same resource."""
    url = url.strip(_ENDS).translate(_ENCODED)
    return quote(url, safe=_ASCII) if utf8 and not url.isascii() else url
