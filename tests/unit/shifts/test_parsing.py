"""HTML parsed into the tree a browser builds: each repair of libxml2's tree, against what
Chromium builds of the same bytes (`document.body.innerHTML`, scripting off; the whole saved
pages are held to Chromium in tests/integration/test_parse_parity.py)."""

from __future__ import annotations

import pytest
from lxml import etree

from shifts.parsing import parse_html


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
