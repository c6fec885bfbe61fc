"""shifts.volatile: what counts as a per-request value, and how two loads' values are told apart."""

from __future__ import annotations

import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shifts import volatile
from shifts.parsing import parse_html
from tests.helpers.fixtures import fixture_pages

RUN = re.compile(r"[A-Za-z0-9_-]+")


def masked_by_definition(text: str) -> str:
    """The definition, word by word: every maximal run of `[A-Za-z0-9_-]` that holds a digit
    and is 8 or more long becomes `#`."""
    return RUN.sub(
        lambda run: (
            "#"
            if len(run.group()) >= volatile.MIN_LENGTH and re.search("[0-9]", run.group())
            else run.group()
        ),
        text,
    )


def assert_refused(*pairs: tuple[bytes, bytes]) -> None:
    """No swap tells each page's next load from it: it is shifted afresh."""
    for old, new in pairs:
        assert volatile.swaps(old, new) is None, old


def test_mask_replaces_whole_runs_of_eight_or_more_with_a_digit() -> None:
    assert volatile.mask("/item/7?_wpnonce=ab12cd34ef") == "/item/7?_wpnonce=#"
    assert volatile.mask("12. Lorem ipsum consectetur") == "12. Lorem ipsum consectetur"
    assert volatile.mask("abcdefg1 abcdefg abcdef1") == "# abcdefg abcdef1"
    assert volatile.mask("x-1234567_y.é9876543210") == "#.é#"


def test_a_names_random_runs_are_keyed_and_its_counters_are_its_own() -> None:
    assert volatile.name_key("tasty_recipes_rating_input_6a0f6f8893708") == (
        "tasty_recipes_rating_input_#"
    )
    assert volatile.name_key("field-3fa85f64-5717-4562-b3fc-2c963f66afa6") == "field-#"
    assert volatile.name_key("item-1733412345") == "item-#"
    for counter in ("post-12345678", "menu-item-678", "day-20241205", "abcdefgh"):
        assert volatile.name_key(counter) == counter


def test_mask_agrees_with_the_definition_on_random_text() -> None:
    rng = random.Random(7)
    alphabet = "ab9Z_-. /é?=&1"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert volatile.mask(text) == masked_by_definition(text), text


def test_mask_text_masks_a_texts_numbers_and_its_volatile_values() -> None:
    assert volatile.mask_text("Universal time is 2026-12-05 22:52:40.") == (
        "Universal time is # #:#:#."
    )
    assert volatile.mask_text("Token ab12cd34ef, 3 comments") == "Token #, # comments"
    rng = random.Random(11)
    alphabet = "ab9Z_-. /é?=&1"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert volatile.mask_text(text) == re.sub("[0-9]+", "#", masked_by_definition(text))


def test_swaps_finds_the_values_two_loads_differ_by() -> None:
    old = b'<a href="/x?n=ab12cd34ef">x</a><input value="ab12cd34ef"><p>hi</p>'
    new = b'<a href="/x?n=zz98yy76xx">x</a><input value="zz98yy76xx"><p>hi</p>'
    assert volatile.swaps(old, new) == volatile.Swaps({b"ab12cd34ef": b"zz98yy76xx"})
    # A difference in a class (which a shift decides by) is not a swap.
    assert volatile.swaps(b'<p class="ab12cd34ef">', b'<p class="zz98yy76xx">') is None
    assert volatile.swaps(old, old) is None


def test_a_value_in_a_scripts_text_is_swapped_whatever_the_script_compares() -> None:
    # WordPress writes its admin's settings, the request's time among them, after a CDATA
    # opener in a comment: a `<` that opens no tag.
    script = b'<script>\n/* <![CDATA[ */\nvar userSettings = {"time":"%s"}; if (a<b) {}\n</script>'
    old, new = script % b"1796510964", script % b"1796510965"
    assert volatile.swaps(old, new) == volatile.Swaps({b"1796510964": b"1796510965"})
    style = b"<style>a<b{} .x{background:url(/i.png?v=%s)}</style>"
    assert volatile.swaps(style % b"ab12cd34ef", style % b"zz98yy76xx") is not None
    # In a tag after the script has ended, the value is a name again: not swapped.
    tag = b'<script>var s = "<style>"; x = a<b</script><p class="%s">'
    assert volatile.swaps(tag % b"ab12cd34ef", tag % b"zz98yy76xx") is None
    tag = b'<script>if (a<b) {}</script><p id="%s">'
    assert volatile.swaps(tag % b"ab12cd34ef", tag % b"zz98yy76xx") is None
    # Nor in the start tag of a script.
    tag = b'<p>a<b<script id="%s">x()</script>'
    assert volatile.swaps(tag % b"ab12cd34ef", tag % b"zz98yy76xx") is None


