"""The markup a script answer inserts, in its string literals (`proxy.script_markup`): found
where it is a whole value, and written back so that JavaScript reads the value given."""

from __future__ import annotations

import random
import string
import time

import pytest

from proxy.script_markup import (
    closes_what_it_opens,
    quoted,
    read_answer,
    unescaped,
    with_strings_replaced,
)

# Redmine's members/new.js.erb, its partial escaped by `escape_javascript`.
NEW_MEMBER = (
    "$('#ajax-modal').html('<h3 class=\\'title\\'>New member<\\/h3>\\n"
    '<form id=\\"new_membership\\"><input id=\\"principal_search\\" name=\\"q\\"><\\/form>\');\n'
    "showModal('ajax-modal', '90%');\n"
)


def test_a_rails_answer_s_markup_is_read_with_its_escapes_undone() -> None:
    (found,) = read_answer(NEW_MEMBER).strings
    assert found.key == "html"
    assert found.value == (
        "<h3 class='title'>New member</h3>\n"
        '<form id="new_membership"><input id="principal_search" name="q"></form>'
    )
    assert NEW_MEMBER[found.start] == "'" and NEW_MEMBER[found.end - 1] == "'"
    assert found.ascii_only


@pytest.mark.parametrize(
    "script",
    [
        "el.innerHTML = '<li id=\"' + id + '\">' + name + '</li>';",  # pieces of a concatenation
        "x = head + '<b>bold</b>';",
        "x = '<b>{0}</b>'.replace('{0}', name);",  # a method called on the string
        "x = '<b>a</b>'[0];",
        "x = {'<b>key</b>': 1};",  # an object's key
        "x = `<b>${name}</b>`;",  # a template literal: its pieces are the code's
        "x = 'a <b>late</b> tag';",  # text first: no markup
        "x = '< 3';",
        "x = /'<b>'/.test(s);",  # a regex, not a string
        "// '<b>in a comment</b>'",
        "x = '<b>cut off",  # no script read to its end
        # text or a value, not markup: shown or saved as written
        "$('#wiki_text').val('<p>an editor\\'s source</p>');",
        "$('#x').text(\"<b>shown</b>\");",
        "$('#x').attr('title', '<b>a tip</b>');",
        "el.setAttribute(\"data-template\", '<li>x</li>');",
        "area.value = '<p>draft</p>';",
        "el.textContent += '<b>x</b>';",
        "alert('<b>failed</b>');",
        "document.createTextNode('<i>x</i>');",
        "CKEDITOR.instances.body.setData('<p class=\"x\">source</p>');",
        "localStorage.setItem('draft', '<p>x</p>');",
        "if (html.indexOf('<li class=\"item\">') > 0) {}",
        "re = new RegExp('<b class=\"item\">(.*?)</b>');",
        "if (html === '<p>empty</p>') {}",
        # markup built in pieces elsewhere: each opens what another closes, or is cut off
        "html = ['<li class=\"x\">', name, '</li>'].join('');",
        "open('<div class=\"panel\"><ul>'); items(); close('</ul></div>');",
        "x = f('<a href=\"');",
        "x = f('<p>one<p>two');",
        # pieces all the same: a comment between a piece and its `+` or method, `+=`, a
        # template's substitution (each shifted alone, its open tag was closed before the rest)
        "h = '<li class=\"a\">' /* its name */ + name + '</li>';",
        "h = '<li class=\"a\">' // its name\n + name + '</li>';",
        "h = head +\n// the row\n'<li class=\"a\">';",
        "h = '<b>a</b>' /* trimmed */ .trim();",
        "h = ''; h += '<li class=\"a\">'; h += name; h += '</li>';",
        "x = `<ul>${'<li class=\"a\">'}${name}</li></ul>`;",
        "x = `${a}${'<li class=\"a\">'}${name}</li>`;",
    ],
)
def test_what_is_no_whole_markup_value_is_not_read(script: str) -> None:
    assert read_answer(script).strings == []


