"""The compiled scans of a page's markup against their definitions: the scan for end tags
(`shifts.native.end_tags`) against the pattern (`parsing._end_tags_read`), the same `</p>` and
`</br>` at the same places; where tags of some names start (`tag_starts`) and which names are
followed by `=` (`assigned_names`) against `bytes.find` in the lowered page
(`document._tag_starts_read`, `_assigned_names_read`); whether a word is in a page in any case
(`contains_folded`) against the word in the lowered page (`csp.contains_folded_read`); whether
a page holds any of some words (`holds_any`) against a scan per word (`sites.holds_any_read`),
and whether it holds one (`contains`) against `word in page` (`volatile.contains_read`).
In every saved page and in generated markup made of what each tells apart."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.csp import contains_folded_read, meta_policies
from shifts import native
from shifts.document import (
    _RAW_TEXT_NAMES,
    _READ_BOOLEAN_NAMES,
    _assigned_names,
    _assigned_names_read,
    _tag_starts,
    _tag_starts_read,
)
from shifts.parsing import _end_tags, _end_tags_read, _strays_likely, _strays_likely_read
from shifts.volatile import contains_read
from sites import PROFILES, holds_any_read
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


def test_searches_that_fail_to_the_pages_end_are_answered_alike_when_asked_again() -> None:
    """Each scan keeps a search's last match (a comment's end, a raw text's, the next `>`, a
    quote's): a page of tags that each start one that never ends is read once, not once a
    tag. The same answers as the pattern's, which tries each again."""
    assert native.strays_likely is not None
    for page in (
        b"<!--x" * 50 + b"</p>",
        b"<!--x" * 20 + b"-->" + b"<!--</p>" * 20 + b"-->",
        b"<p>" + b"<xmp>" * 50 + b"</p>",
        b"<script>" * 30 + b"</script></p>" + b"<script>" * 30,
        b'<a b="' * 40 + b'"></p>',
        b"<a b='" * 20 + b"'<a b=\"></br>",
        b"<title>" * 10 + b"</title></br><style>" * 10,
    ):
        assert scanned(page) == _end_tags_read(page), page[:40]
        assert native.strays_likely(page) is _strays_likely_read(page), page[:40]


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


# ... and, for the guess whether an end tag closes nothing, the start tags that close a `<p>`
# and the names that only start as theirs do.
GUESSED = st.sampled_from(
    [b"<div", b"<DIV", b"<dl", b"<dlx", b"<h1", b"<h7", b"<Table", b"<pa", b"<P", b"<ul/", b"<hr"]
)


def test_every_saved_page_is_guessed_alike() -> None:
    assert native.strays_likely is not None, native.why_not
    guesses = []
    for page in fixture_pages():
        raw = page.read_bytes()
        guesses.append(native.strays_likely(raw))
        assert guesses[-1] == _strays_likely_read(raw) == _strays_likely(raw), page.name
    assert 0 < sum(guesses) < len(guesses)  # (both guesses: a constant one proves nothing)


def test_what_the_guess_reads() -> None:
    assert native.strays_likely is not None
    cases = {
        b"<p>a</p><p>b</P >": False,
        b"<p>a</p></p>": True,  # none opened since the last
        b"<p><div>a</div></p>": True,  # closed by the <div>
        b"<p><span>a</span></p><P class=x><b>c</b></p>": False,
        b"<p><pre>a</pre></p>": True,
        b"<p><param><path d=x></p>": False,  # (names that start as a <p>'s)
        b"<i></br></i>": True,
        b"<!-- <p> --></p>": True,  # a comment's tag is none
        b"<p><script>'<div>'</script></p>": False,  # nor a script's
        b"<p title='x>'><div></p>": True,  # (a start tag read to its first `>`)
        b"": False,
    }
    for page, likely in cases.items():
        assert native.strays_likely(page) is likely is _strays_likely_read(page), page


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=st.lists(st.one_of(PIECES, GUESSED), max_size=40).map(b"".join))
def test_generated_markup_is_guessed_alike(page: bytes) -> None:
    assert native.strays_likely is not None
    assert native.strays_likely(page) is _strays_likely_read(page)


# Names as the callers ask them, and what tells a scan's cases apart: a name that is another's
# start, one with a capital (which no lowered page holds), the empty name, a name that is `<`.
NAME_SETS = [
    _RAW_TEXT_NAMES,
    (b"/body", b"/html"),
    _READ_BOOLEAN_NAMES,
    (b"t", b"title", b"Title", b"", b"<", b"=", b"\xc3\xa9"),
]