def test_a_script_or_style_start_tag_only_a_tokenizer_reads_opens_a_raw_text() -> None:
    """A `<script`/`<style` that opens no raw text (in a comment, an attribute's value, a
    title's text; `<scripts>`, `<script-x>`; a lower-case one ended in upper case) leaves a
    class after it a name: not swapped. One in upper case does open one."""
    for before in (
        b"<!-- <script> -->",
        b'<p title="<style>">x</p>',
        b"<title>a <script> b</title>",
        b"<textarea><style></textarea>",
        b"<scripts>",
        b"<script-x>x</script-x><style-guide>",
        b"<script>if (a<b) {}</SCRIPT>",
        b"<style>a{}</STYLE >",
    ):
        tag = before + b'<div class="card-%s">'
        assert volatile.swaps(tag % b"zz12yy34xx", tag % b"qq98ww76vv") is None, before
    script = b'<SCRIPT type="x>y">/* <![CDATA[ */ if (a<b) {} var t = "%s";</SCRIPT><p>'
    assert volatile.swaps(script % b"zz12yy34xx", script % b"qq98ww76vv") is not None


def test_a_value_the_old_page_holds_already_is_not_swapped() -> None:
    """The new value names an id of the page (or a script's word): a shift decides by how
    often a name occurs, so the page is shifted afresh."""
    page = b'<div id="box-zz12yy34xx"></div><script>if (a<b) {} var t = "%s";</script>'
    assert volatile.swaps(page % b"tok-ab12cd34ef", page % b"box-zz12yy34xx") is None
    assert volatile.swaps(page % b"tok-ab12cd34ef", page % b"box-qq98ww76vv") is not None


def test_a_value_in_a_tag_is_judged_by_the_attribute_a_tokenizer_reads_it_in() -> None:
    """A `>` in an earlier attribute's value ends no tag: a class after it is a name (not
    swapped), a link or a data attribute after it carried (swapped). A class in a tag in a
    `<noscript>`, after a comment as a tokenizer ends it, in the tag's own name, or in an
    unclosed tag is a name too; a comment's text is carried."""
    for tag in (
        b'<p title="a>b" class="card-%s">x</p>',
        b"<p data-bind='visible: n > 0' id=\"box-%s\">x</p>",
        b'<p title=">" class=card-%s>x</p>',
        b'<noscript><img class="lazy-%s" src="/i.png"></noscript>',
        b"<href=%s>",
        b'<p class="x" title="a>b" id="%s',
        b'<!--><p class="card-%s">x</p>',
        b'<!-- a --!><p class="card-%s">x</p>',
        b'<p title="<!--" class="card-%s">-->',
        # The page's encoding, whose name looks like a value (`iso-8859-2`).
        b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-%s">',
    ):
        assert volatile.swaps(tag % b"zz12yy34xx", tag % b"qq98ww76vv") is None, tag
    meta = b'<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=iso-8859-%s">'
    assert volatile.swaps(meta % b"1", meta % b"2") is None
    for tag in (
        b'<a title="a>b" href="/p?n=%s">x</a>',
        b"<p title='<b>' data-nonce=%s>x</p>",
        b'<p title="a>b">the key %s, and x > y</p>',
        b"<p>a<b<script>var t = '%s';</script>",
        b"<!-- cached at %s, a > b --><p>x</p>",
    ):
        assert volatile.swaps(tag % b"zz12yy34xx", tag % b"qq98ww76vv") is not None, tag


