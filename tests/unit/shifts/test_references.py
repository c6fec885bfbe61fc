"""What stylesheets and scripts reference, read from their text."""

from __future__ import annotations

from lxml import etree

from shifts.references import (
    EMPTY,
    MAX_VARIANTS,
    AssetRefs,
    PageAsset,
    css_imports,
    css_refs,
    inline_refs,
    js_refs,
    merge_refs,
    page_assets,
)
from shifts.references import css as css_reader


def element(markup: str, path: str) -> etree._Element:
    root = etree.fromstring(markup, etree.HTMLParser())
    found = root.xpath(path)
    assert isinstance(found, list) and found
    node = found[0]
    assert isinstance(node, etree._Element)
    return node


def test_css_selectors_give_ids_classes_attributes_and_tags() -> None:
    refs = css_refs(
        "/* #not-me */ #root, .nav a.active:hover { color: red }"
        "@media (max-width: 10px) { [data-x='1'] > .card { margin: 0 } }"
        ".u\\:hidden { display: none } a[href$='.pdf']::after { content: '#no {'}"
    )
    assert refs.ids == {"root"}
    assert refs.classes == {"nav", "active", "card", "u:hidden"}
    assert refs.attributes == {"data-x", "href"} and refs.values == {"1", ".pdf"}
    assert {"a"} <= refs.tags
    assert refs.references("root") and not refs.references("not-me")


def test_structural_selectors_are_known_with_their_context() -> None:
    refs = css_refs(
        "blockquote > :first-child {} .list li + li {} .menu > * {} div:has(> img) {}"
        ".x:not(:last-child) {}"
    )
    page = (
        "<html><body><blockquote><p>a</p></blockquote><div class='list'><ul><li>1</li>"
        "<li>2</li></ul></div><p class='x'>y</p><nav class='menu'><a>m</a></nav>"
        "<section><p>free</p></section></body></html>"
    )
    assert refs.structure_matters(element(page, "//blockquote/p"))
    assert refs.structure_matters(element(page, "//li[2]"))
    assert refs.structure_matters(element(page, "//nav/a"))  # `.menu > *`
    assert refs.structure_matters(element(page, "//p[@class='x']"))  # `:not(:last-child)`
    assert not refs.structure_matters(element(page, "//section/p"))  # no rule concerns it
    assert refs.looks_inside(element(page, "//section/..")) is False
    assert css_refs("div:has(> img) {}").looks_inside(element(page, "//div"))


def test_a_universal_compound_keeps_the_context_before_it() -> None:
    # Wagtail's `.w-field__input > * > input`: the input depends on sitting two levels inside
    # a `.w-field__input`, not on sitting inside any element (`* > input`, which held every
    # input of the admin's pages), and `.a * > b` likewise.
    refs = css_refs(".w-field__input > * > input {} .a * > b {} .row > * + * > i {}")
    page = (
        "<html><body><div class='w-field__input'><span><input id='held'></span></div>"
        "<form><div><input id='free'></div></form><div class='a'><p><b id='held-b'>x</b></p>"
        "</div><p><b id='free-b'>y</b></p><div class='row'><p></p><p><i id='held-i'>z</i></p>"
        "</div><p><i id='free-i'>w</i></p></body></html>"
    )
    for held in ("held", "held-b", "held-i"):
        assert refs.structure_matters(element(page, f"//*[@id='{held}']")), held
    for free in ("free", "free-b", "free-i"):
        assert not refs.structure_matters(element(page, f"//*[@id='{free}']")), free
    # The universal compound itself still needs its parent: wrapping it would move the input.
    assert refs.structure_matters(element(page, "//span"))


