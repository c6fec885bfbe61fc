"""What scripts reference, read from their text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import jslex
from shifts.references import (
    js_refs,
    merge_refs,
)
from shifts.references.js import _structural_alone, _structural_pieces
from tests.helpers.fixtures import FIXTURES, fixture_pages
from tests.unit.shifts.references.helpers import element


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


def test_a_relative_selector_that_names_something_stays_about_every_parent() -> None:
    # `section.querySelectorAll(":scope > div")`: the section may have been found by its tag,
    # so every div keeps its parent, as `* > div`; `"> *"` is about what the script holds.
    page = "<html><body><section><div id='d'>x</div></section><p><i id='i'>y</i></p></body></html>"
    named = js_refs("s.querySelectorAll(':scope > div')")
    assert named.structure_matters(element(page, "//*[@id='d']"))
    assert not js_refs("$(m).menu({items: '> *'})").structure_matters(element(page, "//*[@id='i']"))


def test_siblings_relative_to_what_a_script_holds_are_about_its_children_only() -> None:
    """WordPress's block editor holds `e + " > * + *"`: read as `* + *`, every element
    beside another was held in place on `post-new.php`. It is about the children of what the
    script holds (which a script walking them keeps in place: locators), as `> *` is."""
    page = "<html><body><p id='a'>a</p><p id='b'>b</p></body></html>"
    for relative in ('x = e + " > * + *"', "q(':scope > * ~ *')", "q('> :last-child')"):
        refs = js_refs(relative)
        assert not refs.structure_matters(element(page, "//*[@id='b']")), relative
        assert refs.follows_held == frozenset(), relative
    # What follows the held element further on than the next one: any later sibling.
    assert js_refs('$(sel + "+ * + *")').follows_held == {"~"}
    assert js_refs('$(sel + "+ *")').follows_held == {"+"}
    # One that names something stays a rule of its own.
    items = page.replace("p", "li")
    assert js_refs("q('> * + li')").structure_matters(element(items, "//*[@id='b']"))


def test_a_relative_selector_applied_to_what_a_selector_found_is_read_whole() -> None:
    """phpMyAdmin's `$("#selflink").find("> a")` and `$("#pma_navigation_tree").find("> div")`:
    read alone, `* > a` held every link that is a child of anything (its logged-in pages: a
    share of 0.01-0.08). Applied to what `#selflink` found, it is about that one's links."""
    page = (
        "<html><body><div id='selflink'><a id='in' href='/'>x</a></div>"
        "<div><a id='out' href='/'>y</a></div></body></html>"
    )
    refs = js_refs("$(\"#selflink\").find(\"> a\"); $('#tree').find('> div')")
    assert refs.structure_matters(element(page, "//*[@id='in']"))
    assert not refs.structure_matters(element(page, "//*[@id='out']"))
    # What a variable holds may have been found in ways no name shows: every parent, as before.
    assert js_refs('$(menu).find("> a")').structure_matters(element(page, "//*[@id='out']"))
    both = js_refs('$("#selflink").find("> a"); q.find("> a")')
    assert both.structure_matters(element(page, "//*[@id='out']"))  # (the other use counts)
    # jQuery making an element of markup finds nothing of the page's.
    made = js_refs('$("<div>").find("> a")')
    assert made.structure_matters(element(page, "//*[@id='out']"))

    # Spaces and either quote around the relative literal: read whole all the same
    # (`_RELATIVE_FIND`, the search made first, allows what the whole pattern allows).
    for spaced in ("$( \"#selflink\" ) . find( ' > a' )", "$('#selflink').find(\t\"\u00a0> a\" )"):
        assert not js_refs(spaced).structure_matters(element(page, "//*[@id='out']")), spaced


