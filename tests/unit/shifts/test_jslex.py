"""shifts.jslex: the values a script holds, read in step through regexes and templates."""

from __future__ import annotations

import pytest

from shifts.jslex import Unreadable, literals


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
