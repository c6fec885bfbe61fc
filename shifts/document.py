"""An HTML document under rewrite: raw bytes first, an lxml tree only when a shift asks for one.

Injections that only add markup (a popup runtime, a stylesheet) are spliced into the bytes
without parsing, so an execution-only page costs a search, not a parse. Shifts that change
structure ask for `tree`, mark the document changed, and it is serialized once at the end.
"""

from __future__ import annotations

import re
from typing import cast

from lxml import etree

from shifts.encoding import detect_encoding, is_ascii_compatible

_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)
_DOCTYPE = re.compile(rb"<!doctype[^>]*>", re.IGNORECASE)
_BODY_START = re.compile(rb"<body(?:\s[^>]*)?>", re.IGNORECASE)


class HtmlDocument:
    def __init__(self, raw: bytes, header_charset: str | None = None) -> None:
        self.original = raw
        self.encoding = detect_encoding(raw, header_charset)
        self._tree: etree._Element | None = None
        self._tree_changed = False
        self._bytes_edits: list[tuple[bytes, bytes]] = []
        self._head_markup: list[str] = []
        # What each shift did on this page (shift name -> summary), recorded as an event.
        self.notes: dict[str, object] = {}
        # Results shifts share on this page (e.g. the protected elements), computed once.
        self.cache: dict[str, object] = {}
        # Configuration for the client runtime, filled by shifts; one runtime tag carries it all.
        self.runtime: dict[str, object] = {}

    @property
    def changed(self) -> bool:
        return self._tree_changed or bool(self._head_markup) or bool(self._bytes_edits)

    @property
    def tree(self) -> etree._Element:
        """The parsed document (parsed once, on first use). Call mark_changed() after edits."""
        if self._tree is None:
            # The plain etree parser: lxml.html's element-class lookup costs ~30% on big pages.
            parser = etree.HTMLParser(encoding=self.encoding, remove_comments=False)
            root = etree.fromstring(self._apply_bytes_edits(self.original), parser)
            if root is None:
                # lxml returns None for documents with no element at all (e.g. only whitespace).
                root = etree.fromstring(b"<html></html>", parser)
            self._tree = root
        return self._tree

    def mark_changed(self) -> None:
        self._tree_changed = True

    def inject_head(self, markup: str) -> None:
        """Add markup at the end of <head> (or the start of <body>, or the end of the document).

        Markup is inserted in order of calls and must be ASCII so it splices into any
        ASCII-compatible encoding unchanged.
        """
        self._head_markup.append(markup)

    def replace_bytes(self, old: bytes, new: bytes) -> int:
        """Replace every occurrence of an ASCII byte string (e.g. an origin in absolute URLs).

        Returns how many occurrences the original holds; zero leaves the document unchanged.
        """
        if is_ascii_compatible(self.encoding):
            count = self.original.count(old)
        else:
            count = self.original.decode(self.encoding, "replace").count(old.decode("ascii"))
        if count:
            self._bytes_edits.append((old, new))
        return count

    def to_bytes(self) -> bytes:
        """The document as it should be served; the original bytes when nothing changed."""
        if not self.changed:
            return self.original
        if self._tree is not None and self._tree_changed:
            body = cast(
                bytes,
                etree.tostring(self._tree.getroottree(), method="html", encoding=self.encoding),
            )
            if not _DOCTYPE.search(self.original[:4096]):
                # libxml2 invents an HTML 4.0 doctype for pages that have none, which would move
                # a quirks-mode page into another rendering mode: drop it again.
                body = _DOCTYPE.sub(b"", body, count=1).lstrip(b"\n")
        else:
            body = self._apply_bytes_edits(self.original)
        if self._head_markup:
            body = _splice_head(body, "".join(self._head_markup), self.encoding)
        return body

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


def _splice_head(body: bytes, markup: str, encoding: str) -> bytes:
    if not is_ascii_compatible(encoding):
        text = body.decode(encoding, "replace")
        spliced = _splice_head(text.encode("utf-8"), markup, "utf-8")
        return spliced.decode("utf-8").encode(encoding, "xmlcharrefreplace")
    insert = markup.encode("ascii", "xmlcharrefreplace")
    head_end = _HEAD_END.search(body)
    if head_end:
        return body[: head_end.start()] + insert + body[head_end.start() :]
    body_start = _BODY_START.search(body)
    if body_start:
        return body[: body_start.end()] + insert + body[body_start.end() :]
    return body + insert