MARKER = "zz12yy34xx"
# Pieces of markup that tokenizers read in surprising ways: quotes, `<` and `>` in values,
# comments ended early or late, raw texts, end tags with attributes, unclosed things.
PIECES = st.sampled_from(
    [
        "<p>", "</p>", "<div>", "</div>", "<span>", "<a>", "</a>", "<br/>", "x", " ", ">", "<",
        "a > b", "a<b", "<!-- c -->", "<!-->", "<!--->", "--!>", "-->", "<!-- ", "<!x>",
        "<?x>", "<script>", "</script>", "</SCRIPT >", "<style>", "</style>", "<title>",
        "</title>", "<textarea>", "</textarea>", "<noscript>", "</noscript>", "<![CDATA[",
        "]]>", "</p class=x>", "'", '"', "=", "/", "<scripts>", "<script-x>", "\n", "<xmp>",
    ]
)  # fmt: skip
ATTRIBUTE_NAMES = st.sampled_from(["class", "id", "title", "href", "data-x", "value", "for"])
ATTRIBUTE_VALUES = st.sampled_from(
    ["", "a", "a>b", "a<b", "<!--", "-->", "</script>", "'", '"', "x y", MARKER]
)


@st.composite
def tags(draw: st.DrawFn) -> str:
    """A start tag with attributes, quoted in any of the three ways, the marker maybe among
    its values."""
    parts = ["<" + draw(st.sampled_from(["p", "a", "div", "img", "input", "SPAN"]))]
    for _ in range(draw(st.integers(0, 3))):
        name, value = draw(ATTRIBUTE_NAMES), draw(ATTRIBUTE_VALUES)
        quote = draw(st.sampled_from(['"', "'", ""]))
        parts.append(f"{draw(st.sampled_from([' ', '/', '  ']))}{name}={quote}{value}{quote}")
    return "".join(parts) + draw(st.sampled_from([">", "/>", " >", ""]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(PIECES, tags(), st.just(MARKER)), min_size=1, max_size=14))
def test_a_value_judged_carried_is_in_no_name_the_parser_reads(pieces: list[str]) -> None:
    """Whatever the markup, a value the swap would carry (`_carried_everywhere`) is in no
    attribute a shift decides by, nor in a tag's or an attribute's name, of the tree the
    shifts parse (libxml2's, as `parse_html` repairs it)."""
    page = ("<html><body>" + "".join(pieces) + "</body></html>").encode()
    if MARKER.encode() not in page or not volatile._carried_everywhere(page, MARKER.encode()):
        return
    for element in parse_html(page, "utf-8").iter():
        assert MARKER not in str(element.tag), page
        for name, value in element.attrib.items():
            assert MARKER not in name, page
            if MARKER in value:
                assert name in {"href", "value"} or name.startswith("data-"), page


def test_a_number_in_a_text_is_spliced_where_it_is() -> None:
    """A response time in a script's text, a clock's seconds in a text, a count in a comment:
    each a number of its own at its place, the per-request values beside them swapped as
    before. Not where a coin reads it unmasked (an attribute), where the word is an id or a
    class, where a letter differs, nor where the length does."""
    page = (
        b'<a href="/p?n=%s">x</a><p>Universal time is 22:52:%s.</p><!-- %s queries -->'
        b'<script>mw.config.set({"wgBackendResponseTime":%s});</script>'
    )
    old = page % (b"ab12cd34ef", b"47", b"12", b"372")
    new = page % (b"zz98yy76xx", b"48", b"13", b"356")
    found = volatile.swaps(old, new)
    assert found is not None and found.values == {b"ab12cd34ef": b"zz98yy76xx"}
    assert [(n.before, n.after, old[n.position : n.position + 2]) for n in found.numbers] == [
        (b"47", b"48", b"47"),
        (b"12", b"13", b"12"),
        (b"372", b"356", b"37"),
    ]
    text = found.numbers[0]
    assert old[text.text_start : text.text_end] == b"Universal time is 22:52:47."
    # Whole numbers of other lengths: each where it is in the old page.
    longer = page % (b"zz98yy76xx", b"9", b"123", b"52")
    found = volatile.swaps(old, longer)
    assert found is not None and [
        (old[n.position : n.position + len(n.before)], n.after) for n in found.numbers
    ] == [(b"47", b"9"), (b"12", b"123"), (b"372", b"52")]
    assert_refused(
        (b'<p title="at 47">x</p>', b'<p title="at 48">x</p>'),
        (b'<a href="/p?t=47">x</a>', b'<a href="/p?t=48">x</a>'),
        (b'<p id="48">x</p><p>at 47</p>', b'<p id="48">x</p><p>at 48</p>'),
        (b'<p class="a 47">x</p><p>at 47</p>', b'<p class="a 47">x</p><p>at 48</p>'),
        (b"<p>at 4a</p>", b"<p>at 4b</p>"),
        (b"<p>at 47 s</p>", b"<p>at 123s</p>"),
        (b"<script>t = 47;</script>", b"<script>t = 123</script>"),
    )


