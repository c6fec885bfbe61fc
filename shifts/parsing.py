"""HTML parsed into the tree a browser builds of the same bytes.

The shifts edit an lxml tree (libxml2's HTML parser: fast, and the elements' own API), and a
changed page is served as that tree written out. libxml2 parses HTML 4 as it was in 2000, not
as browsers do: where it builds another tree, the page served is another page, and element
paths (the change maps', the structural rules') are not the browser's. What it is known to
build otherwise on real pages is repaired here, each repair held to Chromium's tree
(`tests/integration/test_parse_parity.py`):

- an end tag that closes nothing (`</p>`, `</br>`) is the element a browser makes of it;
- a `<form>` in a list, a heading, a `<pre>` or an `<address>` stays in it (libxml2 closed them);
- a table's rows in no section are in the `<tbody>` a browser adds;
- a page nested deeper than libxml2 reads at all is refused, never cut short.
"""

from __future__ import annotations

import re
from typing import cast

from lxml import etree

from shifts import native
from shifts.encoding import is_ascii_compatible, libxml2_encoding

# libxml2's error when a page is past what it parses (its depth with `huge_tree`): it stops.
_RESOURCE_LIMIT = etree.ErrorTypes.ERR_RESOURCE_LIMIT
MAX_DEPTH = 2048


class UnparsablePage(ValueError):
    """A page the parser would not read whole: shifting it would drop some of it."""


def _past_the_parser(message: str) -> str:
    if "depth" in message.lower():
        return (
            f"the page nests elements deeper than the parser reads ({MAX_DEPTH} levels): "
            "what is deeper would be dropped"
        )
    return f"the parser stopped before the page's end ({message.strip()})"


# What the repairs below read past: a comment, and an element whose content is text to libxml2
# as to a browser (a tag named in it is none; `<style-guide>` is no `<style>`).
_COMMENT_OR_RAW_TEXT = (
    rb"<!--.*?-->|<(script|style|textarea|title|xmp|iframe|noembed|noframes)(?=[\s/>])[^>]*>"
    rb".*?</\1\s*>"
)
# ... and a tag's attributes, their values with them (a Bootstrap popover's
# `data-content="<p>...</p>"` holds end tags that are text): any start tag whole, the last
# alternative of a pattern.
_ATTRIBUTES = rb"(?:\s+[^\s\"'>/=]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'>]+))?|\s*/)*\s*>"
_START_TAG = rb"|<[A-Za-z][^\s/>]*" + _ATTRIBUTES


def parse_html(source: bytes, encoding: str) -> etree._Element:
    """The page's tree as a browser builds it (see above). `UnparsablePage` for a page libxml2
    would read only in part."""
    # The plain etree parser: lxml.html's element-class lookup costs ~30% on big pages.
    # `huge_tree`: libxml2 stops at 256 levels of nesting otherwise, where Chromium renders 512
    # (and flattens what is deeper).
    parser = etree.HTMLParser(
        encoding=libxml2_encoding(encoding), remove_comments=False, huge_tree=True
    )
    ascii_compatible = is_ascii_compatible(encoding)
    root = None
    if ascii_compatible and _strays_likely(source):
        # (The page `_parsed_and_repaired` would parse again: parsed so at once.)
        root = _parsed_with_end_tags_marked(source, parser)
    if root is None:
        root = _parsed_and_repaired(source, parser, ascii_compatible)
    _add_implied_table_bodies(root)
    return root


def _parsed_and_repaired(
    source: bytes, parser: etree.HTMLParser, ascii_compatible: bool
) -> etree._Element:
    """The page parsed, and parsed again where libxml2 reports what a repair mends."""
    root = etree.fromstring(source, parser)
    errors = _errors_of(parser)
    if root is None:
        # lxml returns None for documents with no element at all (e.g. only whitespace).
        return cast(etree._Element, etree.fromstring(b"<html></html>", parser))
    if ascii_compatible:
        kept = _with_forms_in_place(source, parser, errors)
        if kept is not None:
            source, root, errors = kept
        if _reports_stray_end_tags(errors):
            reparsed = _with_stray_end_tags(source, parser)
            root = root if reparsed is None else reparsed
        _name_forms_again(root)
    return root


def _errors_of(parser: etree.HTMLParser) -> list[str]:
    """The parse's error messages; `UnparsablePage` if libxml2 stopped before the end."""
    messages = []
    for error in parser.error_log:
        if error.type == _RESOURCE_LIMIT:
            # libxml2 dropped the rest of the page: never served as if it were all.
            raise UnparsablePage(_past_the_parser(error.message))
        messages.append(error.message)
    return messages


