"""The markup a script answer inserts, in its string literals: found, and put back shifted.

Rails' `.js.erb` answers carry the markup they put into the page as string literals, escaped by
`escape_javascript`: Redmine's dialogs (`$('#ajax-modal').html('<h3 class=\\'title\\'>...')`),
its issue form after a tracker change, its watchers and relations (10 of its 12 AJAX screens).
Served as they came, a `-Perc` episode shows the upstream's markup after the page's first screen;
their selectors alone finding what the page's drift renamed (`proxy.script_answer`) keeps the
app working, not the shift. So each string literal whose value is markup (after whitespace, a tag
or a comment) is shifted as a fragment of its page, as a JSON answer's markup strings are
(`proxy.json_markup`), and written back in its own quotes with JavaScript's escapes; every other
byte is the upstream's.

Only a literal that is a whole value: not a piece of a concatenation (`'<li id="' + id + '">'`),
nor a string a method is called on (`'<b>x</b>'.replace(...)`), nor an object's key: parsed
alone, a piece would be closed where another piece closes it. And not one handed to what takes
a string as text or a value (`.val()`, `.text()`, `.attr(name, ...)`, `alert()`, `.value =`,
`.textContent =`): shown or saved as written (an editor's source put into its textarea, which
the app would save back drifted), it stays as written. A text the reader cannot follow to
its end in step (`shifts.jslex.Unreadable`: no JavaScript, or cut off) has no markup read.

And only in an answer, not in a library fetched the same way: jQuery fetches the scripts of the
HTML it inserts (`.html()` with a `<script src>`) and `$.getScript()` fetches code asking for
JavaScript first too, and a library's markup is its own machinery (jQuery's feature tests,
jQuery UI's scrollbar measure, which read 200 px wrapped). A script the page's knowledge holds
as a file (`proxy.rewrite`), or one past `LIBRARY_BYTES` whose markup is under a tenth of it
(`reads_as_library`), keeps its markup as written.
"""

from __future__ import annotations

import re

from proxy.json_markup import MARKUP, NO_MARKUP, MarkupAnswer, MarkupString, spliced
from shifts import jslex

# A literal's escaped text that may hold a `<` (written, or as `\x3c`, `\u003c`, `\u{3c}`).
_MAY_HOLD_A_TAG = re.compile(r"<|\\(?:x3[cC]|u003[cC]|u\{0*3[cC]\})")
# The method a literal is the first argument of (`.html(`, `.replaceWith(`): its string's key.
_CALLED = re.compile(r"\.([A-Za-z_$][\w$]*)\(\s*$")
# What takes a string as text or a value, not markup: a call whose first argument the literal
# is, or the value of a call's named attribute or property, or of a property assigned to.
# And what keeps or matches a string as it is written: an editor's `setData()`, storage, a
# search in a string, a pattern, a comparison.
_TEXT_TAKER = re.compile(
    r"(?:\.(?:text|val|attr|prop|data|setAttribute|insertAdjacentText|createTextNode)"
    r"|\.(?:setData|setContent|setValue|setItem|indexOf|lastIndexOf|includes|startsWith)"
    r"|\.(?:endsWith|split|replace|replaceAll|match|matchAll|search)"
    r"|(?<![\w$.])(?:alert|confirm|prompt|RegExp))\(\s*$"
    r"|\.(?:attr|prop|data|setAttribute|css|setItem)\(\s*(['\"])[^'\"\\]*\1\s*,\s*$"
    r"|\.(?:textContent|innerText|value|defaultValue|title|placeholder|nodeValue)\s*\+?=\s*$"
    r"|[!=]==?\s*$"
)
# Before and after a whole value, comments aside: not `+` or `+=` (a concatenation), nor a
# template's `${` (a piece of the template), nor `.`, `[` or `:` after it (a method called on
# the string, an index into it, an object's key).
_PIECE_BEFORE = frozenset({"+", "+=", "${"})
_PIECE_AFTER = "+.[:"
# What may come between a literal and the token after it.
_SPACE_AND_COMMENTS = re.compile(r"(?:\s+|//[^\n\r\u2028\u2029]*|/\*.*?\*/)*", re.DOTALL)

_JS_ESCAPE = re.compile(
    r"\\(?:u\{0*([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})"
    # (a legacy octal escape: `\377` at most, `\47` then a 7 from `\477`)
    r"|([0-3][0-7]{0,2}|[4-7][0-7]?)"
    r"|(\r\n|[\n\r\u2028\u2029])|(.))",
    re.DOTALL,
)
_SINGLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v"}


def read_answer(text: str) -> MarkupAnswer:
    """A script's string literals that hold markup and are whole values, in order (each keyed
    by the method it is handed to, or `string`); none when the text is no script read to its
    end."""
    if "<" not in text and "\\" not in text:
        return NO_MARKUP
    spans: list[tuple[int, int, str]] = []
    try:
        jslex.literals(text, strings=spans)
    except jslex.Unreadable:
        return NO_MARKUP
    found = []
    for start, end, before in spans:
        escaped = text[start + 1 : end - 1]
        if _MAY_HOLD_A_TAG.search(escaped) is None:
            continue
        value = unescaped(escaped)
        if MARKUP.match(value) is None or _is_a_piece(text, end, before):
            continue
        if not closes_what_it_opens(value):
            continue
        if _TEXT_TAKER.search(text, max(0, start - 200), start) is not None:
            continue
        called = _CALLED.search(text, max(0, start - 64), start)
        key = called.group(1) if called else "string"
        found.append(MarkupString(start, end, key, value, escaped.isascii()))
    return MarkupAnswer(found, [])


