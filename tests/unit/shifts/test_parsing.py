"""HTML parsed into the tree a browser builds: each repair of libxml2's tree, against what
Chromium builds of the same bytes (`document.body.innerHTML`, scripting off; the whole saved
pages are held to Chromium in tests/integration/test_parse_parity.py)."""

from __future__ import annotations

from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import parsing
from shifts.parsing import parse_html
from tests.helpers.fixtures import fixture_pages


def body_of(markup: bytes) -> bytes:
    root = parse_html(b"<html><body>" + markup + b"</body></html>", "utf-8")
    body = root.find("body")
    assert body is not None
    inner = (body.text or "").encode() + b"".join(
        etree.tostring(child, method="html") for child in body
    )
    return inner


@pytest.mark.parametrize(
    ("markup", "built"),
    [
        # A navigation bar's logout form in its list (django-oscar's dashboard): libxml2 closed
        # the list at the form, and the page was served with the form after it.
        (
            b'<ul class="nav"><li>a</li><form id="f"><button>x</button></form></ul><p>after</p>',
            b'<ul class="nav"><li>a</li><form id="f"><button>x</button></form></ul><p>after</p>',
        ),
        (b"<h3>T<form><input name=q></form></h3>", b'<h3>T<form><input name="q"></form></h3>'),
        (b"<ol><form></form><li>1</li></ol>", b"<ol><form></form><li>1</li></ol>"),
        (b"<pre><form>x</form></pre>", b"<pre><form>x</form></pre>"),
        # A form closes an open paragraph, in a browser too; the `</p>` then makes an empty one.
        (b"<p>x<form><input></form></p>", b"<p>x</p><form><input></form><p></p>"),
        # A form named in a comment or a script is no form.
        (
            b"<ul><!-- <form> --><li>a</li><script>'<form>'</script></ul>",
            b"<ul><!-- <form> --><li>a</li><script>'<form>'</script></ul>",
        ),
    ],
)
def test_a_form_stays_where_a_browser_keeps_it(markup: bytes, built: bytes) -> None:
    assert body_of(markup) == built


def test_a_form_in_a_form_is_parsed_as_before() -> None:
    """A browser ignores a form's start tag inside a form, which the stand-in cannot tell:
    libxml2's tree is kept (what it was before)."""
    nested = b"<form><ul><form><b>n</b></form></ul></form>"
    assert body_of(nested) == b"<form><ul></ul></form><form><b>n</b></form>"


def test_an_end_tag_or_a_form_in_an_attribute_value_is_text() -> None:
    """A Bootstrap popover holds HTML in an attribute (`data-content="<p>...</p>"`): its tags
    are text, and the page's own stray end tags and forms are repaired all the same (the page
    was parsed as libxml2 does, when a repair's mark would have landed in the attribute)."""
    built = body_of(
        b"<div>a</div></p><a data-content=\"<p>x</p>\" title='</br>'>t</a>"
        b'<ul><li>1</li><form data-x="<form>" action=/go>f</form></ul>'
    )
    assert built == (
        b'<div>a</div><p></p><a data-content="&lt;p&gt;x&lt;/p&gt;" title="&lt;/br&gt;">t</a>'
        b'<ul><li>1</li><form data-x="&lt;form&gt;" action="/go">f</form></ul>'
    )


# What the guess whether an end tag closes nothing must never change: the tree. Pages made of
# paragraphs, the tags that close one, end tags that close nothing or something, tables (where
# libxml2 reports no `</p>` inside a paragraph opened outside), forms, raw text and comments.
PARSED_PIECES = st.sampled_from(
    [b"<p>", b"</p>", b"<P class=x>", b"</P >", b"<br>", b"</br>", b"<div>", b"</div>", b"x"]
    + [b"<table>", b"</table>", b"<tr>", b"<td>", b"</td>", b"<ul>", b"<li>", b"</ul>", b"\n"]
    + [b"<form>", b"</form>", b"<h1>", b"</h1>", b"<pre>", b"<span>", b"</span>", b"<head>"]
    + [b"<!-- c -->", b"<script>x='</p>'</script>", b"<textarea></p></textarea>", b"<body>"]
    + [b"<a title='</p>'>", b"</a>", b"<select>", b"<option>", b"<caption>", b"<dl><dt>"]
)


def parsed_as(page: bytes, guess: bool, encoding: str = "utf-8") -> bytes:
    with patch.object(parsing, "_strays_likely", lambda source: guess):
        return etree.tostring(parse_html(page, encoding).getroottree(), method="html")


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=st.lists(PARSED_PIECES, min_size=1, max_size=30).map(b"".join))
def test_a_page_guessed_either_way_is_the_same_tree(page: bytes) -> None:
    assert parsed_as(page, True) == parsed_as(page, False)


def test_every_saved_page_guessed_either_way_is_the_same_tree() -> None:
    guessed = 0
    for path in fixture_pages():
        page = path.read_bytes()
        assert parsed_as(page, True) == parsed_as(page, False), path.name
        guessed += parsing._strays_likely(page)
    assert guessed >= 2  # (GitLab's project page and Magento's home are parsed marked at once)


def test_an_end_tag_libxml2_does_not_report_is_parsed_as_libxml2_does_guessed_or_not() -> None:
    """A `</p>` in a table within a paragraph opened outside it: libxml2 reports nothing, so
    the page's own parse is kept, and a page guessed to need the marks takes them all out."""
    page = b"<p><i><table></p></table>"
    assert b"<p><i><table></table></i></p>" in parsed_as(page, True) == parsed_as(page, False)


@pytest.mark.parametrize(
    ("page", "encoding"),
    [
        # libxml2 logs a parse's first 100 errors: the `</br>` past them is not reported, and
        # the page's own parse is kept.
        (b"<a id=x></a>" * 101 + b"x</br>", "utf-8"),
        (b"</x>" * 100 + b"x</br><p><div></div></p>", "utf-8"),
        # A byte libxml2 cannot decode in a `</br>`: it stops reading the page there.
        (b"x</br \x81><p><div></div></p>", "windows-1252"),
        # The page's own element of the name the repair of forms gives them.
        (b"<form-kept-3d1e7b></p>", "utf-8"),
    ],
)
def test_what_only_the_pages_own_parse_tells_is_parsed_alike_guessed_or_not(
    page: bytes, encoding: str
) -> None:
    assert parsed_as(page, True, encoding) == parsed_as(page, False, encoding)


def test_a_paragraph_closed_twice_is_parsed_once() -> None:
    """The page the guess finds is parsed once: marked at once, not parsed and parsed again."""
    page = b"<p><div>a</div></p><p>b</p>"
    parses = []
    original = etree.fromstring

    def counted(*args: object, **kwargs: object) -> object:
        parses.append(args[0])
        return original(*args, **kwargs)  # type: ignore[arg-type]

    with patch.object(parsing.etree, "fromstring", counted):
        tree = parse_html(page, "utf-8")
    assert len(parses) == 1
    assert [e.tag for e in tree.iter("p", "div")] == ["p", "div", "p", "p"]
