"""shifts.jslex: the values a script holds, read in step through regexes and templates."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from shifts.jslex import JOINER, Unreadable, joined_literals, literals, read_alone
from tests.helpers.fixtures import fixture_pages
from tests.helpers.joined_texts import texts_left_open


def test_strings_templates_regexes_comments_and_object_keys_count_names_do_not() -> None:
    found = literals(
        "var wrapper = document.getElementById('main'); // the 'comment' is no value\n"
        "el.className = `box ${on ? 'is-open' : `shut-${size}`} end`;\n"
        "if (/\\bmenu\\b/.test(el.className)) render({active: on, 'x-y': 1}, a ? b : c);"
    )
    assert found == [
        "main",
        "// the 'comment' is no value",  # (its words count: see below)
        "box ",
        "is-open",
        "shut-",
        "",
        " end",
        "/ menu /",  # (`\\b` is no letter of the word)
        "active",
        "x-y",
    ]


def test_a_quote_in_a_regex_or_a_division_keeps_the_reading_in_step() -> None:
    # The quote in /"/ threw a string-only reader out of step: it read `+e+` as a string.
    assert literals('s=s.replace(/"/g,"&quot;");h="<li>"+e+"</li>";') == [
        '/"/g',
        "&quot;",
        "<li>",
        "</li>",
    ]
    assert literals("w = a / 2 + b[1] / c; t = x) / y;") == []
    assert literals("return /'/.test(s)") == ["/'/"]
    assert literals("x = {a: `${ {b: 1}.b }`}") == ["a", "", "b", ""]
    assert literals(r'x = "a\nb\u0061c\"d"') == ['a bac"d']


@pytest.mark.parametrize(
    "text",
    [
        # A regex after a condition's `)` or a block's `}`, a division after a value's `)`, a
        # postfix `++`, a keyword as a property: each misread put every later string of the
        # line out of step (the `//` of a URL then hid the rest as a comment).
        "if (ok) /'/.test(s); fetch('https://x/api'); q('.secret')",
        "function f(){}\n/'/.test(s) || go('http://x','.secret')",
        "x = (a + b) / 2; y = 'k' / 3; q('.secret')",
        "n = i++ / 2; u = 'a/b'; q('.secret', 'http://x')",
        'x.in / "a/b" + ".secret" + "http://c"',
        "x = {a: 1} / 2; q('.secret')",
        # A class's body is a block, whatever its heading: a statement starts after it.
        "class A extends B.C { m() {} }\n/'/.test(s) || go('http://x','.secret')",
        "class A { x = 1 }\n/'/.test(s); q('.secret')",
        "x = {class: {a: 1} / 2}; q('.secret')",
    ],
)
def test_regex_or_division_is_told_by_what_comes_before(text: str) -> None:
    assert ".secret" in literals(text)


def test_shorthand_keys_are_keys() -> None:
    assert literals("clsx({active, disabled: off})") == ["active", "disabled"]


@pytest.mark.parametrize(
    "text",
    ["var s = 'not closed\n';", "x = `open ${a}", "a = /* not closed", "x = [/ no end"],
)
def test_what_cannot_be_read_in_step_is_said(text: str) -> None:
    with pytest.raises(Unreadable):
        literals(text)


def test_concatenations_are_kept_with_what_is_not_known() -> None:
    chains: list[list[str | None]] = []
    literals(
        'q("a#" + S + "+*"); r = "#" + this.id + " > li" + 2; f(x) + " ~ b"; s = sel + "+*";'
        ' t = "x" + g(y) + "z"; u = `${"p" + q}`',
        None,
        chains,
    )
    assert chains == [
        ["a#", None, "+*"],
        ["#", None, " > li", None],
        [None, "+*"],
        # A call ends a chain: its arguments are values of their own.
        ["x", None],
        ["p", None],
    ]


# Pieces of scripts that leave something open at a script's end, or close what another opened:
# a page's inline scripts are read joined (`JOINER`), and each alone when that reads the same.
JS_PIECES = [
    *("x", "a.b", "1", "return", "if", "class A", "=>", "=", "+", "++", ":", ",", ".", ";"),
    *("(", ")", "{", "}", "[", "]", "/", "/re/g", "/*", "*/", "//", "// c", "\n", " "),
    *('"s"', "'t'", '"', "`", "`u${", "}`", "${", "\\", "window.main", "document.forms.f"),
    # (what reads otherwise after what a script left open: a slash, a brace, a key)
    *("/re/.test(s)", ") /x/i", "} /y/", "{k: 1} / 2", "*/ /z/", "{v}", "x = {"),
]


def _read(read: object) -> tuple[list[str], set[str], list[list[str | None]]] | str:
    free: set[str] = set()
    chains: list[list[str | None]] = []
    try:
        found = read(free, chains)  # type: ignore[operator]
    except Unreadable:
        return "unreadable"
    return found, free, chains


# What a script may leave open at its end, and what the next one may start with that reads
# otherwise after it: each pair is drawn often enough to meet.
OPENERS = ["if (", "f(", "x = {", "class A", "x = 1 // c", "x = 1 /* c", "`a${", "a", ")", "}"]
SENSITIVE = ["/re/.test(s)", ") /x/i", "} /y/", "{k: 1} / 2", "*/ /z/", "{v}", "x = {k: 1} / 2"]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_left_open(JS_PIECES, OPENERS, SENSITIVE, " ", 5))
def test_scripts_read_alone_and_joined_read_as_the_joined_text(blocks: list[str]) -> None:
    joined = _read(lambda free, chains: literals(JOINER.join(blocks), free, chains))
    assert _read(lambda free, chains: joined_literals(blocks, free, chains)) == joined


def test_what_a_script_leaves_open_is_read_joined() -> None:
    # each of these would read the next script otherwise than alone
    for opened in ("f(", "x = {", "class A", "x = 1 // c", "x = 1 /* c", "`a${"):
        reading = read_alone(opened)
        assert reading is None or not reading.joins, opened
    for closed in (
        *("f()", "x = {}", "class A {}", "x = 1 // c\n", "x = 1 /* c */", "`a${b}`"),
        'types = {"video": "video/*"}',  # (a `/*` in a string opens no comment)
    ):
        reading = read_alone(closed)
        assert reading is not None and reading.joins, closed
    # a comment that the next script closes, and a regex after it that a division would be;
    # parentheses open over more scripts than a run reads joined, then closed
    for blocks in (
        ["x = 1 /* c", "*/ /re/.test(s)"],
        ["f(", "g(", "h(", "i(", "j(", "k(", ") /a/", ") /b/", ")", ")", ")", ") /c/"],
        ["f(a", ") /b/", "`t${", "}` /c/", "if (", "x) /d/"],
    ):
        joined = _read(lambda free, chains, b=blocks: literals(JOINER.join(b), free, chains))
        assert _read(lambda free, chains, b=blocks: joined_literals(b, free, chains)) == joined


def test_saved_pages_inline_scripts_read_alone_as_joined() -> None:
    from lxml import etree

    from shifts.references.inline import _INLINE_SCRIPTS, _handlers_and_data_values, _texts

    joining = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        blocks = _texts(_INLINE_SCRIPTS, root) + _handlers_and_data_values(root)[0]
        joined = _read(lambda free, chains, b=blocks: literals(JOINER.join(b), free, chains))
        assert _read(lambda free, chains, b=blocks: joined_literals(b, free, chains)) == joined
        readings = [read_alone(block) for block in blocks[:-1]]
        joining += all(reading is not None and reading.joins for reading in readings)
    assert joining >= 7  # (most pages' scripts are read alone, once for every page)


def test_a_scripts_reading_is_kept_and_one_that_cannot_be_read_alone_too() -> None:
    assert read_alone("f(") is read_alone("f(") and read_alone('"a') is None


def test_a_script_read_joined_after_scripts_read_alone_gives_their_chains_once() -> None:
    # A script that cannot be read alone (a template, a comment another closes) has all the
    # scripts read joined: the chains of those before it, read alone, are not given again.
    for blocks in (
        ['q("li." + kind + " > a"); r(" > a")', "y = `", "`"],
        ['a = "#" + id', "x = 1; /* c", "*/ /re/.test(s)"],
        ['b + "-c"', "'"],  # (nor where all of them joined cannot be read)
    ):
        read = []
        for reader in (literals, joined_literals):
            free: set[str] = set()
            chains: list[list[str | None]] = []
            try:
                found = reader(JOINER.join(blocks) if reader is literals else blocks, free, chains)
            except Unreadable:
                found = None
            read.append((found, free, chains))
        assert read[1] == read[0], blocks
    # what a page's scripts are about is then as their joined text's: `"li." + kind + " > a"`
    # read once (its `" > a"` is also a selector of its own, `* > a`)
    from shifts.references.js import joined_js_refs, js_refs

    blocks = ('q("li." + kind + " > a"); r(" > a")', "y = `", "`")
    assert joined_js_refs(blocks) == js_refs(JOINER.join(blocks))