# libxml2 closes an open list, heading, `<pre>`, `<address>`, `<menu>` or `<dir>` when a `<form>`
# starts, where a browser closes only an open `<p>`: a navigation bar's logout form in its
# `<ul>` (Bootstrap's, django-oscar's dashboard) was served after the list. Where libxml2 then
# finds that element's end tag closing nothing, the page is parsed again with each form under a
# name libxml2 closes nothing for, and named a form again; kept only where each such form sits
# where a browser puts a form: in no `<p>` (a browser closes it), in no other form (a browser
# ignores a form in a form), and in no table part (a browser moves it), and where the reparse
# leaves no such end tag closing nothing.
_CLOSED_BY_A_FORM = re.compile(r"Unexpected end tag : (?:ul|ol|dl|menu|dir|pre|address|h[1-6])\b")
_FORM_TAG_OR_SKIPPED = re.compile(
    _COMMENT_OR_RAW_TEXT + rb"|<(/?)form(?=[\s/>])" + _ATTRIBUTES + _START_TAG,
    re.IGNORECASE | re.DOTALL,
)
_FORM_STAND_IN = "form-kept-3d1e7b"  # (a page holding it already is parsed as libxml2 does)
_NO_FORM_INSIDE = frozenset({"p", "table", "thead", "tbody", "tfoot", "tr", _FORM_STAND_IN})


def _with_forms_in_place(
    source: bytes, parser: etree.HTMLParser, errors: list[str]
) -> tuple[bytes, etree._Element, list[str]] | None:
    if not any(_CLOSED_BY_A_FORM.match(message) for message in errors):
        return None
    if _FORM_STAND_IN.encode() in source:
        return None
    renamed, position, count = [], 0, 0
    for found in _FORM_TAG_OR_SKIPPED.finditer(source):
        slash = found.group(2)
        if slash is None:  # a comment or a raw-text element: kept as it is
            continue
        renamed += [source[position : found.start()], b"<", slash, _FORM_STAND_IN.encode()]
        position = found.start() + len(b"<form") + len(slash)  # (its attributes as they are)
        count += not slash
    kept = b"".join(renamed) + source[position:]
    root = etree.fromstring(kept, parser)
    kept_errors = _errors_of(parser)
    if root is None or any(_CLOSED_BY_A_FORM.match(message) for message in kept_errors):
        return None
    forms = list(root.iter(_FORM_STAND_IN))
    if len(forms) != count or _STAND_IN_ELSEWHERE(root):
        return None  # a tag inside an attribute value, or one libxml2 did not keep
    for form in forms:
        if any(ancestor.tag in _NO_FORM_INSIDE for ancestor in form.iterancestors()):
            return None
    return kept, root, kept_errors


# The stand-in's name anywhere but as an element's (an attribute's value, a text).
_STAND_IN_ELSEWHERE = etree.XPath(
    f"boolean(//@*[contains(., '{_FORM_STAND_IN}')] | //text()[contains(., '{_FORM_STAND_IN}')]"
    f" | //comment()[contains(., '{_FORM_STAND_IN}')])"
)


def _name_forms_again(root: etree._Element) -> None:
    for form in root.iter(_FORM_STAND_IN):
        form.tag = "form"


# A browser makes an element of an end tag that has nothing to close: `</p>` with no open <p>
# an empty <p> (templates that wrap rich text in a paragraph, `<p>{{ html }}</p>`, close one
# twice), and `</br>` a <br>. libxml2 drops both, so a parsed page would lose those elements,
# and every later sibling its position. Where libxml2 reports one, the page is parsed again
# with a comment marking each such end tag, and the comment becomes the element a browser makes
# there (in the element then open: a comment moves no tag as an element would, which closes
# an open <i> or <span> in libxml2).
_STRAY_END_TAG = re.compile(r"Unexpected end tag : (?:p|br)\b")
_END_TAG_OR_SKIPPED = re.compile(
    _COMMENT_OR_RAW_TEXT + rb"|</(p|br)(?=[\s/>])[^>]*>" + _START_TAG, re.IGNORECASE | re.DOTALL
)
_ERRORS_LOGGED = 100  # (libxml2 logs a parse's first 100 errors, no more)
_END_TAG_MARK = "end-tag-3d1e7b"  # (a page holding it already is parsed as libxml2 does)