def _selector_of(length: int, end: str = "") -> str:
    body = length - len(end) - len("ul > li")
    return "ul > li" + ".c" * (body // 2) + "x" * (body % 2) + end


def test_a_selector_literal_is_read_up_to_300_characters_completed() -> None:
    """A structural selector literal counts up to 300 characters, after a piece ending with a
    combinator is completed (`"ul >"` is `ul > *`, 2 more); the answer is kept per literal."""
    for length, end, read in [
        (300, "", True),
        (301, "", False),
        (298, " >", True),
        (299, " >", False),
    ]:
        literal = _selector_of(length, end)
        assert len(literal) == length
        for _ in range(2):  # (asked again: the kept answer)
            assert bool(js_refs(f'q("{literal}")').structure) is read, (length, end)
            assert bool(js_refs("", [literal]).structure) is read, (length, end)


def test_a_name_built_of_known_pieces_is_widened_to_what_holds_them() -> None:
    """WordPress's media player builds `"." + prefix + "controls ." + prefix +
    "button:last-child > button"`: widened to `[class] [class]:last-child`, it held every
    last child with a class inside anything with a class. It is about classes holding
    `controls` and `button`; an id built so starts and ends with its known pieces."""
    page = (
        "<html><body><div class='mejs__controls'><div class='x'>1</div>"
        "<div id='held' class='mejs__button'><button>b</button></div></div>"
        "<div class='menu'><span class='x'>2</span><span id='free' class='item'>3</span></div>"
        "<ul id='f-3-list'><li id='in-list'>a</li></ul><ul id='f-3'><li id='in-f'>a</li></ul>"
        "</body></html>"
    )
    player = js_refs('$(t).find("." + p + "controls ." + p + "button:last-child > button")')
    assert player.structure_matters(element(page, "//*[@id='held']"))
    assert not player.structure_matters(element(page, "//*[@id='free']"))
    by_id = js_refs('q("#f-" + n + "-list > li")')
    assert by_id.structure_matters(element(page, "//*[@id='in-list']"))
    assert not by_id.structure_matters(element(page, "//*[@id='in-f']"))


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


def test_two_combinators_in_a_row_are_no_selector() -> None:
    # MediaWiki's scripts hold `~~~` (a wikitext signature): read as `~ ~ *`, every element
    # beside another one mattered.
    page = "<html><body><p id='a'>a</p><p id='b'>b</p></body></html>"
    refs = js_refs("insert('~~~'); sig = '~~~~'; x = '>>'")
    assert refs.follows_held == frozenset()
    assert not refs.structure_matters(element(page, "//*[@id='b']"))


def test_a_feature_test_that_throws_in_every_engine_is_no_rule() -> None:
    """jQuery 3.7 runs `querySelector(":has(*,:jqfake)")` to see whether the browser throws
    (`:has()` reads its argument unforgivingly): read as a rule, `:has(*, ...)` held every
    element of every page that loads jQuery, and nothing was wrapped (a Django admin, a
    django-oscar shop: a locator share of 0 on most seeds)."""
    jquery = (FIXTURES / "scripts" / "jquery-3.7.1.min.js").read_text()
    assert ":has(*,:jqfake)" in jquery
    page = "<html><body><main><ul><li id='i'><a>x</a></li></ul></main></body></html>"
    refs = js_refs(jquery)
    assert not any(rule.kind == "subtree" for rule in refs.structure)
    assert not refs.looks_inside(element(page, "//main"))
    # A `:has()` of what an engine defines stays a rule, jQuery's and jQuery UI's too.
    for defined in ("div:has(> img)", "li:has(> :visible)", "ul:has(> :tabbable)"):
        assert js_refs(f"$('{defined}')").structure, defined
    assert not js_refs("q(':has(> :no-such-thing)')").structure
    assert js_refs("q(':has(> :-moz-focusring)')").structure  # (another engine's own)


def test_a_regex_class_is_no_attribute_test() -> None:
    """TinyMCE builds `new RegExp("</" + tag + "[^>]*>", "gi")`: the piece `[^>]*>` was read
    as a selector (`[^>]* > *`), a `* > *` rule that held every element of every page loading
    the editor (a django-oscar dashboard: a locator share of 0 on every seed)."""
    assert not js_refs('x = new RegExp("</" + e + "[^>]*>", "gi")').structure
    assert not js_refs('s.match("[a-z]+ > b")').structure
    for selector in ("[data-x] > li", "a[href^='http:'] + b", "li[data-id='3' i] > a"):
        assert js_refs(f'q("{selector}")').structure, selector


def test_a_name_a_script_builds_with_a_suffix_of_its_own_is_referenced() -> None:
    """Django's admin builds ids of a value it reads at run time and a literal suffix
    (`getElementById(modelName + "_form")`, `$("#" + prefix + "-empty")`, `name + "-group"`):
    renamed, its add form threw and its inlines never started. A name ending in a suffix a
    script appends may be one it builds; one ending otherwise is free."""
    refs = js_refs(
        "var m = el.dataset.modelName; document.getElementById(m + '_form').elements;"
        '$(o.name + "-group .tabular.inline-related tbody > tr.form-row");'
        '$("#" + o.prefix + "-empty");',
        ['{"name": "#reviews", "options": {"prefix": "reviews"}}'],
    )
    for built in ("book_form", "reviews-group", "reviews-empty"):
        assert refs.references(built) and refs.reaches_id(built), built
    assert not refs.references("reviews-list") and not refs.reaches_id("book-form")
    # A script that cannot be read in step: its literals after a `+`.
    unread = js_refs("x = 'not closed\n; el = $(id + '-empty')")
    assert unread.references("reviews-empty")


def test_a_script_that_slices_or_matches_an_id_reads_ids_as_data() -> None:
    # DokuWiki's media manager: the file a link stands for is its id after a two-letter prefix.
    for script in (
        "id = $link.attr('id').substr(2);",
        "val = this.id.substring(this.id.length - 1);",
        'name = event.target.id.split("_")[1]',
        'n = el.getAttribute("id").replace("row-", "")',
    ):
        assert js_refs(script).parses_ids, script
    # ... read into a variable first, or through optional chaining (found by a review).
    for script in (
        "$('.select').click(function(){ var id = $(this).attr('id'); insert(id.substr(2)); })",
        "let rowId = this.id;\nconst n = rowId.split('_')[1]",
        "n = el?.id?.replace('row-', '')",
        "n = $(x).attr('id')?.replace('row-', '')",
    ):
        assert js_refs(script).parses_ids, script
    # Escaping an id for a selector (jQuery UI's datepicker, Sizzle) reads nothing of it.
    escape = 'inst.id.replace(/([^A-Za-z0-9_\\-])/g, "\\\\$1")'
    assert not js_refs(escape).parses_ids
    # ... nor a regex replacement that writes backslashes: jQuery UI's datepicker unescapes
    # the id it escaped into a selector (in the full jQuery UI bundle: every page loading it
    # kept the ids of everything its scripts find by a class), RT 5 patches it to escape quotes.
    for script in (
        'var e=this._get(t,"stepMonths"),i="#"+t.id.replace(/\\\\\\\\/g,"\\\\");',
        "data.id = data.id.replace(/'/g, \"\\\\'\");",
        'sel = "#" + this.id.replace(/[.:\\[\\]]/g, "\\\\$&")',
    ):
        assert not js_refs(script).parses_ids, script
    # A regex replacement that writes no backslash still reads the id.
    for script in ("n = this.id.replace(/^row-/, '')", 'n = el.id.replace(/_/g, " ")'):
        assert js_refs(script).parses_ids, script
    assert not js_refs("var idx = this.idx; idx.split(',')").parses_ids
    # Sizzle escapes the id of the context it is given (assigned first); a write reads nothing.
    for script in (
        'nid = context.getAttribute("id"); nid.replace(a, b)',
        'el.id = "x"',
        "u.uid.substr(1)",
    ):
        assert not js_refs(script).parses_ids, script
    assert merge_refs([js_refs("x"), js_refs("this.id.slice(2)")]).parses_ids


def test_a_step_to_a_sibling_of_a_held_element_is_read_with_what_it_steps_to() -> None:
    # DokuWiki's media manager: `$content.find('a.allowedmime').on(...).next('span').hide()`.
    refs = js_refs("$c.find('a.allowedmime').next('span').hide()")
    assert refs.steps_held == {"+ span"} and refs.follows_held == frozenset()
    assert js_refs("$(this).nextAll( 'li.item' ).hide()").steps_held == {"~ li.item"}
    assert js_refs('$(this).prev("b")').steps_held == {"- b"}
    assert js_refs("$(this).prevAll(`h2`)").steps_held == {"-~ h2"}
    assert js_refs("$(this).siblings('.on')").steps_held == {"~ .on", "-~ .on"}
    # Quotes and escapes inside what it names; a control's pseudo-class is any element.
    assert js_refs("$(a).next('[data-x=\\'y\\']')").steps_held == {"+ [data-x='y']"}
    assert js_refs("$(a).next(\"input[name='x']\")").steps_held == {"+ input[name='x']"}
    assert js_refs("$(a).nextAll(':checkbox')").steps_held == {"~ *"}
    # A pseudo-class only narrows what a step names: read as what it narrows.
    assert js_refs("$(d).siblings('.ui-front:visible')").steps_held == {
        "~ .ui-front",
        "-~ .ui-front",
    }
    # A step that names nothing it steps to is every library's (and `.next()` every
    # iterator's): not read, or no element beside a held one would be wrappable.
    for script in (
        "while (!(s = it.next()).done) use(s.value)",
        "$(this).siblings().removeClass('on')",
        "el.nextElementSibling.hidden = true; $(x).prev().show()",
        "$(x).next(sel)",
        "$(x).siblings(':visible'); $(y).siblings(':not(.deleted)')",  # (jQuery UI, Wagtail)
    ):
        assert js_refs(script).steps_held == frozenset(), script


def one_by_one(pieces: list[str]) -> list[str]:
    """`_structural_pieces`'s definition: each piece asked apart."""
    return [found for found in map(_structural_alone, pieces) if found is not None]


def test_a_pages_pieces_are_read_as_selectors_alike_in_one_search() -> None:
    asked = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        pieces = [value for element in root.iter() for value in element.values()]
        for script in root.iter("script"):
            try:
                pieces += jslex.literals(script.text or "", set(), [])
            except jslex.Unreadable:
                continue
        pieces += ["ul >", "li:nth-child(2)", "a + b", "x" * 301 + " > a", ":\nnth", ""]
        assert _structural_pieces(pieces) == one_by_one(pieces)
        asked += len(pieces)
    assert asked > 10_000
    assert _structural_pieces([]) == []


PIECE = st.text(alphabet=" >+~:\nahtlsfirs-.#()*[]=", max_size=12)


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(PIECE, max_size=12))
def test_generated_pieces_are_read_as_selectors_alike_in_one_search(pieces: list[str]) -> None:
    assert _structural_pieces(pieces) == one_by_one(pieces)