def test_a_number_in_a_data_value_and_a_word_in_a_hidden_value_are_spliced() -> None:
    """Wagtail's editor: an editing session's counter in a `data-*` value (a URL a script
    reads), Draft.js's random block keys in a hidden input's JSON (any word: no shift reads a
    hidden input's value). Each is spliced at its place, named by its attribute. A number in
    another attribute, another word in a `data-*` value or in a shown input's value, and a
    word of a hidden value that is an id, are not."""
    page = (
        b'<div data-w-swap-src-value="/admin/sessions/ping/4/%s/"><a href="/x">x</a></div>'
        b'<input type="hidden" name="body" value="{&quot;key&quot;: &quot;%s&quot;}">'
    )
    old, new = page % (b"14", b"jl3ez"), page % (b"15", b"y9d4r")
    found = volatile.swaps(old, new)
    assert found is not None and not found.values
    assert [(n.before, n.after, n.attribute) for n in found.numbers] == [
        (b"14", b"15", b"data-w-swap-src-value"),
        (b"jl3ez", b"y9d4r", b"value"),
    ]
    assert volatile.swaps(page % (b"9", b"abcde"), page % (b"10", b"fghij")) is not None
    assert_refused(
        (b'<div data-step="a">x</div>', b'<div data-step="b">x</div>'),
        (b'<input type="text" value="jl3ez">', b'<input type="text" value="y9d4r">'),
        (b'<input value="jl3ez">', b'<input value="y9d4r">'),
        (
            b'<input type="text" type="hidden" value="ab">',
            b'<input type="text" type="hidden" value="cd">',
        ),
        (b'<button value="jl3ez">x</button>', b'<button value="y9d4r">x</button>'),
        (
            b'<p id="y9d4r">x</p><input type="hidden" value="jl3ez">',
            b'<p id="y9d4r">x</p><input type="hidden" value="y9d4r">',
        ),
        (b'<input type="hidden" value="&#47;">', b'<input type="hidden" value="&#48;">'),
    )


def test_a_value_the_parser_does_not_give_an_element_as_written_is_no_word_to_splice() -> None:
    """A hidden input's tag in a textarea's or a title's text (text to the parser), an
    attribute a tag has twice past the first (dropped), a second `<body>` (dropped), and a
    data value's number that a script reads joined to a word or in an attribute test once its
    references are decoded, or over a line's end: not spliced. The first of a name, and a
    reference away from the number, are."""
    assert_refused(
        (
            b'<textarea><input type="hidden" value="jl3ez"></textarea>',
            b'<textarea><input type="hidden" value="y9d4r"></textarea>',
        ),
        (
            b'<title><input type="hidden" value="jl3ez"></title>',
            b'<title><input type="hidden" value="y9d4r"></title>',
        ),
        (b'<div data-u="/a/" data-u="/b/7/">x</div>', b'<div data-u="/a/" data-u="/b/8/">x</div>'),
        (
            b'<input type="hidden" value="a" VALUE="jl3ez">',
            b'<input type="hidden" value="a" VALUE="y9d4r">',
        ),
        (b'<body><p>x</p><body data-u="/b/7/">', b'<body><p>x</p><body data-u="/b/8/">'),
        (b'<div data-t="[data-k&#61;3]">x</div>', b'<div data-t="[data-k&#61;4]">x</div>'),
        (b'<div data-t="&#91;data-k=3]">x</div>', b'<div data-t="&#91;data-k=4]">x</div>'),
        (b'<div data-t="[data-k=\n3]">x</div>', b'<div data-t="[data-k=\n4]">x</div>'),
        (b'<div data-t="#row&#45;3">x</div>', b'<div data-t="#row&#45;4">x</div>'),
        (b'<div data-t="#row-3&#45;x">x</div>', b'<div data-t="#row-4&#45;x">x</div>'),
        (b'<style>[*|data-k="3"] > a {}</style>', b'<style>[*|data-k="4"] > a {}</style>'),
    )
    for old, new in (
        (
            b'<div data-u="/b/7/" data-v="/b/7/">x</div>',
            b'<div data-u="/b/8/" data-v="/b/7/">x</div>',
        ),
        (b'<div data-u="/b?a=1&amp;n=7">x</div>', b'<div data-u="/b?a=1&amp;n=8">x</div>'),
        (b'<body data-u="/b/7/"><p>x</p>', b'<body data-u="/b/8/"><p>x</p>'),
    ):
        assert volatile.swaps(old, new) is not None, old