def test_code_between_two_strings_is_no_selector() -> None:
    # A quote in a regex literal puts a string reader out of step: what it then takes for
    # strings is the code between them (`+e+`), which as a selector held every element beside
    # an `<e>` (a jQuery plugin's minified code left no element of Wagtail's admin free).
    refs = js_refs('s=s.replace(/"/g,"&quot;");h="<li>"+e+"</li>"+"<b>"+this.o.name+"</b>";')
    assert not refs.structure
    assert js_refs('$(".row > li + li")').structure  # a selector string still counts


def test_scripts_reference_the_words_they_hold_prefixes_and_selector_strings() -> None:
    refs = js_refs(
        'document.getElementById("root"); el.classList.add("is-" + state);'
        'q(".menu > li"); el.dataset.fooBar; var re = /.+?/; s = ".+?"; this.wrapper = main;'
        "render({active: on}, `card-${size}`); /\\bopen\\b/.test(el.className)"
    )
    assert refs.references("root") and refs.references("is-open")  # a prefix
    assert refs.references("active") and refs.references("card-large")  # a key, a template
    assert refs.references("open")
    # Names in the program are no values: a class `wrapper` is free to drift. A free name may
    # still reach an element by its id (`main` is `window.main`), a property name may not.
    assert not refs.references("wrapper") and not refs.references("main")
    assert refs.reaches_id("main") and not refs.reaches_id("wrapper")
    assert js_refs("document.forms.login.submit()").reaches_id("login")
    # A script that cannot be read in step references every word of it.
    assert js_refs("x = 'not closed\n; this.wrapper").references("wrapper")
    assert "data-foo-bar" in refs.words
    kinds = {(rule.kind, rule.keys[0]) for rule in refs.structure}
    assert kinds == {("child", "li")}  # the selector string, not the regex look-alikes


def test_merging_keeps_everything_and_incompleteness_wins() -> None:
    merged = merge_refs([css_refs("#a {}"), js_refs("f('b')"), AssetRefs(complete=False)])
    assert merged.references("a") and merged.references("b") and not merged.complete
    assert merge_refs([EMPTY, EMPTY]).complete


def test_a_page_loads_its_same_origin_stylesheets_scripts_and_modules() -> None:
    raw = (
        b"<html><head><base href='/app/'><link rel='stylesheet' href='s.css?a=1&amp;b=2'>"
        b"<link rel='modulepreload' href='/m.js'><link rel='preload' as='style' href='p.css'>"
        b"<link rel='icon' href='i.png'><script src='https://cdn.other/x.js'></script>"
        b"<script src='main.js'></script><script src='main.js'></script></head></html>"
    )
    assert page_assets(raw, "http://site.test/page") == [
        PageAsset("css", "http://site.test/app/s.css?a=1&b=2"),
        PageAsset("js", "http://site.test/m.js"),
        PageAsset("css", "http://site.test/app/p.css"),
        PageAsset("js", "http://site.test/app/main.js"),
    ]
    assert css_imports(
        "@import url('b.css'); @import 'https://x.other/c.css';", "http://s.t/a/a.css"
    ) == [PageAsset("css", "http://s.t/a/b.css")]


def test_inline_styles_scripts_handlers_and_data_values_count() -> None:
    root = etree.fromstring(
        "<html><head><style>.styled{}</style></head><body>"
        "<button onclick=\"toggle('panel')\" data-target='#drawer'>x</button>"
        "<script>init('widget')</script><script type='application/json'>{\"k\": 1}</script>"
        "</body></html>",
        etree.HTMLParser(),
    )
    refs = inline_refs(root)
    assert all(refs.references(name) for name in ("styled", "panel", "drawer", "widget"))