def found_alike(page: bytes) -> int:
    """Compare the scans on `page` for every set of names; how much they found."""
    assert native.tag_starts is not None and native.assigned_names is not None
    found = 0
    for names in NAME_SETS:
        starts = native.tag_starts(page, names)
        assert starts == _tag_starts_read(page, names) == _tag_starts(page, names)
        assigned = native.assigned_names(page, names)
        assert assigned == _assigned_names_read(page, names) == _assigned_names(page, names)
        assert starts is not None and assigned is not None
        found += len(starts) + len(assigned)
    return found


def test_every_saved_page_finds_its_tags_and_names_alike() -> None:
    assert sum(found_alike(page.read_bytes()) for page in fixture_pages()) > 1_000


def test_the_names_are_found_in_any_case_and_kept_in_their_order() -> None:
    page = b"<SCRIPT><Style x><tItLe>a</title><scripts DISABLED=1 Checked = x selected="
    assert native.tag_starts is not None and native.assigned_names is not None
    assert native.tag_starts(page, _RAW_TEXT_NAMES) == [0, 8, 17, 33]
    assert native.assigned_names(page, _READ_BOOLEAN_NAMES) == [b"selected", b"disabled"]
    assert native.assigned_names(page, (b"", b"x")) == [b""]  # (`=` alone: the empty name)
    assert native.assigned_names(b"=", (b"a",)) == [] == native.tag_starts(b"<", (b"a",))
    assert native.tag_starts(b"<a<b", (b"", b"b")) == [0, 2]  # (each `<` once)
    assert native.assigned_names(b"a=b=", (b"b", b"a")) == [b"b", b"a"]  # (the last found too)


def test_what_only_the_python_scans() -> None:
    assert native.tag_starts is not None and native.assigned_names is not None
    page = b"<script a=1>"
    for names in ([b"script"], (b"script", "a"), (bytearray(b"a"),)):
        assert native.tag_starts(page, names) is None  # type: ignore[arg-type]
        assert native.assigned_names(page, names) is None  # type: ignore[arg-type]
    assert native.tag_starts(bytearray(page), (b"script",)) is None  # type: ignore[arg-type]
    assert _tag_starts(bytearray(page), (b"script",)) == [0]  # type: ignore[arg-type]
    assert _assigned_names(bytearray(page), (b"a",)) == [b"a"]  # type: ignore[arg-type]


SCANNED = st.sampled_from(
    [b"<", b"=", b"<script", b"<SCRIPT", b"<scr", b"ipt", b"<title", b"<Title", b"/body>"]
    + [b"</html", b"disabled", b"DISABLED", b"checked", b"d", b"<t", b"x", b" ", b"\xc3\xa9"]
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=st.lists(SCANNED, max_size=30).map(b"".join))
def test_generated_markup_finds_its_tags_and_names_alike(page: bytes) -> None:
    found_alike(page)


# The words a meta policy is looked for by, and what makes their compare go wrong: a word with a
# byte of no case (`-`) or of letters alone, a capital in the word, a byte past ASCII.
FOLDED_WORDS = (b"security-policy", b"policy", b"-p", b"a-", b"z-", b"-", b"", b"Policy")
FOLDED_WORDS += (b"\xc3\xa9", b"-\x00")  # (a page's bytes end in a 0 past its length)


def contains_alike(page: bytes) -> int:
    assert native.contains_folded is not None, native.why_not
    found = 0
    for word in FOLDED_WORDS:
        answer = native.contains_folded(page, word)
        assert answer is contains_folded_read(page, word), (page[:80], word)
        found += answer
    return found


def test_every_saved_page_asks_its_words_alike() -> None:
    assert sum(contains_alike(page.read_bytes()) for page in fixture_pages()) > 10


def test_a_word_is_found_in_any_case_at_either_end() -> None:
    assert native.contains_folded is not None
    for page in (
        b"SECURITY-POLICY",
        b"x Security-Policy",
        b"security-pOLICYx",
        b"a-security-policy",
    ):
        assert native.contains_folded(page, b"security-policy")
    for page in (b"security-polic", b"ecurity-policy", b"security policy", b"securit-y-policy"):
        assert not native.contains_folded(page, b"security-policy")
    assert native.contains_folded(b"ab", b"AB") is False  # (a capital matches no lowered byte)
    assert native.contains_folded(b"", b"") and not native.contains_folded(b"", b"a")
    assert native.contains_folded(memoryview(b"xA-b"), bytearray(b"a-b"))  # (any bytes-like)


def test_a_meta_policy_is_found_in_any_case() -> None:
    page = b"<head><META HTTP-EQUIV='Content-SECURITY-Policy' content=\"script-src 'self'\">"
    assert meta_policies(page) == ["script-src 'self'"]
    assert meta_policies(page.replace(b"SECURITY", b"SECURE")) == []