def test_a_character_code_is_no_number() -> None:
    """Digits that code a character (a reference, a script's or a style's escape) are not a
    number spliced in: the character they code is another, and read as it is."""
    assert_refused(
        (b"<p>Weather &#9728; today</p>", b"<p>Weather &#9729; today</p>"),
        (b"<p>Weather &#x2601; today</p>", b"<p>Weather &#x2602; today</p>"),
        (b"<p>Area m&sup2; here</p>", b"<p>Area m&sup3; here</p>"),
        (b'<script>q(".item-\\x33")</script>', b'<script>q(".item-\\x34")</script>'),
        (b'<script>q(".item-\\u{33}")</script>', b'<script>q(".item-\\u{34}")</script>'),
        (b"<style>.\\31 0 {}</style>", b"<style>.\\32 0 {}</style>"),
    )
    assert volatile.swaps(b"<p>at 47 s</p>", b"<p>at 48 s</p>") is not None


def test_a_number_in_a_script_that_is_part_of_a_name_is_not_spliced() -> None:
    """A script's word that a name of the page holds (a suffix it appends, `id + "-3"`, a
    prefix, `"row3-" + n`) is a name's part: a number there is not spliced. Where no name
    holds it, or in a text, it is."""
    suffix = b'<p id="note-4">x</p><script>f(base + "-%s");</script>'
    prefix = b'<p class="a row4-b">x</p><script>f("row%s-" + k);</script>'
    for page in (suffix, prefix):
        assert volatile.swaps(page % b"3", page % b"4") is None, page
    assert volatile.swaps(suffix % b"6", suffix % b"7") is not None
    text = b'<p id="note-4">x</p><p>%s items</p>'
    assert volatile.swaps(text % b"3", text % b"4") is not None


def test_a_number_in_an_id_that_is_no_word_is_not_spliced() -> None:
    """An id with a character no word has is counted where it occurs, words or not: a number
    whose digits are part of a mention of it in one load (`x.15`, then `x.25`) is not
    spliced; one beside no such id is."""
    page = '<p id="%s">x</p><p>Version %s released</p>'
    for element_id, before, after in (
        ("x.1", "x.15", "x.25"),
        ("x.1", "x.25", "x.15"),
        ("form:f1", "form:f12", "form:f22"),
        ("caf\u00e91", "caf\u00e915", "caf\u00e925"),
    ):
        old, new = ((page % (element_id, text)).encode() for text in (before, after))
        assert volatile.swaps(old, new) is None, old
    old, new = ((page % ("y.1", text)).encode() for text in ("x.15", "x.25"))
    assert volatile.swaps(old, new) is not None


def test_a_number_that_is_a_name_as_the_parser_reads_it_is_not_spliced() -> None:
    """A tag's or an attribute's name in another case (a selector's `h3` selects an `<H3>`,
    `[DATA-K3]` a `data-k3`), an id or a class written with a reference (`row&#45;4` is
    `row-4`): a number that makes a word one of them, in a data value or a script, is not
    spliced. One that makes no name is."""
    assert_refused(
        (b'<div data-t="h3 > a">x</div><H3>y</H3>', b'<div data-t="h4 > a">x</div><H3>y</H3>'),
        (
            b'<div data-t="[DATA-K3]">x</div><p data-k3="1">y</p>',
            b'<div data-t="[DATA-K4]">x</div><p data-k3="1">y</p>',
        ),
        (b'<script>q("h3 > a")</script><H3>y</H3>', b'<script>q("h4 > a")</script><H3>y</H3>'),
        (
            b'<div data-x="row-3">x</div><p id="row&#45;4">y</p>',
            b'<div data-x="row-4">x</div><p id="row&#45;4">y</p>',
        ),
        (
            b'<div data-x="c3">x</div><p class="a c&#x34;">y</p>',
            b'<div data-x="c4">x</div><p class="a c&#x34;">y</p>',
        ),
    )
    assert volatile.swaps(
        b'<div data-x="row-3">x</div><p id="row&#45;5">y</p>',
        b'<div data-x="row-4">x</div><p id="row&#45;5">y</p>',
    )