def test_structure_is_read_past_quoted_values_relative_and_nested_selectors() -> None:
    page = (
        "<html><body><div data-k='x.y'><a>1</a><a>2</a></div>"
        "<ul class='a'><li class='b'>b</li></ul><p class='c'>c</p><p class='d'>d</p>"
        "<section><i class='e'>e</i></section><div title='a > b'><em>f</em></div></body></html>"
    )
    # A value that looks like a class or an id (`.y`, `#z`) is a value: these `a` depend on
    # being siblings under that div.
    quoted = css_refs('[data-k="x.y"] > a + a { margin: 0 }')
    assert quoted.structure_matters(element(page, "//div[@data-k]/a[2]"))
    assert css_refs("[data-k='x.y'] > a:first-child {}").structure_matters(
        element(page, "//div[@data-k]/a[1]")
    )
    # Relative selectors in :has() are relative to the compound they belong to.
    assert css_refs(".a:has(> .b) {}").structure_matters(element(page, "//li"))
    assert css_refs(".c:has(+ .d) {}").structure_matters(element(page, "//p[@class='d']"))
    assert css_refs(".c:has(+ .d) {}").structure_matters(element(page, "//p[@class='c']"))
    # A nested rule relative to its parent rule (`> .e` inside a block): relative to anything.
    assert css_refs("section { > .e { color: red } }").structure_matters(element(page, "//i"))
    # A combinator inside a string is text: `a > b` here is no child rule.
    titled = css_refs('[title="a > b"] em { color: red }')
    assert not titled.structure_matters(element(page, "//em"))


def test_a_relative_selector_that_names_something_stays_about_every_parent() -> None:
    # `section.querySelectorAll(":scope > div")`: the section may have been found by its tag,
    # so every div keeps its parent, as `* > div`; `"> *"` is about what the script holds.
    page = "<html><body><section><div id='d'>x</div></section><p><i id='i'>y</i></p></body></html>"
    named = js_refs("s.querySelectorAll(':scope > div')")
    assert named.structure_matters(element(page, "//*[@id='d']"))
    assert not js_refs("$(m).menu({items: '> *'})").structure_matters(element(page, "//*[@id='i']"))


def test_attribute_queries_in_data_values_are_read() -> None:
    root = etree.fromstring(
        "<html><body><button data-target='[data-testid=dlg]'>x</button></body></html>",
        etree.HTMLParser(),
    )
    assert inline_refs(root).reads_attribute("data-testid")


def test_a_selector_piece_that_ends_with_a_combinator_is_about_any_element_after_it() -> None:
    page = "<html><body><h2>t</h2><div id='d'>x</div><p><i id='i'>y</i></p></body></html>"
    refs = js_refs('list = root.querySelectorAll("h2 + " + tag)')
    assert refs.structure_matters(element(page, "//*[@id='d']"))
    assert not refs.structure_matters(element(page, "//*[@id='i']"))


def test_a_selector_built_from_pieces_is_read_whole() -> None:
    page = (
        "<html><body><p><a id='x'>a</a><i id='after-a-with-id'>1</i></p>"
        "<p><a>b</a><i id='after-a'>2</i></p>"
        "<div id='held'><span id='in-held'>3</span></div><div><span id='in-div'>4</span></div>"
        "</body></html>"
    )
    # jQuery's feature test: what follows an <a> with an id, not what follows every element a
    # script holds (which, as `"+*"` alone, held the next sibling of each of them).
    jquery = js_refs('if(!e.querySelectorAll("a#"+S+"+*").length)v.push(".#.+[+~]")')
    assert jquery.follows_held == frozenset()
    assert jquery.structure_matters(element(page, "//*[@id='after-a-with-id']"))
    assert not jquery.structure_matters(element(page, "//*[@id='after-a']"))
    # An id from a variable: the children of an element with an id.
    by_id = js_refs('$("#" + this.id + " > span").hide()')
    assert by_id.structure_matters(element(page, "//*[@id='in-held']"))
    assert not by_id.structure_matters(element(page, "//*[@id='in-div']"))
    # What a selector held in a variable found is still what the script holds.
    assert js_refs('$(sel + "+*")').follows_held == {"+"}
    # A piece where a tag or a combinator may go is read by its pieces, as before.
    pieces = js_refs('q("div > " + tag + cls)')
    assert pieces.structure_matters(element(page, "//*[@id='held']/span"))
    # After a whole name, what comes may start with a combinator (Bootstrap's
    # `'.dropdown-menu' + desc`, desc = ' li'): `.menu li > a`, so every `a` child stays.
    menu = (
        "<html><body><ul class='menu'><li><a id='a'>x</a></li><li id='b'>2</li></ul></body></html>"
    )
    bootstrap = js_refs("var desc = ' li'; $p.find('.menu' + desc + ' > a')")
    assert bootstrap.structure_matters(element(menu, "//*[@id='a']"))
    assert js_refs("$('.menu' + sub + ' + li')").structure_matters(element(menu, "//*[@id='b']"))
    assert js_refs("$('#' + id + sub + ' > li')").structure_matters(element(menu, "//*[@id='b']"))