FOLDED = st.sampled_from(
    [b"s", b"S", b"-", b"p", b"P", b"ecurity", b"ECURITY", b"olicy", b"a", b"Z", b"\xc3"]
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=st.lists(FOLDED, max_size=30).map(b"".join))
def test_generated_pages_ask_their_words_alike(page: bytes) -> None:
    contains_alike(page)


# The site signatures' literals, and words that make a window's moves go wrong: two bytes (the
# shortest a window can be), one byte and none (looked for apart), a word whose first bytes are
# another's, and one that shares its last two bytes with another's start.
LITERALS = tuple(
    dict.fromkeys(
        literal for profile in PROFILES.values() for literal in profile.signature_literals
    )
)
HELD = (b"ab", b"abcab", b"bca", b"cabcabca", b"c", b"", b"\x00a", b"a\x00", b"ab\x00")


def holds_alike(page: bytes, words: tuple[bytes, ...]) -> bool:
    assert native.holds_any is not None, native.why_not
    answer = native.holds_any(page, words)
    assert answer is holds_any_read(page, words), (page[:80], words)
    return answer


def test_every_saved_page_holds_the_literals_alike() -> None:
    held = 0
    for page in fixture_pages():
        raw = page.read_bytes()
        for literal in LITERALS:  # (each alone: where it is, if it is anywhere)
            held += holds_alike(raw, (literal,))
        held += holds_alike(raw, LITERALS) + holds_alike(raw.replace(b"/", b"|"), LITERALS)
    assert held > 50


def test_a_word_is_found_wherever_it_is() -> None:
    word = b"/wp-content/"
    for at in range(0, 40):
        page = b"x" * at + word + b"y" * (39 - at)
        assert (
            holds_alike(page, LITERALS)
            and holds_alike(page[: at + len(word) - 1], (word,)) is False
        )
    assert holds_alike(word, LITERALS) and not holds_alike(word[1:], LITERALS)
    assert not holds_alike(b"", LITERALS) and holds_alike(b"", (b"",))
    assert not holds_alike(b"abc", ()) and holds_alike(b"abc", (b"toolongaword", b"c"))
    # A word past the page's end is compared with none of what is there (a 0 byte: its end).
    assert not holds_alike(b"xxa", (b"zz", b"xa\x00")) and holds_alike(b"xxa", (b"zz", b"xa"))


def test_a_page_or_a_word_that_is_no_bytes_is_left_to_the_python() -> None:
    """`in` reads other kinds its own way: a `memoryview`'s items are numbers (the Python says
    no to `b"ab" in memoryview(b"xaby")`), a `str` word is refused (TypeError)."""
    assert native.holds_any is not None and native.contains is not None
    assert native.holds_any(b"abc", (b"ab", "ab")) is None
    assert native.holds_any(b"abc", (b"ab", bytearray(b"ab"))) is None
    assert native.holds_any(memoryview(b"xaby"), (b"ab",)) is None
    assert native.holds_any(bytearray(b"xaby"), (b"ab",)) is None
    assert native.contains(memoryview(b"xaby"), b"ab") is None
    assert native.contains(b"xaby", bytearray(b"ab")) is None
    assert native.contains(b"xaby", "ab") is None


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    page=st.lists(
        st.sampled_from([b"a", b"b", b"c", b"ab", b"\x00", b"abc", b"x"]), max_size=40
    ).map(b"".join),
    words=st.lists(st.sampled_from(HELD), max_size=4).map(tuple),
)
def test_generated_pages_hold_their_words_alike(page: bytes, words: tuple[bytes, ...]) -> None:
    holds_alike(page, words)


def holds_word_alike(page: bytes, word: bytes) -> bool:
    assert native.contains is not None, native.why_not
    answer = native.contains(page, word)
    assert answer is contains_read(page, word), (page[:80], word)
    return answer


def test_every_saved_page_contains_its_own_words_and_not_others() -> None:
    held = 0
    for page in fixture_pages():
        raw = page.read_bytes()
        for at in range(0, len(raw), max(1, len(raw) // 50)):  # (its own bytes, anywhere)
            for length in (1, 2, 10, 40):
                held += holds_word_alike(raw, raw[at : at + length])
        for word in (b"a3f9c2e1d0", b"\x00\x00", raw[-10:], raw[:10], raw + b"x", b""):
            holds_word_alike(raw, word)
    assert held > 1000


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    page=st.lists(st.sampled_from([b"a", b"b", b"ab", b"\x00", b"ba"]), max_size=30).map(b"".join),
    word=st.lists(st.sampled_from([b"a", b"b", b"\x00"]), max_size=5).map(b"".join),
)
def test_generated_pages_contain_their_words_alike(page: bytes, word: bytes) -> None:
    holds_word_alike(page, word)
