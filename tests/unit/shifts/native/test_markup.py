"""The compiled scan for end tags (`shifts.native.end_tags`) against its definition, the pattern
(`parsing._end_tags_read`): the same `</p>` and `</br>`, at the same places, in every saved page
and in generated markup made of what the pattern tells apart."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shifts import native
from shifts.parsing import _end_tags, _end_tags_read
from tests.helpers.fixtures import fixture_pages


def scanned(page: bytes) -> list[tuple[int, int, str]]:
    assert native.end_tags is not None, native.why_not
    return native.end_tags(page)


def test_it_is_built_here() -> None:
    assert native.end_tags is not None, native.why_not


def test_every_saved_page_scans_alike() -> None:
    found = 0
    for page in fixture_pages():
        raw = page.read_bytes()
        assert scanned(raw) == _end_tags_read(raw) == _end_tags(raw), page.name
        found += len(scanned(raw))
    assert found > 100  # (the saved pages hold end tags: a scan that found none proves nothing)


def test_what_each_alternative_skips() -> None:
    page = (
        b"<p>a</p></p>"  # both found: the pattern does not know which close something
        b"<!-- </p> --></P ><script>x = '</p>'</SCRIPT ><textarea></br></textarea>"
        b"<a title='</p>' data-x=\"</br>\">x</a><b title=</p>>y</b></br/>"
        b"<!-- -x> </p> -->"  # a comment ends at `-->` only
        b"<i b=c'</p\x0b>"  # no tag (a quote in an unquoted value): its end tag is one
        b"</pre></p"  # no end tag of these names; one with no `>` to end it
    )
    assert scanned(page) == _end_tags_read(page)
    assert [(page[start:end], name) for start, end, name in scanned(page)] == [
        (b"</p>", "p"),
        (b"</p>", "p"),
        (b"</P >", "p"),
        (b"</br/>", "br"),
        (b"</p\x0b>", "p"),
    ]


def test_it_reads_any_bytes_like_and_refuses_what_is_none() -> None:
    assert scanned(memoryview(b"<i></br></i>")) == [(3, 8, "br")]  # type: ignore[arg-type]
    try:
        scanned("</p>")  # type: ignore[arg-type]
    except TypeError:
        return
    raise AssertionError("a string was scanned")


# What the pattern tells apart: tags' starts and ends in any case, comments, raw text elements
# and their ends, quotes, `=`, `/`, every byte `\s` holds, and bytes of no such meaning.
PIECES = st.sampled_from(
    [b"<", b">", b"/", b"</p", b"</P", b"</br", b"</bR", b"</b", b"</pre", b"<p", b"<br", b"<a"]
    + [b"<!--", b"-->", b"--", b"<!", b"<script", b"</script", b"<SCRIPT", b"</Script", b"<title"]
    + [b"</title", b"<textarea", b"</textarea", b"<style", b"</style", b"<xmp", b"</xmp"]
    + [b"<iframe", b"</iframe", b"<noembed", b"</noembed", b"<noframes", b"</noframes"]
    + [b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b'"', b"'", b"=", b"x", b"1", b"-", b"\xc3\xa9"]
    + [b"\x00", b"a=b", b' c="d"', b" e='f'", b"/>", b"->", b"-x>", b"=c'"]
)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=st.lists(PIECES, max_size=40).map(b"".join))
def test_generated_markup_scans_alike(page: bytes) -> None:
    assert scanned(page) == _end_tags_read(page)