def _reports_stray_end_tags(errors: list[str]) -> bool:
    return any(_STRAY_END_TAG.match(message) for message in errors)


def _end_tags(source: bytes) -> list[tuple[int, int, str]]:
    """Each `</p>` and `</br>` of the page outside its comments, raw text and tags, as (start,
    end, its name in lower case). In C where it can be (`shifts.native`): the pattern is tried
    at every tag of the page, which costs about what parsing it does."""
    return native.either(native.end_tags, _end_tags_read, source)


def _end_tags_read(source: bytes) -> list[tuple[int, int, str]]:
    """`_end_tags` in Python: its definition, which the C one follows."""
    return [
        (found.start(), found.end(), found.group(2).lower().decode())
        for found in _END_TAG_OR_SKIPPED.finditer(source)
        if found.group(2) is not None  # (else a comment, a raw text or a tag: skipped)
    ]


def _with_stray_end_tags(source: bytes, parser: etree.HTMLParser) -> etree._Element | None:
    """The page parsed with an empty <p> for each `</p>` that closes nothing and a <br> for
    each `</br>`, as a browser builds it; None where that cannot be done safely (a marker would
    land in an attribute). Of a page in an ASCII-compatible encoding (`parse_html`)."""
    marked = _marked(source)
    return None if marked is None else _placed(etree.fromstring(marked[0], parser), len(marked[1]))


# The start tags that close an open `<p>` (the HTML standard's list, the common ones of it).
_CLOSES_A_P = frozenset(
    b"address article aside blockquote details div dl fieldset figure footer form h1 h2 h3 h4"
    b" h5 h6 header hr main menu nav ol pre section table ul".split()
)
# `_END_TAG_OR_SKIPPED`, with the start tags' names, each read to its first `>` (a guess needs
# no attribute's value read past a `>` in it: half the time).
_TAG_OR_SKIPPED = re.compile(
    _COMMENT_OR_RAW_TEXT + rb"|</(p|br)(?=[\s/>])[^>]*>|<([A-Za-z][^\s/>]*)[^>]*>",
    re.IGNORECASE | re.DOTALL,
)


def _strays_likely(source: bytes) -> bool:
    """Whether an end tag of `_end_tags` likely closes nothing: a `</br>`, or a `</p>` with
    no `<p>` open, none since the last `</p>` or one a start tag closed (`<p><div>...</div>
    </p>`: GitLab's dropdowns). Only a guess, read from the bytes (libxml2 alone knows): a page
    guessed so is parsed with its end tags marked at once, and else parsed again once libxml2
    reports one, the same tree either way. In C where it can be (`shifts.native`): it reads
    every tag of the page, as `_end_tags` does."""
    return native.either(native.strays_likely, _strays_likely_read, source)


def _strays_likely_read(source: bytes) -> bool:
    """`_strays_likely` in Python: its definition, which the C one follows."""
    opened = False
    for found in _TAG_OR_SKIPPED.finditer(source):
        end_tag, start_tag = found.group(2), found.group(3)
        if end_tag is not None:
            if end_tag.lower() == b"br" or not opened:
                return True
            opened = False
        elif start_tag is not None:
            name = start_tag.lower()
            if name == b"p":
                opened = True
            elif name in _CLOSES_A_P:
                opened = False
    return False


def _parsed_with_end_tags_marked(source: bytes, parser: etree.HTMLParser) -> etree._Element | None:
    """What `parse_html` makes of a page whose end tags close nothing, in one parse: the page
    parsed with its end tags marked, the marks made the elements a browser makes. None where
    `parse_html`'s own steps must make it: a marker that cannot be placed, a page with no
    element, a `<form>` libxml2 moves (that repair reads the page's own parse), a page whose
    end tags libxml2 does not report as closing nothing (a wrong guess: then parsed as it is,
    as `parse_html` would). `tests/unit/shifts/test_parsing.py` holds the two ways alike."""
    marked = _marked(source)
    if marked is None:
        return None
    page, ends = marked
    breaks = [source[start:end] for start, end, name in ends if name == "br"]
    # (A `</br>` is marked in its place: a byte in it libxml2 cannot decode, where it stops
    # reading the page, is gone from the marked page.)
    if not all(tag.isascii() for tag in breaks):
        return None
    root = etree.fromstring(page, parser)
    errors = _errors_of(parser)
    if root is None or any(_CLOSED_BY_A_FORM.match(message) for message in errors):
        return None
    # The page's own parse reports what the marked page's does, and an error for each `</br>`
    # (marked in its place): where libxml2 reports no `</p>` closing nothing, or may have
    # stopped reporting (it logs a parse's first 100 errors), whether `parse_html` would parse
    # it again is not known here (`<p><i><table></p>`: a `</p>` in a table within a paragraph
    # left open is not reported, and the page's own parse is kept).
    if len(errors) + len(breaks) >= _ERRORS_LOGGED - 10 or not _reports_stray_end_tags(errors):
        return None
    root = _placed(root, len(ends))
    if root is not None:
        _name_forms_again(root)  # (as `parse_html` does of the page it parses again)
    return root