# Past this size a script whose markup is under a tenth of it is a library (jQuery is 90 KB with
# a few hundred bytes of markup; Redmine's largest answer, its issue form, is mostly markup).
LIBRARY_BYTES = 32 * 1024


def reads_as_library(text: str, strings: list[MarkupString]) -> bool:
    """Whether a script with these markup strings is a library, not an answer (its size
    past `LIBRARY_BYTES`, its markup under a tenth of it)."""
    markup = sum(string.end - string.start for string in strings)
    return len(text) > LIBRARY_BYTES and markup * 10 < len(text)


# jQuery's `cache: false` (the default of `$.getScript()`, and of a `dataType: "script"` fetch
# that does not set it) puts `_=` and a number last in the query it asks for: the same file.
_CACHE_BUSTER = re.compile(r"[?&]_=[0-9]*$")


def without_cache_buster(url: str) -> str:
    """The URL of the file a script fetch asks for: without the `_=<number>` jQuery puts last
    in its query not to be answered from the browser's cache."""
    return _CACHE_BUSTER.sub("", url)


def _is_a_piece(text: str, end: int, before: str) -> bool:
    """Whether the literal that ends at `end`, after the token `before`, is a piece of a
    larger value (`_PIECE_BEFORE`, `_PIECE_AFTER`)."""
    skipped = _SPACE_AND_COMMENTS.match(text, end)
    assert skipped is not None  # (it matches the empty string)
    after = text[skipped.end() : skipped.end() + 1]
    return before in _PIECE_BEFORE or (after != "" and after in _PIECE_AFTER)


# A tag (its attributes' values may hold `>`), a comment, and the elements that have no end.
_TAG = re.compile(
    r"""<(/?)([A-Za-z][^\s/>]*)(?:[^>"']|"[^"]*"|'[^']*')*?(/?)>|<!--.*?-->""", re.DOTALL
)
_STRAY_TAG = re.compile(r"<[/!A-Za-z]")
# Elements whose text is no markup, read to their end tag.
_RAW_TEXT_END = {
    name: re.compile(rf"</{name}\s*>", re.IGNORECASE)
    for name in ("script", "style", "textarea", "title")
}
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param"}
    | {"source", "track", "wbr"}
)


def closes_what_it_opens(markup: str) -> bool:
    """Whether the markup closes every element it opens, in order, and holds no tag cut off:
    markup built in pieces elsewhere (`['<li class="x">', name, '</li>'].join('')`, a piece
    handed to a function that adds the rest) opens what another piece closes, which a parse of
    the one piece would close itself. One with an end tag left out (`<p>a<p>b`) is taken for a
    piece too: left as it came. A script's or style's text is no markup (Rails' inline scripts
    hold `//<![CDATA[`)."""
    open_: list[str] = []
    at = 0
    while (tag := _TAG.search(markup, at)) is not None:
        if _STRAY_TAG.search(markup, at, tag.start()) is not None:
            return False  # a `<` of a tag that does not end
        at = tag.end()
        closing, name, self_closing = tag.groups()
        if name is None:
            continue  # a comment
        name = name.lower()
        if closing:
            if not open_ or open_.pop() != name:
                return False
        elif name in _RAW_TEXT_END:
            end = _RAW_TEXT_END[name].search(markup, at)
            if end is None:
                return False
            at = end.end()
        elif name not in _VOID and not self_closing:
            open_.append(name)
    return not open_ and _STRAY_TAG.search(markup, at) is None


def unescaped(escaped: str) -> str:
    """A string literal's value from its text between the quotes (JavaScript's escapes: a
    surrogate pair written as two `\\u` escapes is one character; a lone one stays one, which
    no HTML holds, so such a string is left as it came)."""
    if "\\" not in escaped:
        return escaped
    value = _JS_ESCAPE.sub(_js_escape, escaped)
    if any("\ud800" <= char <= "\udfff" for char in value):
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    return value


def _js_escape(escape: re.Match[str]) -> str:
    braced, four, two, octal, line, other = escape.groups()
    code = braced or four or two
    if code:
        return chr(min(int(code, 16), 0x10FFFF))
    if octal:
        return chr(int(octal, 8))  # (a legacy octal escape, `\0` most of all)
    if line:
        return ""  # a line continuation
    return _SINGLE.get(other, other)


def quoted(value: str, quote: str, ascii_only: bool = False) -> str:
    """`value` as a string literal in `quote`s: what `escape_javascript` escapes (a backslash,
    the quote, line ends, `</`, which in a page's inline script would end it), and, if
    `ascii_only`, every other character past ASCII (as `\\u` escapes, an astral one as its
    surrogate pair)."""
    text = (
        value.replace("\\", "\\\\")
        .replace(quote, "\\" + quote)
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
        .replace("</", "<\\/")
    )
    if ascii_only and not text.isascii():
        text = "".join(char if char.isascii() else _u_escapes(char) for char in text)
    return quote + text + quote


def _u_escapes(char: str) -> str:
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def with_strings_replaced(
    text: str, replaced: list[tuple[MarkupString, str]], ascii_only: bool = False
) -> str:
    """The script with each of its markup literals' values replaced, in the literal's own
    quotes, the rest of it byte for byte (written back escaped to ASCII if it was, or if
    `ascii_only`)."""
    return spliced(
        text,
        replaced,
        lambda string, value: quoted(value, text[string.start], ascii_only or string.ascii_only),
    )