def test_a_number_of_another_length_that_a_coin_reads_in_a_longer_run_is_not_spliced() -> None:
    """A coin reads a container's text across its tags and references, masked: a number of
    another length that the word beside it makes a run of 8 or more with one of the two
    (`Inbox4`, masked `Inbox#`, then `Inbox372`, masked `#`) is not spliced. One of the same
    length, one beside a space, or one whose run is short either way (`4Row`, `372Row`) is."""
    for markup in (
        b"<p>Inbox<b>%s</b></p>",
        b"<p>In&#98;ox<b>%s</b></p>",
        b"<p>%s<i>seconds</i></p>",
    ):
        assert volatile.swaps(markup % b"4", markup % b"372") is None, markup
        assert volatile.swaps(markup % b"372", markup % b"4") is None, markup
        assert volatile.swaps(markup % b"4", markup % b"5") is not None, markup
    for markup in (b"<p>Inbox <b>%s</b></p>", b"<td>%s</td><td>Row</td>", b"<!--x-->%s<p>y</p>"):
        assert volatile.swaps(markup % b"4", markup % b"372") is not None, markup


def odd_ids_by_definition(page: bytes) -> frozenset[bytes]:
    """Every id attribute of every start tag, read as the parser reads it, that holds a
    character no word has and a digit: the definition `_odd_ids` finds by a shorter way."""
    markup = volatile._markup(page)
    found = set()
    for start, end, kind in zip(markup.starts, markup.ends, markup.kinds, strict=True):
        if kind is not volatile._Kind.START_TAG:
            continue
        for attribute in volatile._attributes(page, start, end):
            if attribute.group(1).lower() != b"id":
                continue
            text = volatile._as_read(volatile._unquoted(attribute.group(2) or b""))
            if not set(text) <= volatile.WORD_BYTES and re.search(rb"[0-9]", text):
                found.add(text)
    return frozenset(found)


# Pieces of markup around ids, each a way an id is written or a place that only looks like one.
ID_PIECES = [
    '<p id="x.1">a</p>',
    "<p ID = 'form:f2'>a</p>",
    "<p id=caf\u00e93>a</p>",
    '<p title="t"id="x.4">a</p>',  # (a name right after a value's quote)
    "<p/id=x.5>a</p>",
    '<p id="x&#46;6">a</p>',  # (a reference: the id is `x.6`)
    '<p id="x&#x2e;y">a</p>',
    '<p id="row7">a</p>',  # (a word: not counted)
    '<p data-id="x.8">a</p>',
    '<p "id="x.9">a</p>',  # (the name is `"id`)
    "<p title='id=\"x.10\"'>a</p>",  # (in a value)
    "<script>var s = '<p id=\"x.11\">';</script>",
    '<!-- <p id="x.12"> -->',
    '<title><p id="x.13"></title>',  # (a tag in a title's text: read as the parser reads tags)
    '<p id="x.14" id="x.15">a</p>',
    '<p id="x.16',  # (unclosed, to the end of the page)
    "<p id=x.17/>a</p>",
    "<p\tid\n=\n'x:18'>a</p>",
    '<p xid="x.19" idx="x.20">a</p>',
    "text id=x.21 and id = 'x.22'",
    '<p id="a\'23">a</p>',  # (a quote in the value: no word's character)
    "<p id='b\"24'>a</p>",
    '<!-- id=" -->',  # (a value to the next quote: an id's there, in the next piece, is read)
    "<p title=' id=' id=\"x.26\">a</p>",  # (one in a value, then the id, in one tag)
]


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(ID_PIECES), max_size=8))
def test_the_ids_that_are_no_words_are_found_as_every_tag_read_finds_them(
    pieces: list[str],
) -> None:
    page = ("<html><body>" + "".join(pieces) + "</body></html>").encode()
    assert volatile._odd_ids(page) == odd_ids_by_definition(page)


