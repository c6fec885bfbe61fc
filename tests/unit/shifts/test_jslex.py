"""shifts.jslex: the values a script holds, read in step through regexes and templates."""

from __future__ import annotations

import pytest

from shifts.jslex import Unreadable, literals


def test_strings_templates_regexes_and_object_keys_are_values_names_are_not() -> None:
    found = literals(
        "var wrapper = document.getElementById('main'); // the 'comment' is no value\n"
        "el.className = `box ${on ? 'is-open' : `shut-${size}`} end`;\n"
        "if (/\\bmenu\\b/.test(el.className)) render({active: on, 'x-y': 1}, a ? b : c);"
    )
    assert found == [
        "main",
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
    ["var s = 'not closed\n';", "x = `open ${a}", "a = /* not closed", "x = [/ no end"],
)
def test_what_cannot_be_read_in_step_is_said(text: str) -> None:
    with pytest.raises(Unreadable):
        literals(text)