def test_is_and_where_are_read_by_their_alternatives() -> None:
    page = (
        "<html><body><div><input id='i'><b class='comment'>c</b></div>"
        "<section><p id='p'>p</p><p id='q'>q</p></section></body></html>"
    )
    # A compound whose only test is `:is()` named nothing: every element beside another one
    # mattered. Read by its alternatives, it is about inputs and textareas beside a comment.
    refs = css_refs(
        ":is(input,textarea,.editor .content):not(:focus,:has(~:where(.comment:hover))) {}"
    )
    assert refs.structure_matters(element(page, "//input"))
    assert refs.structure_matters(element(page, "//b"))
    assert not refs.structure_matters(element(page, "//*[@id='q']"))
    assert css_refs("section > :is(p, ul) {}").structure_matters(element(page, "//*[@id='q']"))
    assert css_refs("a:where(.x, .y) > :is(b) {}").structure_matters(element(page, "//b")) is False
    # An escaped comma is part of a name, not a list's separator.
    escaped = "<html><body><div class='a,b'><p>x</p></div></body></html>"
    assert css_refs(":is(.a\\,b, .c) > p {}").structure_matters(element(escaped, "//p"))


def test_many_lists_in_one_selector_cost_no_more_than_the_cap() -> None:
    """Sixteen `:is()` lists of two are 65,536 selectors: past `MAX_VARIANTS` the selector is
    read as it is (every `p` in place), said as soon as the cap is passed (each list used to
    be expanded anyway: seconds per selector)."""
    page = "<html><body><div><p>x</p></div></body></html>"
    refs = css_refs(" ".join([":is(.a, .b)"] * 16) + " > p {}")
    assert refs.structure_matters(element(page, "//p"))
    calls = []
    original = css_reader._expanded

    def counted(selector: str) -> object:
        calls.append(selector)
        return original(selector)

    css_reader._expanded = counted  # type: ignore[assignment]
    try:
        css_reader._alternatives(" ".join([":is(.a, .b)"] * 16) + " > p")
    finally:
        css_reader._expanded = original
    assert len(calls) < 8 * MAX_VARIANTS  # (it made 131,071 calls)


def test_a_has_about_later_siblings_does_not_look_inside() -> None:
    page = "<html><body><div class='c'><i>x</i></div><p class='d'>d</p></body></html>"
    refs = css_refs(".c:has(~ .d) {}")
    assert not refs.looks_inside(element(page, "//div"))
    assert refs.structure_matters(element(page, "//div"))  # it keeps its later siblings
    assert refs.structure_matters(element(page, "//p"))
    assert css_refs(".c:has(> i) {}").structure_matters(element(page, "//i"))


def test_two_combinators_in_a_row_are_no_selector() -> None:
    # MediaWiki's scripts hold `~~~` (a wikitext signature): read as `~ ~ *`, every element
    # beside another one mattered.
    page = "<html><body><p id='a'>a</p><p id='b'>b</p></body></html>"
    refs = js_refs("insert('~~~'); sig = '~~~~'; x = '>>'")
    assert refs.follows_held == frozenset()
    assert not refs.structure_matters(element(page, "//*[@id='b']"))