def test_the_ids_that_are_no_words_of_the_saved_pages() -> None:
    for path in fixture_pages():
        page = path.read_bytes()
        assert volatile._odd_ids(page) == odd_ids_by_definition(page), path


def test_each_way_of_writing_an_id_is_found() -> None:
    """The pieces one by one: what counts, and what only looks like an id."""
    counted = {
        0: b"x.1",
        1: b"form:f2",
        2: "caf\u00e93".encode(),
        3: b"x.4",
        4: b"x.5",
        5: b"x.6",
        13: b"x.13",
        16: b"x.17/",
        20: b"a'23",
        21: b'b"24',
        23: b"x.26",
    }
    for index, piece in enumerate(ID_PIECES):
        page = ("<body>" + piece + "</body>").encode()
        expected = {counted[index]} if index in counted else set()
        if index == 14:
            expected = {b"x.14", b"x.15"}
        if index == 15:
            expected = {b"x.16</body>"}
        if index == 17:
            expected = {b"x:18"}
        assert volatile._odd_ids(page) == expected, piece


def is_a_name_by_definition(page: bytes, word: bytes) -> bool:
    """The definition, occurrence by occurrence: `word` whole somewhere in a start tag but an
    attribute's value other than an id's or a class's, or a word of an id or a class as the
    parser reads it, or a tag's or an attribute's name in any case."""
    whole = re.compile(rb"(?<![A-Za-z0-9_-])" + re.escape(word) + rb"(?![A-Za-z0-9_-])")
    markup = volatile._markup(page)
    for occurrence in whole.finditer(page):
        at = markup.span_at(occurrence.start())
        if at is not None and markup.kinds[at] is volatile._Kind.START_TAG:
            name = volatile._attribute_at(
                page, markup.starts[at], markup.ends[at], occurrence.start()
            )
            if name is None or name in (b"id", b"class"):
                return True
    names = volatile._names(page)
    return word in names.words or word.lower() in names.markup_names


NAME_PIECES = [
    '<p id="row4">a</p>',
    "<p class='x y9 Z-3'>a</p>",
    '<p id="row&#45;5">a</p>',  # (read as `row-5`)
    "<H3>t</H3>",
    '<p DATA-K3="1">a</p>',
    "<my-el:x7 a=b>c</my-el:x7>",
    '<p title="t"c8>a</p>',  # (a name right after a value's quote)
    '<p "q9="v">a</p>',
    "<p @click.x1=go :class=k2>a</p>",
    '<p title="row4 y9 45">a</p>',  # (in another attribute's value: no name)
    "<script>var row4 = '<p id=\"s6\">';</script>",
    "<!-- <p id=c7> -->",
    "<title><b id=t8></title>",
    "<p id=u9/>a</p>",
    '<p class="v1',  # (unclosed, to the page's end)
    "text row4 y9 h3 k3 x7 45",
    "<p id='w2' id=w3 class=>a</p>",
]
NAME_WORDS = [
    b"row4",
    b"row",
    b"4",
    b"5",
    b"45",
    b"row-5",
    b"x",
    b"y9",
    b"Z-3",
    b"z-3",
    b"h3",
    b"H3",
    b"k3",
    b"DATA-K3",
    b"data-k3",
    b"my-el",
    b"x7",
    b"c8",
    b"q9",
    b"click",
    b"x1",
    b"class",
    b"k2",
    b"s6",
    b"c7",
    b"t8",
    b"u9",
    b"v1",
    b"w2",
    b"w3",
    b"p",
    b"id",
    b"title",
    b"a",
    b"b",
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(NAME_PIECES), max_size=8))
def test_a_word_is_a_name_as_the_definition_reads_each_occurrence(pieces: list[str]) -> None:
    page = ("<html><body>" + "".join(pieces) + "</body></html>").encode()
    for word in NAME_WORDS:
        assert volatile._is_a_name(page, word) == is_a_name_by_definition(page, word), word


def test_a_word_is_a_name_in_the_saved_pages_as_the_definition_reads_it() -> None:
    for path in fixture_pages():
        page = path.read_bytes()
        words = set(re.findall(rb"[A-Za-z0-9_-]+", page)[::200]) | set(NAME_WORDS)
        for word in sorted(words):
            assert volatile._is_a_name(page, word) == is_a_name_by_definition(page, word), (
                path,
                word,
            )