def test_markup_written_with_escaped_tags_and_in_either_quote_is_read() -> None:
    script = 'a.append("\\x3cp>one\\x3c/p>"); b.after(\'\\u003Cspan>two</span>\'); c = "<i>3</i>"'
    found = read_answer(script).strings
    assert [(s.key, s.value) for s in found] == [
        ("append", "<p>one</p>"),
        ("after", "<span>two</span>"),
        ("string", "<i>3</i>"),
    ]


def test_escapes_are_javascript_s() -> None:
    assert (
        unescaped(
            r"a\nb\tc\\d\'e\"f\/g\x41\u0042\u{43}\0\
h"
        )
        == "a\nb\tc\\d'e\"f/gABC\0h"
    )
    assert unescaped(r"\ud83d\ude00") == "\U0001f600"  # a surrogate pair: one character
    assert unescaped(r"\ud83d") == "\ud83d"  # a lone one stays (no HTML holds it)
    # a legacy octal escape is at most 3 digits, and 2 from \4 on; \u{} takes any zeros
    assert unescaped(r"\477\400\1234\08\8") == "'7" + " 0" + "S4" + "\0" + "8" + "8"
    assert unescaped(r"\u{00000003c}b>") == "<b>"


def test_many_markup_literals_are_read_in_linear_time() -> None:
    """A few MB of answer (each literal was followed by a copy of all the text before it and
    after it: 40 000 took 15 s). Four times the literals take about four times the CPU time,
    not sixteen: the least of two reads of each, side by side, so the ratio holds on a slow
    or busy machine as on a fast one (linear gives 3-4 here; the quadratic reading, 15 s at
    40 000, about 10)."""

    def least_cpu_seconds(count: int) -> float:
        script = "".join(
            f"$('#r{i}').html('<li class=\"r\">row {i}</li>');\n" for i in range(count)
        )
        times = []
        for _ in range(2):
            started = time.process_time()
            assert len(read_answer(script).strings) == count
            times.append(time.process_time() - started)
        return min(times)

    assert least_cpu_seconds(20000) < 8 * least_cpu_seconds(5000)


ALPHABET = string.printable.replace("<", "") + "'\"\\>/\u2028\u2029é😀\u0000"


@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_value_written_back_reads_as_it_was_given(quote: str) -> None:
    """Written in the literal's own quotes and read back (as the reader reads a script, which
    is JavaScript's reading of its escapes): the same value, for any text."""
    draw = random.Random(7)
    for ascii_only in (False, True):
        for _ in range(300):
            text = "".join(draw.choice(ALPHABET) for _ in range(draw.randint(0, 40)))
            value = f"<b>{text}</b>"  # (whole markup, its text any characters but a tag's `<`)
            literal = quoted(value, quote, ascii_only)
            assert "\n" not in literal and "\r" not in literal and "</" not in literal
            assert not ascii_only or literal.isascii()
            (found,) = read_answer(f"$(x).html({literal});").strings
            assert found.value == value, (value, literal)


def test_only_the_markup_is_rewritten_every_other_byte_as_it_came() -> None:
    (found,) = read_answer(NEW_MEMBER).strings
    out = with_strings_replaced(NEW_MEMBER, [(found, "<h3 class='t1'>New member</h3>")])
    assert out == NEW_MEMBER.replace(
        NEW_MEMBER[found.start : found.end], "'<h3 class=\\'t1\\'>New member<\\/h3>'"
    )
    assert out.endswith("showModal('ajax-modal', '90%');\n")
    assert with_strings_replaced(NEW_MEMBER, []) == NEW_MEMBER


def test_markup_that_closes_what_it_opens_is_whole() -> None:
    assert closes_what_it_opens('<div class="a"><br><img src="x" alt="a > b"><i/></div>')
    assert closes_what_it_opens("<!-- <b> --><p>text</p>\n")
    assert closes_what_it_opens("<UL><li>a</li></ul>")
    # (Rails' javascript_tag: a script's text is no markup)
    script = "<script>\n//<![CDATA[\nif (a<b) $('<p>');\n//]]>\n</SCRIPT ><b>x</b>"
    assert closes_what_it_opens(script) and not closes_what_it_opens("<script>a<b")
    for piece in ["<li>", "</li>", "<b><i></b></i>", '<a href="', "<p>a<p>b</p>"]:
        assert not closes_what_it_opens(piece), piece