def _marked(source: bytes) -> tuple[bytes, list[tuple[int, int, str]]] | None:
    """The page with a comment marking each of its `</p>` and `</br>`, and those end tags
    (`_end_tags`); None if the page holds the mark already."""
    if _END_TAG_MARK.encode() in source:
        return None
    ends = _end_tags(source)
    marked: list[bytes] = []
    position = 0
    for start, end, name in ends:
        marked += [source[position:start], f"<!--{_END_TAG_MARK} {name}-->".encode()]
        if name == "p":  # (a matched </p> still closes its paragraph)
            marked.append(source[start:end])
        position = end
    return b"".join(marked) + source[position:], ends


def _placed(root: etree._Element | None, count: int) -> etree._Element | None:
    """The marked page's tree with each mark the element a browser makes there, or taken out
    where its end tag closed its element; None unless the tree holds `count` marks."""
    marks = [
        comment
        for comment in (root.iter(etree.Comment) if root is not None else ())
        if (comment.text or "").startswith(_END_TAG_MARK)
    ]
    if root is None or len(marks) != count:
        return None  # a marker inside an attribute, or one libxml2 did not keep
    for mark in marks:
        name = (mark.text or "").split()[-1]
        parent = mark.getparent()
        table = _table_of(parent)
        # (In a table's rows, no paragraph is in scope: the table bounds the search.)
        closes_nothing = (
            name == "br" or table is not None or not any(a.tag == "p" for a in mark.iterancestors())
        )
        if table is not None:
            # Between a table's rows a browser puts the element before the table (it is
            # "foster-parented"), as it does text and any other tag there.
            _remove_keeping_tail(mark)
            table.addprevious(etree.Element(name))
        elif closes_nothing and parent is not None and parent.tag not in ("html", "head"):
            element = etree.Element(name)
            element.tail = mark.tail
            parent.replace(mark, element)
        else:
            _remove_keeping_tail(mark)
    return cast(etree._Element, root)


# What a table body holds once a row opened it: a browser inserts these into the `<tbody>` it
# implied, until a section or caption of the table's own, or the table's end, closes it.
_IN_TABLE_BODY = frozenset({"tr", "script", "style", "template"})


def _add_implied_table_bodies(root: etree._Element) -> None:
    """A browser puts a table's rows that are in no section in a `<tbody>` it adds (the
    "in table" insertion mode), libxml2 leaves them children of the table: each row's element
    path (`table/tr[2]` against the browser's `table/tbody/tr[2]`) and what `table > tr` and
    `tbody > tr` rules match would differ from what the agent's browser holds. Served, the
    body is written out, and the browser builds the same tree of it."""
    for table in root.iter("table"):
        children = list(table)
        start = 0
        while start < len(children):
            if children[start].tag != "tr":
                start += 1
                continue
            end = start
            while end < len(children) and (
                not isinstance(children[end].tag, str) or children[end].tag in _IN_TABLE_BODY
            ):
                end += 1
            body = table.makeelement("tbody")
            children[start].addprevious(body)
            body.extend(children[start:end])  # (their tails with them, as the browser's)
            start = end


_TABLE_PARTS = ("table", "tbody", "thead", "tfoot", "tr")


def _table_of(parent: etree._Element | None) -> etree._Element | None:
    """The table whose structure `parent` is (the table, a row group or a row), if it is."""
    while parent is not None and parent.tag in _TABLE_PARTS:
        if parent.tag == "table":
            return parent if parent.getparent() is not None else None
        parent = parent.getparent()
    return None


def _remove_keeping_tail(node: etree._Element) -> None:
    parent = node.getparent()
    if parent is None:
        return
    if node.tail:
        previous = node.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + node.tail
        else:
            parent.text = (parent.text or "") + node.tail
    parent.remove(node)