def test_an_id_after_an_unclosed_quote_or_with_a_quote_in_it_is_counted() -> None:
    """An id with a quote in it (`a'1`), or after an `id="` that only looks like one (a
    script's string, a comment) whose value would run into it, is counted where it occurs: a
    number that held it (`a'15`, `x.15`) is no number to splice."""
    for page in (
        b'<body><script>var p = s.split(\'id="\');</script><div id="x.1">a</div>'
        b'<script>var n = "x.%s";</script></body>',
        b'<body><div id="x\'1">a</div><script>var n = "x\'%s";</script></body>',
    ):
        assert volatile.swaps(page % b"15", page % b"25") is None, page


def test_a_kept_reading_does_not_grow_with_each_load() -> None:
    """A value the swaps ask about that the page does not hold (a run of a new value: the
    nonce in `n1-88`) is not kept with the page's reading, which would grow at every load."""
    markup = '<a href="/?n=%s">x</a><a href="/?k=%s-%s">y</a>'
    old = (markup % ("tok12345", "tok12345", "88880000")).encode()
    reading = volatile.keep_reading(old)
    for load in range(20):
        nonce = f"n{load:07d}"
        new = (markup % (nonce, nonce, f"{99990000 - load:08d}")).encode()
        assert volatile.swaps(old, new) is not None
    assert len(reading.values) <= 4


def test_a_kept_pages_first_value_is_swapped_where_the_page_holds_it_at_each_load() -> None:
    """A kept page's next loads swap their first value in where the page holds the old one, the
    places found once for them all (`_places_in`), at its ends too; the next difference is
    then found past it, as in a page that is not kept."""
    markup = '%s<a href="/?n=%s">x</a><p>%s</p><a href="/?v=%s">y</a>%s'
    old = (markup % ("tok12345", "tok12345", "tok12345", "val98765", "tok12345")).encode()
    loads = [(f"n{load:07d}".encode(), f"v{load:07d}".encode()) for load in range(1, 6)]
    pages = [
        (
            markup
            % (nonce.decode(), nonce.decode(), nonce.decode(), value.decode(), nonce.decode())
        ).encode()
        for nonce, value in loads
    ]
    unkept = [volatile.swaps(old, new) for new in pages]
    reading = volatile.keep_reading(old)
    for (nonce, value), new, expected in zip(loads, pages, unkept, strict=True):
        swaps = volatile.swaps(old, new)
        assert swaps == expected == volatile.Swaps({b"tok12345": nonce, b"val98765": value})
        assert swaps is not None and swaps.applied_to(old) == new
    (places,) = [made for key, made in reading.values.items() if key[0] == "_places_in"]
    assert list(places) == [m.start() for m in re.finditer(b"tok12345", old)]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    page=st.lists(st.sampled_from([b"a", b"b", b"ab", b"\x00"]), max_size=30).map(b"".join),
    value=st.lists(st.sampled_from([b"a", b"b", b"\x00"]), min_size=1, max_size=3).map(b"".join),
    new=st.lists(st.sampled_from([b"x", b"yy", b""]), max_size=3).map(b"".join),
)
def test_a_value_replaced_at_its_places_is_replaced_as_bytes_replace_does(
    page: bytes, value: bytes, new: bytes
) -> None:
    """Leftmost and apart, as `replace` and `count` read them (`aa` in `aaa` once), at the
    page's ends, by a new value of any length."""
    places = volatile.places_of(page, value)
    assert len(places) == page.count(value)
    assert volatile.replaced_at(page, places, len(value), new) == page.replace(value, new)


def test_an_empty_value_has_no_places() -> None:
    try:
        volatile.places_of(b"abc", b"")
    except ValueError:
        return
    raise AssertionError("an empty value's places were given")


def test_two_values_may_become_the_same_new_one() -> None:
    """The new value is looked for in the old page, not in the page swapped so far: two old
    values a load writes as one new one are swapped (the shifted page then refuses them)."""
    old = b'<p>tok11111</p><a href="/?v=val22222">x</a>'
    new = b'<p>new33333</p><a href="/?v=new33333">x</a>'
    assert volatile.swaps(old, new) == volatile.Swaps(
        {b"tok11111": b"new33333", b"val22222": b"new33333"}
    )
