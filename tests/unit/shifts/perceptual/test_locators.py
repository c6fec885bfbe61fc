"""Locator drift: what no asset references moves; what an asset references stays."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import shift_offline
from shifts import ShiftContext, apply_shifts, volatile
from shifts.document import CHANGE_MAP_TEXT_CHARS, HtmlDocument
from shifts.interactive import interactive_elements
from shifts.perceptual.locators import (
    LocatorDrift,
    WrapQuestions,
    _place_wrapper,
    _short_text,
    drifted_class,
    drifted_id,
    wrapper_tag,
)
from shifts.references import EMPTY, AssetRefs, PageRefs, css_refs, js_refs, merge_refs
from sites import GENERIC
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments

ALWAYS = {"id_rate": 1.0, "class_rate": 1.0, "wrap_rate": 1.0}
NEVER = {"id_rate": 0.0, "class_rate": 0.0, "wrap_rate": 0.0, "min_share": 0.0}
CTX = ShiftContext(
    episode_id="e",
    seed=2,
    site=GENERIC,
    is_navigation=False,
    shift_params={"locator_drift": ALWAYS},
    assets=EMPTY,
)
PAGE = (
    b"<html><body>"
    b"<div id='banner' data-testid='hero'><label for='q'>Query</label></div>"
    b"<form action='/s'><input id='q' name='q'><button>Go</button></form>"
    b"<a href='#top'>Top</a><div id='top' aria-labelledby='banner'>x</div>"
    b"<span class='qa-thing other'>y</span>"
    b"<script>document.getElementById('used').focus()</script><p id='used'>z</p>"
    b"</body></html>"
)


def drift(
    raw: bytes = PAGE, ctx: ShiftContext = CTX, assets: AssetRefs | None = EMPTY
) -> tuple[bytes, dict]:  # type: ignore[type-arg]
    doc = apply_shifts([LocatorDrift.name], HtmlDocument(raw), replace(ctx, assets=assets))
    return doc.to_bytes(), doc.notes[LocatorDrift.name]


def by_default(seed: int = CTX.seed) -> ShiftContext:
    """The drift's default parameters, under `seed` (the benchmark's rates and `min_share`)."""
    return replace(CTX, seed=seed, shift_params={})


def over_seeds(raw: bytes, assets: AssetRefs, seeds: int = 5) -> list[tuple[int, bytes, dict]]:  # type: ignore[type-arg]
    """The page drifted with the default parameters under seeds 0.. `seeds` - 1."""
    return [(seed, *drift(raw, by_default(seed), assets=assets)) for seed in range(seeds)]


def test_unreferenced_ids_move_with_their_references() -> None:
    out, notes = drift()
    assert b'id="banner"' not in out and b'id="q"' not in out and notes["ids"] == 2
    new_id = out.split(b'aria-labelledby="')[1].split(b'"')[0]
    assert b'<div id="' + new_id + b'"' in out  # the reference follows the rename
    label_for = out.split(b'for="')[1].split(b'"')[0]
    assert b'id="' + label_for + b'"' in out and b'name="q"' in out  # field name kept


def test_an_id_named_in_a_reference_lxml_cannot_set_again_keeps_its_name() -> None:
    # libxml2's HTML parser keeps a control character in an attribute's value, which lxml
    # refuses to set: renaming `banner`, the drift raised setting its reference again.
    page = (
        b"<html><body><div id='banner'>B</div><div aria-labelledby='banner \x01'>x</div>"
        b"<p id='free'>f</p><label for='free'>l</label></body></html>"
    )
    out, notes = drift(page)
    assert b'id="banner"' in out and b'aria-labelledby="banner \x01"' in out
    assert b'id="free"' not in out and notes["ids"] == 1  # (one a settable reference names)


def test_a_class_attribute_lxml_cannot_set_again_keeps_its_names() -> None:
    # A control character in a class libxml2's HTML parser keeps: where another name of the
    # attribute is renamed and that one is not, the new value is one lxml refuses to set (the
    # drift raised). The attribute keeps its names; the others' are renamed as before.
    page = b"<html><body><div class='nav a&#1;b'>x</div><p class='ok'>y</p></body></html>"
    kept = 0
    for seed in range(40):
        ctx = replace(CTX, seed=seed, shift_params={"locator_drift": {"class_rate": 0.5}})
        out, _ = drift(page, ctx)
        renamed_nav = drifted_class(seed, "nav").encode()
        renamed_odd = drifted_class(seed, "a\x01b").encode()
        if renamed_odd not in out:
            kept += 1
            assert renamed_nav not in out, seed  # (the attribute keeps its names)
    assert 0 < kept < 40  # (both cases met: the seeds keep the odd name in some)


def test_what_something_depends_on_stays() -> None:
    out, _ = drift()
    assert b'id="top"' in out  # a fragment-link target
    assert b'id="used"' in out  # an inline script looks it up


def test_ids_and_classes_assets_reference_stay() -> None:
    assets = merge_refs([css_refs("#banner .other { color: red }"), js_refs("find('qa-thing')")])
    out, _ = drift(assets=assets)
    assert b'id="banner"' in out and b"qa-thing other" in out


def test_hooks_are_dropped_unless_an_asset_names_them() -> None:
    out, notes = drift()
    assert b"data-testid" not in out and b"hero" not in out and notes["hooks"] == 1
    out, _ = drift(assets=js_refs("document.querySelector('[data-testid=hero]')"))
    assert b'data-testid="hero"' in out
    # Each hook an element holds counts, and only those no asset reads are dropped.
    page = b"<html><body><a href='/' data-testid='t' data-qa='q' data-cy='c'>Go</a></body></html>"
    out, notes = drift(page, assets=js_refs("document.querySelector('[data-qa=q]')"))
    assert notes["hooks"] == 2 and b"data-testid" not in out and b"data-cy" not in out
    assert b'data-qa="q"' in out


def test_a_site_whose_hook_names_ids_drops_it_and_the_ids_are_read_as_before() -> None:
    # `aria-labelledby` called a hook: dropped, and the element that held it is among those
    # whose references the ids' drift reads (it reads none there now). `banner` stays: the
    # page's bytes mention it twice, and a name mentioned beyond its references stays.
    site = replace(GENERIC, hook_attributes=("data-testid", "aria-labelledby"))
    out, notes = drift(ctx=replace(CTX, site=site))
    assert b"aria-labelledby" not in out and notes["hooks"] == 2
    assert b'id="banner"' in out and b'id="q"' not in out and notes["ids"] == 1


def test_wrappers_keep_layout_declared_and_skip_structural_selectors() -> None:
    tag = wrapper_tag(CTX.seed).encode()
    out, notes = drift(ctx=replace(CTX, is_navigation=True))
    assert notes["wrappers"] >= 1 and b"<" + tag + b">" in out
    assert tag + b"{display:contents}" in out  # the wrapper generates no box
    assert notes["wrapper"] == tag.decode()
    # A child combinator on the form's children: the button keeps its parent.
    out, _ = drift(assets=css_refs("form > button { margin: 0 }"))
    assert b"<button>Go</button></form>" in out
    # Positional pseudo-classes: the label keeps its place among its siblings.
    out, _ = drift(assets=css_refs("label:first-child { float: left }"))
    assert re.search(rb'<div id="[a-z0-9]+"><label for=', out)  # still its div's first child


@pytest.mark.parametrize(
    ("top", "assets"),
    [
        ("svg", EMPTY),  # (SVG's own markup: a `<div>` in it is no HTML box)
        ("math", EMPTY),
        ("section", css_refs("section:has(> div) { gap: 0 }")),  # its subtree's shape matters
    ],
)
def test_nothing_below_foreign_markup_or_what_a_has_rule_matches_gets_a_wrapper(
    top: str, assets: AssetRefs
) -> None:
    inside = "<div><p><span><a href='/1'>1</a></span></p><div><p>x</p></div></div>"
    # Right below it, and below a `<g>` (no tag a wrapper is drawn for: what is above it is
    # asked on the way up).
    for between in ([], ["g"]):
        held = "".join(f"<{tag}>" for tag in between) + inside + "".join(f"</{t}>" for t in between)
        page = f"<html><body><div><{top}>{held}</{top}></div><div>{inside}</div></body></html>"
        out, notes = drift(page.encode(), assets=assets)
        tree = etree.HTML(out)
        kept = tree.xpath(f"//{top}")[0]
        beside = tree.xpath(f"//body//*[not(ancestor-or-self::{top})]")
        # Every element below keeps its parent (at any depth), while the same markup beside it
        # is wrapped: the drift did wrap on this page.
        below = [node.tag for node in etree.XML(inside).iter()]
        assert [node.tag for node in kept.iter()] == [top, *between, *below], between
        if top == "section":  # (what a `:has()` matches keeps its own place too)
            assert kept.getparent().tag == "div", between
        assert notes["wrappers"] >= 1 and any(node.tag == notes["wrapper"] for node in beside)


def test_a_wrapper_is_asked_about_among_its_parents_children_as_they_are_then() -> None:
    """A wrapper that took the place of its parent's only `.foo` is asked whether another
    child is one (`.foo ~ *`) among the children the parent has then: none. (What the
    references keep of a parent's children goes when a wrapper goes in.)"""
    root = etree.fromstring(b"<div><span class='foo'>x</span></div>", etree.HTMLParser())
    div = root.find(".//div")
    assert div is not None
    ask = WrapQuestions.of(PageRefs(css_refs(".foo ~ * {}"), EMPTY))
    assert not ask.a_child_structured(div)  # (the span: no other child to be a `.foo` or `*`)
    wrapper = _place_wrapper(div[0], "x-wrap")
    ask.wrapped(div, wrapper)
    assert not ask.structure_matters(wrapper)
    assert not ask.a_child_structured(div)


def test_nothing_moves_when_the_assets_are_unknown() -> None:
    out, notes = drift(assets=None)
    assert out == PAGE  # nothing can be shown to be unreferenced
    assert notes["assets"] == "incomplete" and notes["locators_changed"] == 0
    out, notes = drift(assets=AssetRefs(complete=False))
    assert out == PAGE


def test_no_renames_or_wrappers_when_rates_are_zero_except_hooks() -> None:
    out, notes = drift(ctx=replace(CTX, shift_params={"locator_drift": NEVER}))
    assert b'id="banner"' in out and b"<button>Go</button>" in out
    assert {key: notes.get(key) for key in ("hooks", "classes", "ids", "wrappers")} == {
        "hooks": 1,
        "classes": 1,  # `qa-*` is a hook class of the profile: renamed whatever the rate
        "ids": None,
        "wrappers": None,
    }


def test_the_share_of_changed_locators_reaches_min_share() -> None:
    params = {**NEVER, "min_share": 1.0}
    out, notes = drift(ctx=replace(CTX, shift_params={"locator_drift": params}))
    assert notes["interactive"] == 3 and notes["share"] == 1.0 and notes["wrappers"] >= 1


def test_min_share_adds_wrappers_only_where_the_first_ones_fall_short() -> None:
    # Where the wrappers drawn by their coins already moved every control (inside one of them,
    # at any depth), asking for a share of 1.0 wraps nothing more.
    page = (
        b"<html><body>"
        + b"".join(
            b"<div><div><p><a href='/%d'>Item %d</a></p><div><button>Edit %d</button></div>"
            b"</div></div>" % (i, i, i)
            for i in range(4)
        )
        + b"</body></html>"
    )
    drawn = {"id_rate": 0.0, "class_rate": 0.0, "wrap_rate": 0.4, "min_share": 0.0}
    covered = 0
    for seed in range(40):
        alone, notes = drift(page, replace(CTX, seed=seed, shift_params={"locator_drift": drawn}))
        if notes["share"] != 1.0:
            continue
        covered += 1
        topped_up = {**drawn, "min_share": 1.0}
        ctx = replace(CTX, seed=seed, shift_params={"locator_drift": topped_up})
        assert drift(page, ctx)[0] == alone, seed
    assert covered >= 3  # (the seeds where the drawn wrappers alone moved every control)


def test_min_share_stops_at_the_first_wrappers_that_reach_it() -> None:
    # No coin wraps (`wrap_rate` 0): the wrappers added for `min_share` are each the one of
    # lowest coin that moves a control not moved yet, and they stop at the share: half of the
    # eight links here, each in a block of its own (the link or its block: one wrapper each;
    # a wrapped block moves the paths of the blocks after it too, so the share may be more).
    page = b"<html><body>%s</body></html>" % b"".join(
        b"<div><a href='/%d'>Item %d</a></div>" % (i, i) for i in range(8)
    )
    for seed in range(6):
        params = {**NEVER, "min_share": 0.5}
        out, notes = drift(page, replace(CTX, seed=seed, shift_params={"locator_drift": params}))
        assert notes["wrappers"] == 4 and notes["share"] >= 0.5, (seed, notes)


@given(
    parents=st.lists(st.integers(0, 40), min_size=1, max_size=40),
    skipped=st.sets(st.integers(0, 40)),
    tops=st.sets(st.integers(0, 40), min_size=1, max_size=4),
)
def test_in_subtrees_finds_the_nodes_at_or_below_a_top(
    parents: list[int], skipped: set[int], tops: set[int]
) -> None:
    # A tree of up to 41 nodes, each below an earlier one, asked in document order but for
    # some: the nodes found are those that are a top or below one, however many ancestors
    # they share (a walk's answers are kept for the nodes it passed, and read again).
    from shifts.perceptual.locators import _in_subtrees

    tree = [etree.Element("r")]
    for index, parent in enumerate(parents):
        tree.append(etree.SubElement(tree[parent % (index + 1)], "n"))
    asked = [n for n in tree[0].iter() if tree.index(n) not in skipped]
    top_nodes = {tree[i % len(tree)] for i in tops}
    inside = [n for n in asked if any(a in top_nodes for a in [n, *n.iterancestors()])]
    assert _in_subtrees(asked, top_nodes) == inside


@given(
    page=st.text(alphabet="ab-_ .#\"'<>=x1é", max_size=80),
    name=st.text(alphabet="ab-_x1", min_size=1, max_size=4),
)
def test_mentions_count_words_as_tokenising_would(page: str, name: str) -> None:
    from collections import Counter

    from shifts.perceptual.locators import _Mentions

    raw = page.encode()
    tokens = Counter(re.findall(rb"[A-Za-z0-9_-]+", raw))
    assert _Mentions(raw).count(name) == tokens[name.encode()]
    for limit in range(4):  # counting may stop early: the answer may not change
        assert _Mentions(raw).more_than(name, limit) == (tokens[name.encode()] > limit)
        # (the names to be asked told in advance, this one among them or not)
        for asked in ([name, "ab"], ["ab"], []):
            assert _Mentions(raw, asked).more_than(name, limit) == (tokens[name.encode()] > limit)


@pytest.mark.parametrize("in_c", [True, False])
def test_mentions_of_a_page_of_unique_ids_read_it_a_bounded_number_of_times(
    in_c: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page asks after each of its ids, and a unique id is only known to be unique at the
    page's end: the scans stop at a few dozen pages' worth, and every count stays a
    tokeniser's (the ones asked before the switch and after). Counted in C, the names told
    in advance are counted at the first ask: only the others are scanned for."""
    from collections import Counter

    from shifts import native
    from shifts.perceptual.locators import _Mentions

    if in_c:
        assert native.count_words is not None
    else:
        monkeypatch.setattr(native, "count_words", None)

    raw = "".join(
        f'<a id="item-{i}" class="x" data-x="item-{i % 7}">item-{i // 2} é</a>' for i in range(3000)
    ).encode()
    tokens = Counter(re.findall(rb"[A-Za-z0-9_-]+", raw))
    names = [f"item-{i}" for i in range(3000)] + ["x", "a", "é", "item-1 é", "none"]
    # Told the names in advance (all but a few, each scanned for twice after the count)
    asked = names[:2990]
    unasked = [name for name in names[2990:] if re.fullmatch(r"[A-Za-z0-9_-]+", name)]
    bounds = {None: _Mentions.SCANS_BEFORE_COUNTING + 1}
    scans_first = 0 if in_c else _Mentions.SCANS_BEFORE_COUNTING + 1
    bounds[len(asked)] = scans_first + 2 * len(unasked)
    for mentions, told in ((_Mentions(raw), None), (_Mentions(raw, asked), len(asked))):
        for name in names:
            expected = tokens[name.encode()] if re.fullmatch(r"[A-Za-z0-9_-]+", name) else None
            if expected is None:
                assert mentions.count(name) == raw.count(name.encode())
            else:
                assert mentions.count(name) == expected, name
                assert mentions.more_than(name, 1) == (expected > 1), name
        assert mentions._words is not None  # (the switch to counting happened)
        assert mentions._scanned <= bounds[told] * len(raw)


def _first_words_by_definition(element: etree._Element) -> str:
    """The definition `_first_words` computes faster: its whole text, normalized and masked,
    its first 40 characters."""
    return volatile.mask_text(" ".join("".join(map(str, element.itertext())).split()))[:40]


def test_a_number_of_another_length_is_the_same_coin() -> None:
    """A count, a clock or a response time of another length moves no character a coin reads:
    the first 40 characters are those of the masked text. A value the first characters end
    in is read whole, however long."""
    from shifts.perceptual.locators import _first_words

    def words(html: str) -> str:
        return _first_words(etree.fromstring(html, etree.HTMLParser()).find(".//div"))

    for short, long in (("3", "12"), ("9", "10"), ("99", "100000")):
        sentence = "<div><span>Posted {} days ago</span> by the admin of this site, in News</div>"
        assert words(sentence.format(short)) == words(sentence.format(long))
    indented = "<div>" + " " * 190 + "<b>ab" + "x" * 300 + "1</b> and the rest</div>"
    assert words(indented) == "# and the rest"


@given(
    parts=st.lists(
        st.one_of(
            st.text(" \n\t", min_size=20, max_size=80), st.text("ab1", min_size=1, max_size=5)
        ),
        max_size=20,
    )
)
def test_the_first_words_of_an_element_are_those_of_its_whole_text(parts: list[str]) -> None:
    """Indented markup (parts mostly whitespace) and long texts, nested at every depth, a run
    with a digit wherever the first 201 characters end: read as the whole text reads."""
    from shifts.perceptual.locators import _first_words

    html = "".join(f"<span>{part}" for part in parts) + "</span>" * len(parts)
    root = etree.fromstring(f"<html><body><div>{html}</div></body></html>", etree.HTMLParser())
    for element in root.iter():
        assert _first_words(element) == _first_words_by_definition(element)


def test_the_first_words_on_real_pages() -> None:
    from shifts.perceptual.locators import _first_words

    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        for element in root.iter():
            if isinstance(element.tag, str):
                assert _first_words(element) == _first_words_by_definition(element), page.name


# A React/Vue shell renders into `#root`, which its script finds by id; Angular's into
# `<app-root>`, found by its tag (the component's selector), no id.
SHELLS = {
    "react": (
        b"<html><head><script type='module' src='/assets/index.js'></script></head>"
        b"<body><div id='root'></div></body></html>",
        'createRoot(document.getElementById("root")).render(App)',
        b'<div id="root"></div>',
    ),
    "angular": (
        b"<html><head><base href='/'><script src='main.js' type='module'></script></head>"
        b"<body><app-root></app-root><noscript>Enable JavaScript</noscript></body></html>",
        'Ut(App, {selectors: [["app-root"]], standalone: true})',
        b"<app-root></app-root>",
    ),
}


@pytest.mark.parametrize("app", SHELLS)
def test_a_single_page_apps_mount_point_is_wrapped_whatever_the_seed(app: str) -> None:
    """The shell of a single-page app has no controls of its own: they render into its mount
    point. Its id or tag stays; a wrapper moves every element path under it."""
    shell, script, mount = SHELLS[app]
    bundle = js_refs(script)
    for seed, out, notes in over_seeds(shell, bundle, seeds=10):
        tag = wrapper_tag(seed).encode()
        assert b"<" + tag + b">" + mount + b"</" + tag + b">" in out, seed
        assert notes["wrappers"] == 1


def test_an_empty_element_a_script_holds_on_a_page_of_controls_is_no_mount_point() -> None:
    """phpMyAdmin fills `#floating_menubar` (empty as served) later, and on each AJAX page
    change removes every child of `<body>` but it (`$("body").children().not(
    "#floating_menubar").remove()`): a wrapper around it went with the others, and the menu
    bar with it. Only a shell's mount point (no control in the markup) is wrapped so."""
    page = (
        b"<html><body><div id='floating_menubar' class='d-print-none'></div>"
        b"<div id='page_content'>"
        + b"".join(b"<p><a href='/%d'>%d</a></p>" % (i, i) for i in range(30))
        + b"</div></body></html>"
    )
    scripts = js_refs('$("body").children().not("#floating_menubar").remove(); $("#page_content")')
    for seed, out, _ in over_seeds(page, scripts, seeds=10):
        assert b'<body><div id="floating_menubar"' in out, seed


def test_a_custom_element_that_holds_something_or_that_a_rule_places_is_no_mount_point() -> None:
    shell, script, _ = SHELLS["angular"]
    bundle = js_refs(script)
    filled = shell.replace(b"<app-root></app-root>", b"<app-root><p>Loading</p></app-root>")
    assert "wrappers" not in drift(filled, by_default(), assets=bundle)[1]
    positional = merge_refs([bundle, css_refs("body > :first-child { margin: 0 }")])
    assert "wrappers" not in drift(shell, by_default(), assets=positional)[1]


def test_an_element_given_to_a_named_slot_is_not_wrapped() -> None:
    """A web component's shell: `<app-main slot="content">` is shown in its host's named slot
    only while it is the host's direct child; wrapped, Chromium renders it nowhere. The mount
    point is left as it is."""
    host = (
        "customElements.define('my-shell', class extends HTMLElement { constructor() {"
        " super(); this.attachShadow({mode: 'open'}).innerHTML ="
        " '<slot name=\"content\"></slot>'; } });"
    )
    bundle = js_refs(host + ' Ut(App, {selectors: [["app-main"]]})')
    shell = (
        b"<html><head><script src='main.js' type='module'></script></head>"
        b"<body><my-shell><app-main slot='content'></app-main></my-shell></body></html>"
    )
    for seed, out, notes in over_seeds(shell, bundle):
        assert wrapper_tag(seed).encode() not in out, seed
        assert "wrappers" not in notes
    # Nor in the host's default slot (`test_a_custom_elements_children_are_not_wrapped`); a
    # mount point beside the host is wrapped.
    unslotted = shell.replace(b" slot='content'", b"")
    assert "wrappers" not in drift(unslotted, by_default(), assets=bundle)[1]
    beside = shell.replace(
        b"<app-main slot='content'></app-main></my-shell>", b"</my-shell><app-main></app-main>"
    )
    out, _ = drift(beside, by_default(), assets=bundle)
    tag = wrapper_tag(CTX.seed).encode()
    assert b"<" + tag + b"><app-main></app-main></" + tag + b">" in out
    slotted_div = (
        b"<html><body><my-card><div slot='title'><a href='/x'>X</a></div></my-card>"
        b"<div><a href='/y'>Y</a></div></body></html>"
    )
    for seed, out, _ in over_seeds(slotted_div, js_refs(host)):
        assert b"<my-card><div slot=" in out, seed


def test_a_custom_elements_children_are_not_wrapped() -> None:
    """An empty custom element inside another is no mount point but a child its host's
    shadow tree assigns to its default slot, styles (`::slotted(x-tab)`) and walks
    (`this.children`): wrapped, `t.attach` is no function of a wrapper. The shell's own
    mount point is still wrapped."""
    script = (
        'customElements.define("x-tabs", class extends HTMLElement { connectedCallback() {'
        " for (const t of this.children) t.attach(this) } });"
        ' customElements.define("x-tab", class extends HTMLElement { attach(p) {} });'
    )
    shell = (
        b"<html><head><script src='app.js'></script></head><body>"
        b"<x-tabs><x-tab></x-tab><x-tab></x-tab></x-tabs><app-root></app-root></body></html>"
    )
    for seed, out, notes in over_seeds(shell, js_refs(script)):
        assert b"<x-tabs><x-tab></x-tab><x-tab></x-tab></x-tabs>" in out, seed
        assert notes["wrappers"] == 1, seed


@pytest.mark.parametrize("perceptual", ["benchmark", "extended"])
def test_the_change_map_points_at_the_elements_before_and_after(perceptual: str) -> None:
    """Every change's `before.path` finds the element in the page as sent, its `after.path`
    in the page as served, even when a later shift (relayout) moved it again; the id, classes
    and hooks on each side are that element's there, and the two sides differ."""

    def names_of(element: etree._Element) -> dict[str, object]:
        return {
            "id": element.get("id"),
            "classes": (element.get("class") or "").split(),
            "hooks": {k: v for k, v in element.items() if k.startswith("data-")},
        }

    renamed = 0
    for page in fixture_pages():
        raw = page.read_bytes()
        for seed in (0, 1):
            episode = new_episode(
                EpisodeConfig(condition="Src-Perc", perceptual=perceptual, seed=seed)
            )
            _, doc = shift_offline(episode, "http://app.test/", raw, assets=EMPTY)
            served = HtmlDocument(doc.to_bytes()).tree.getroottree()
            source = HtmlDocument(raw).tree.getroottree()
            assert doc.changes, page.name
            for change in doc.changes:
                for tree, side in ((source, "before"), (served, "after")):
                    found = tree.xpath(change[side]["path"])
                    assert found and found[0].tag == change["tag"], (page.name, side, change)
                    if change["shift"] == LocatorDrift.name:  # (relabel's record labels)
                        named = {key: change[side][key] for key in ("id", "classes", "hooks")}
                        assert named == names_of(found[0]), (page.name, side, change)
                assert change["before"] != change["after"], (page.name, change)
                renamed += change["before"]["id"] != change["after"]["id"]
            if perceptual == "benchmark":  # (no shift but the drift moves a control)
                # Every control whose names differ is recorded, moved or not: the drift's
                # controls are the same in both pages, in the same order.
                recorded = {change["before"]["path"] for change in doc.changes}
                sent, shown = (interactive_elements(tree.getroot()) for tree in (source, served))
                assert len(sent) == len(shown), page.name
                for before, after in zip(sent, shown, strict=True):
                    if names_of(before) != names_of(after):
                        assert source.getpath(before) in recorded, (page.name, before.attrib)
    assert renamed > 50  # (names that moved, not only paths)


def test_nothing_is_wrapped_inside_a_wrapper_a_has_rule_matches() -> None:
    """A `:has()` that matches the episode's wrapper makes its inside structure-sensitive,
    like that of any element it matches: what was wrapped first keeps its inside as it is."""
    wrapper = wrapper_tag(CTX.seed).encode()
    page = (
        b"<html><head><style>" + wrapper + b":has(a) { outline: 0 }</style></head><body>"
        b"<div><section><p><a href='/x'>t</a></p></section></div></body></html>"
    )
    out, notes = drift(page)
    assert notes["wrappers"] == 1 and out.count(b"<" + wrapper + b">") == 1
    assert b"<" + wrapper + b"><div><section><p><a" in out


LIST_PAGE = (
    b"<html><body><nav class='menu'><a href='/1'>1</a><a href='/2'>2</a></nav>"
    b"<div><a href='/3'>3</a></div></body></html>"
)


def test_a_scripts_relative_selector_holds_the_children_of_what_it_holds_only() -> None:
    # jQuery UI's `items: "> *"`: the children of the menu the app found by its class stay
    # its children; the link elsewhere is free (read as `* > *`, it held every element).
    menu = js_refs('$(".menu").menu({items: "> *"})')
    out, notes = drift(LIST_PAGE, assets=menu)
    assert b'<nav class="menu"><a href="/1">1</a><a href="/2">2</a></nav>' in out
    assert notes["wrappers"] >= 1 and b'<div><a href="/3">' not in out
    # The same children, held by an attribute a script reads (Stimulus' `[data-controller]`).
    page = LIST_PAGE.replace(b"class='menu'", b"data-controller='w-menu'")
    held = js_refs('document.querySelectorAll("[data-controller]"); x.find("> a")')
    out, _ = drift(page, assets=held)
    assert b'<a href="/1">1</a><a href="/2">2</a></nav>' in out


@pytest.mark.parametrize(
    "script",
    [
        'document.getElementById("menu")',  # held by a name
        'document.querySelectorAll("[data-controller]")',  # found by a widget's attribute
        'document.getElementById("menu"); document.querySelectorAll("[data-controller]")',
    ],
)
def test_a_node_a_script_holds_by_a_name_or_finds_by_a_widget_attribute_may_be_walked(
    script: str,
) -> None:
    page = etree.HTML(
        "<html><body><nav id='menu'><a href='/1'>1</a></nav>"
        "<div data-controller='tabs'><a href='/2'>2</a></div><p>x</p></body></html>"
    )
    ask = WrapQuestions.of(PageRefs(js_refs(script), EMPTY))
    walked = {node.tag for node in page.iter("nav", "div", "p") if ask.walked_by_scripts(node)}
    by_name, by_widget = "getElementById" in script, "data-controller" in script
    assert walked == {tag for tag, held in (("nav", by_name), ("div", by_widget)) if held}


def test_an_attribute_only_a_stylesheet_selects_by_holds_no_children() -> None:
    # WordPress's admin styles its file tree by `[role="treeitem"]`: no script finds an
    # element by its role, so the children of `role="main"` are free (they were held on every
    # admin page). A script that reads the attribute holds them.
    page = LIST_PAGE.replace(b"class='menu'", b"role='navigation'")
    styled = css_refs('[role="treeitem"] span[aria-hidden] { display: none }')
    out, notes = drift(page, assets=styled)
    assert b'<nav role="navigation"><a href="/1">1</a><a href="/2">2</a></nav>' not in out
    assert notes["wrappers"] >= 1
    read = merge_refs([styled, js_refs('el.getAttribute("role"); x.find("> a")')])
    out, _ = drift(page, assets=read)
    assert b'<a href="/1">1</a><a href="/2">2</a></nav>' in out


def test_what_follows_an_element_a_script_holds_stays_when_a_script_selects_such() -> None:
    page = LIST_PAGE.replace(b"<a href='/1'>", b"<a class='first' href='/1'>")
    out, _ = drift(page, assets=js_refs('$(".first").find("+ a")'))
    assert b'href="/1">1</a><a href="/2">' in out  # still the next sibling of the held one
    out, _ = drift(page, assets=js_refs('$(".first")'))
    assert b'href="/1">1</a><a href="/2">' not in out  # no script selects what follows
    # Relative to what a script holds (`"a#" + id + "+*"`), `+` is the next sibling only, `~`
    # any later one.
    page = page.replace(b"</nav>", b"<a href='/4'>4</a></nav>")
    out, _ = drift(page, assets=js_refs('$(".first").find("+*")'))
    assert b'href="/1">1</a><a href="/2">2</a><a href="/4">' not in out
    out, _ = drift(page, assets=js_refs('$(".first").find("~ *")'))
    assert b'href="/1">1</a><a href="/2">2</a><a href="/4">' in out


def test_a_has_that_only_looks_for_descendants_leaves_the_inside_free() -> None:
    # Wrappers keep descendants descendants: `nav:has(a[href])` matches as before; a child
    # combinator inside the `:has()` does not.
    wrapper = wrapper_tag(CTX.seed).encode()

    def inside_nav(out: bytes) -> bytes:
        return out.split(b"<nav")[1].split(b"</nav>")[0]

    out, _ = drift(LIST_PAGE, assets=css_refs("nav:has(a[href]) { color: red }"))
    assert wrapper in inside_nav(out)
    out, _ = drift(LIST_PAGE, assets=css_refs("nav:has(> a[href]) { color: red }"))
    assert wrapper not in inside_nav(out) and wrapper in out


def test_an_id_a_script_reaches_by_named_access_stays_and_holds_its_children() -> None:
    page = b"<body><nav id='menu'><a href='/1'>1</a></nav><p><a href='/2'>x</a></p></body>"
    out, _ = drift(page, assets=js_refs("menu.firstElementChild.focus()"))
    assert b'<nav id="menu"><a href="/1">1</a></nav>' in out
    out, _ = drift(page, assets=js_refs("this.menu.focus()"))  # a property: no named access
    assert b'<nav id="menu"><a href="/1">1</a></nav>' not in out


def test_a_relative_selector_that_looks_inside_what_it_selects_holds_that_inside() -> None:
    # `$(".menu").find("> :has(> a)")`: the children of the menu that hold a link as a child.
    # The script keeps the menu's children in place, not their links: a wrapper around a link
    # leaves its `<div>` no link child, and the script finds nothing.
    page = (
        b"<html><body><nav class='menu'><div><a href='/1'>1</a></div>"
        b"<div><a href='/2'>2</a></div></nav></body></html>"
    )
    for script in ('$(".menu").find("> :has(> a)")', '$(".menu").find("+ :has(> a)")'):
        out, _ = drift(page, assets=js_refs(script))
        links = etree.HTML(out).xpath("//a")
        assert [link.getparent().tag for link in links] == ["div", "div"], script


def test_an_element_a_script_finds_by_a_class_keeps_its_id_when_scripts_read_ids_as_data() -> None:
    # DokuWiki's media manager finds its file links by `a.select` and takes the file a click
    # inserts from the id (`$link.attr('id').substr(2)`): renamed, a click on the thumbnail
    # inserted `{{ gciqi4 |}}` into the page being edited, and the wiki saved it.
    page = (
        b"<html><body><div id='media__content'>"
        b"<a id='h_:wiki:logo.png' class='select mediafile'>logo.png</a>"
        b"<a id='d_:wiki:logo.png' class='select'><img src='/f.png' alt='logo.png'></a>"
        b"<a id='d_:wiki:next.png' class='select'>next.png</a>"  # (a class attribute met again)
        b"<span id='w_:wiki:x.png' data-media='1'>x.png</span>"  # (found by its data attribute)
        b"<p id='other' class='info'>x</p></div></body></html>"
    )
    script = (
        "jQuery('#media__content').on('click', 'a.select', function () {"
        " var id = jQuery(this).attr('id').substr(2); insert(id); });"
        " jQuery('[data-media]').each(function () { show(this.getAttribute('data-media')); });"
    )
    out, _ = drift(page, assets=js_refs(script))
    assert b'id="h_:wiki:logo.png"' in out and b'id="d_:wiki:logo.png"' in out
    assert b'id="d_:wiki:next.png"' in out and b'id="w_:wiki:x.png"' in out
    assert b'id="other"' not in out  # found by no class a script uses: it drifts
    out, _ = drift(page, assets=js_refs(script.replace(".attr('id').substr(2)", ".attr('title')")))
    assert b'id="h_:wiki:logo.png"' not in out  # a script that reads no id as data


def test_ids_read_as_data_are_asked_per_class_attribute() -> None:
    # Class attributes of the same length, one a script finds its elements by and one not: each
    # answered for itself (the element held, its ancestors with it).
    from shifts.perceptual.locators import ids_read_as_data

    root = etree.fromstring(
        "<html><body><p class='free'><a id='a1' class='hold'>x</a></p>"
        "<p class='free'><a id='a2' class='hold'>y</a><b class='miss'>z</b></p></body></html>",
        etree.HTMLParser(),
    )
    refs = PageRefs(
        js_refs("$('.hold').each(function () { use($(this).attr('id').substr(2)) })"), EMPTY
    )
    kept = ids_read_as_data(root, refs)
    links = root.xpath("//a")
    assert kept == {node for link in links for node in [link, *link.iterancestors()]}


def test_each_reference_to_an_id_counts_as_one_the_drift_renames_along() -> None:
    # An id named by each reference attribute of an element, and one named twice by one: every
    # mention is a reference the rename follows, so each is renamed (the page mentions none
    # more than its references and its own attribute do).
    page = (
        b"<html><body><label for='x' aria-describedby='y'>Name</label><input id='x'>"
        b"<span id='y'>Help</span><input aria-describedby='hq hq'><span id='hq'>More</span>"
        b"</body></html>"
    )
    ids = {"id_rate": 1.0, "class_rate": 0.0, "wrap_rate": 0.0, "min_share": 0.0}
    out, notes = drift(page, replace(CTX, shift_params={"locator_drift": ids}))
    assert notes["ids"] == 3, notes
    for old in (b"x", b"y", b"hq"):
        assert b'id="%s"' % old not in out and b'"%s"' % old not in out


@pytest.mark.parametrize(
    "script",
    [
        "$c.find('a.allowedmime').on('click', toggle).next('span').hide();",
        "$('a.allowedmime').next('SPAN')",  # (a tag in any case)
    ],
)
def test_what_a_script_steps_to_after_an_element_it_holds_stays_after_it(script: str) -> None:
    # DokuWiki's media manager hides its list of allowed extensions by `.next('span')` from the
    # link it finds by class: a wrapper around the list left it shown, and the page below moved.
    page = (
        b"<html><body><p class='maxsize'>Max 2 MB. <a class='allowedmime' href='#'>List</a> "
        b"<span>jpg, png</span></p></body></html>"
    )
    for seed in range(8):
        out, _ = drift(page, replace(CTX, seed=seed), assets=js_refs(script))
        span = etree.HTML(out).xpath("//span")[0]
        assert span.getprevious() is not None and span.getprevious().tag == "a", seed


@pytest.mark.parametrize(
    ("script", "kept"),
    [
        ("$('a.allowedmime').prev('span').addClass('on');", ["2"]),  # the one just before
        ("$('a.allowedmime').prevAll('span').hide();", ["1", "2"]),  # any before it
        ("$('a.allowedmime').siblings('span').hide();", ["1", "2", "3"]),  # both ways
    ],
)
def test_what_a_script_steps_back_to_from_an_element_it_holds_stays_before_it(
    script: str, kept: list[str]
) -> None:
    page = (
        b"<html><body><p class='maxsize'><span>1</span><span>2</span>"
        b"<a class='allowedmime' href='#'>List</a><span>3</span></p></body></html>"
    )

    def wrapped(script: str, seed: int) -> set[str]:
        out, _ = drift(page, replace(CTX, seed=seed), assets=js_refs(script))
        spans = etree.HTML(out).xpath("//span")
        return {span.text for span in spans if span.getparent().tag != "p"}

    for seed in range(8):
        assert not wrapped(script, seed) & set(kept), seed
    # (with no such step, or one to something else, the same elements are wrapped on a seed)
    for other in ("$('a.allowedmime')", script.replace("'span'", "'em'")):
        assert set().union(*(wrapped(other, seed) for seed in range(8))) >= set(kept), other


def test_a_row_whose_id_a_script_reads_off_what_it_holds_keeps_its_id() -> None:
    # WordPress's `getId`: a click on a control finds its row and reads the row's id as data.
    page = (
        b"<html><body><table><tr id='row_17'><td><a class='edit' href='#'>Edit</a></td></tr>"
        b"</table><p id='other'>x</p></body></html>"
    )
    script = "$('.edit').click(function(){ var n = $(this).closest('tr').attr('id').split('_'); })"
    for seed in range(4):
        out, _ = drift(page, replace(CTX, seed=seed), assets=js_refs(script))
        assert b'id="row_17"' in out and b'id="other"' not in out, seed


def test_a_forms_per_request_name_decides_no_wrapper() -> None:
    """Redmine names each form anew on every request (`form_tag_html`: its id, or `form`, then
    `-` and 8 random hex digits, against a Firefox autofill bug): the seeded coin must not read
    it, or each load of a page wraps its forms (and moves every control's element path inside)
    or not by chance, and the same seed drifts the same page differently from load to load."""
    params = {"id_rate": 0.0, "class_rate": 0.0, "wrap_rate": 0.5, "min_share": 0.0}
    names = ("new_membership-1bc7f1c4", "new_membership-a94e5357", "new_membership-368777c2")
    names += ("new_membership-2d182fff", "new_membership-ab32575f", "new_membership-38212c0d")
    for seed in range(8):
        ctx = replace(CTX, seed=seed, shift_params={"locator_drift": params})
        outs = set()
        for name in names:
            page = (
                b"<html><body><form id='new_membership' action='/m' name='" + name.encode()
                + b"'><input name='q'><button>Add</button></form></body></html>"
            )  # fmt: skip
            out, _ = drift(page, ctx)
            outs.add(out.replace(name.encode(), b"NAME"))
        assert len(outs) == 1, seed


def test_a_clock_in_a_text_decides_no_wrapper() -> None:
    """WordPress's General Settings show the time to the second ("Universal time is
    2026-12-05 22:52:40"): the seeded coin must not read a text's numbers, or the same seed
    wraps the page differently at each load (3 shapes in 6 loads a second apart, on seeds 0-2,
    before)."""
    params = {"id_rate": 0.0, "class_rate": 0.0, "wrap_rate": 0.5, "min_share": 0.0}
    times = [
        f"2026-12-05 22:{minute:02d}:{second:02d}" for minute in (52, 59) for second in (0, 7, 41)
    ]
    for seed in range(8):
        ctx = replace(CTX, seed=seed, shift_params={"locator_drift": params})
        outs = set()
        for time in times:
            page = (
                "<html><body><form action='/o'><p class='timezone-info'><span id='utc-time'>"
                f"Universal time is <code>{time}</code>.</span></p><p>{time[-2:]} comments</p>"
                "<input name='q'><button>Save</button></form></body></html>"
            ).encode()
            out, _ = drift(page, ctx)
            outs.add(out.replace(time.encode(), b"TIME").replace(time[-2:].encode(), b"SS"))
        assert len(outs) == 1, seed


def test_a_per_request_value_across_the_coins_cut_of_a_text_decides_no_wrapper() -> None:
    """A coin reads a text's first 40 characters: a per-request value the cut split was read
    in part (`xyzabcde`, another at each load), unmasked, and 6 of 12 seeds wrapped the link
    at one load and not at the next. The text is masked before the cut."""
    params = {"id_rate": 0.0, "class_rate": 0.0, "wrap_rate": 0.5, "min_share": 0.0}
    for seed in range(12):
        ctx = replace(CTX, seed=seed, shift_params={"locator_drift": params})
        outs = set()
        for key in ("xyzabcdefg1234", "xyzqrstuvw9876", "mnbvcxzlkj5678"):
            page = (
                f"<html><body><p><a href='/k'>Read the whole story of the key {key}</a></p>"
                "<form action='/o'><input name='q'><button>Save</button></form></body></html>"
            ).encode()
            out, _ = drift(page, ctx)
            outs.add(out.replace(key.encode(), b"KEY"))
        assert len(outs) == 1, seed


def test_an_id_made_anew_at_each_request_is_decided_alike_at_every_load() -> None:
    """Tasty Recipes names its rating inputs by PHP's `uniqid()` (another at each load): the
    coins that rename ids and classes and wrap elements must not read that run, or each load
    of a page under one seed drifts its rating inputs differently. An app's counters
    (`post-1234`) are no such run, and their coins stay their own."""
    params = {"id_rate": 0.5, "class_rate": 0.5, "wrap_rate": 0.5, "min_share": 0.0}
    uniqids = ["6a0f6f8893708", "6a0f6f88937dd", "6a0f70a1c2b3e", "6a0f70a1d00f1", "6b11a0e9f2c4"]
    for seed in range(8):
        ctx = replace(CTX, seed=seed, shift_params={"locator_drift": params})
        shapes = set()
        for uniqid in uniqids:
            name = f"tasty_recipes_rating_input_{uniqid}"
            page = (
                b"<html><body><fieldset class='tasty-recipes-ratings'>"
                + b"".join(
                    f"<span><input type='radio' id='{name}{star}' class='rating-{uniqid}'"
                    f" value='{star}'><label for='{name}{star}'>{star}</label></span>".encode()
                    for star in range(1, 4)
                )
                + b"</fieldset></body></html>"
            )
            out, _ = drift(page, ctx)
            # what was decided: which ids and classes kept their names, where wrappers went
            for star in range(1, 4):
                out = out.replace(f"{name}{star}".encode(), b"KEPT")
                out = out.replace(drifted_id(seed, f"{name}{star}").encode(), b"RENAMED")
            out = out.replace(f"rating-{uniqid}".encode(), b"KEPT")
            out = out.replace(drifted_class(seed, f"rating-{uniqid}").encode(), b"RENAMED")
            shapes.add(out)
        assert len(shapes) == 1, seed


@pytest.mark.parametrize(
    "loads",
    [
        # PHP's uniqid(), a UUID (its 4-digit parts too), a timestamp in seconds and in ms
        ("6a0f6f8893708", "6a0f70a1c2b3e", "6b11a0e9f2c4d"),
        (
            "3fa85f64-5717-4562-b3fc-2c963f66afa6",
            "9b2d7e10-04c1-4a8e-9f3d-6c1b2a7e5d40",
            "c0ffee00-1234-4bcd-8ef0-a1b2c3d4e5f6",
        ),
        ("1733412345", "1733498765", "1734000001"),
        ("1733412345678", "1733498765432", "1734000001999"),
    ],
    ids=["uniqid", "uuid", "seconds", "milliseconds"],
)
def test_names_made_anew_at_each_load_decide_alike_over_ten_seeds(loads: tuple[str, ...]) -> None:
    """Ids, classes and form names holding a value made at each request: the id, class and
    wrapper coins decide alike at every load, seed after seed."""
    params = {"id_rate": 0.5, "class_rate": 0.5, "wrap_rate": 0.5, "min_share": 0.0}

    def page(value: str) -> bytes:
        return (
            b"<html><body><form action='/x'>"
            + b"".join(
                f"<div class='box'><span><input type='checkbox' id='f{k}-{value}'"
                f" class='c{k}-{value}' name='n{k}-{value}'><label for='f{k}-{value}'>Option {k}"
                f"</label></span></div>".encode()
                for k in range(4)
            )
            + b"</form></body></html>"
        )

    for seed in range(10):
        ctx = replace(CTX, seed=seed, shift_params={"locator_drift": params})
        shapes = set()
        for value in loads:
            out, _ = drift(page(value), ctx)
            for k in range(4):
                for name, token, kind in (
                    (f"f{k}-{value}", drifted_id(seed, f"f{k}-{value}"), "ID"),
                    (f"c{k}-{value}", drifted_class(seed, f"c{k}-{value}"), "CLASS"),
                ):
                    out = out.replace(token.encode(), f"RENAMED-{kind}{k}".encode())
                    out = out.replace(name.encode(), f"KEPT-{kind}{k}".encode())
                out = out.replace(f"n{k}-{value}".encode(), f"NAME{k}".encode())
            shapes.add(out)
        assert len(shapes) == 1, seed


def whole_short_text(element: etree._Element) -> str:
    """`_short_text`'s definition: the whole text, normalized, cut."""
    return " ".join("".join(element.itertext()).split())[:CHANGE_MAP_TEXT_CHARS]


def test_a_short_text_is_the_start_of_the_whole_text_normalized() -> None:
    read = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        for element in root.iter(etree.Element):
            assert _short_text(element) == whole_short_text(element)
            read += 1
    assert read > 4_000


# Parts that split a word, runs of spaces longer than the text kept, a text that ends inside
# a word at the cut, elements with no text.
TEXT_PART = st.sampled_from(["", " ", "  \n\t" * 12, "ab", "c", "word ", "x" * 45, "é\u00a0"])


@given(parts=st.lists(TEXT_PART, max_size=14), leaf=st.booleans())
def test_generated_texts_are_cut_alike(parts: list[str], leaf: bool) -> None:
    root = etree.Element("div")
    root.text = "".join(parts) if leaf else (parts[0] if parts else None)
    for part in [] if leaf else parts[1:]:
        child = etree.SubElement(root, "span")
        child.text, child.tail = part[: len(part) // 2], part[len(part) // 2 :]
    assert _short_text(root) == whole_short_text(root)


def _ids_read_as_data_by_definition(root: etree._Element, refs: PageRefs) -> set[etree._Element]:
    """What `ids_read_as_data` keeps, every element of the page asked (its definition: it
    asks only those with a class or an attribute of a widget's name)."""
    from shifts.perceptual.locators import _uses_a_class
    from shifts.references.model import WIDGET_ATTRIBUTE_PREFIXES

    kept: set[etree._Element] = set()
    for element in root.iter(etree.Element):
        found = _uses_a_class(element.get("class") or "", refs) or any(
            isinstance(name, str)
            and name.startswith(WIDGET_ATTRIBUTE_PREFIXES)
            and any(part.scripts_read_attribute(name) for part in (refs.assets, refs.inline))
            for name in element.attrib
        )
        if found:
            kept.update([element, *element.iterancestors()])
    return kept


# Scripts that read ids as data, finding elements by a class, or by a widget's attributes too.
_READING_IDS = [
    "$('.hold, .menu-item, .btn').each(function () { use($(this).attr('id').substr(2)) })",
    "$('[data-role], [aria-expanded], [role=tab], .hold').on('click', function () {"
    " use(this.getAttribute('id').substr(2)) })",
]


@pytest.mark.parametrize("script", _READING_IDS)
def test_ids_read_as_data_are_those_of_every_element_asked(script: str) -> None:
    from shifts.perceptual.locators import ids_read_as_data

    refs = PageRefs(js_refs(script), EMPTY)
    assert refs.parses_ids
    compared = 0
    for page in fixture_pages():
        root = etree.fromstring(page.read_bytes(), etree.HTMLParser())
        expected = _ids_read_as_data_by_definition(root, refs)
        assert ids_read_as_data(root, refs) == expected
        compared += len(expected)
    assert compared > 100


@given(
    fragment=fragments(
        ["div", "span", "a"],
        ["class", "data-role", "data-x", "aria-expanded", "role", "roles", "id", "DATA-ROLE"],
        ["hold", "x hold", "tab", ""],
    ),
    renamed=st.sampled_from(["", "DATA-ROLE", "data-Role", "data-rolé", "{urn:x}data-role"]),
    top=st.sampled_from(["", " class='hold'", " role='tab'"]),
)
def test_ids_read_as_data_of_generated_trees(fragment: str, renamed: str, top: str) -> None:
    """Generated trees, one element's attribute set after the parse under a name the parser
    would not write (in upper case, beyond ASCII, in a namespace), the root found or not: each
    asked as every element would be."""
    from shifts.perceptual.locators import ids_read_as_data

    root = etree.fromstring(f"<html{top}><body>{fragment}</body></html>", etree.HTMLParser())
    if renamed:
        root[-1].set(renamed, "tab")
    for script in _READING_IDS:
        refs = PageRefs(js_refs(script), EMPTY)
        assert ids_read_as_data(root, refs) == _ids_read_as_data_by_definition(root, refs)


def test_names_decided_together_are_decided_as_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page's class names are decided before the walk that sets them, their coins drawn
    and new names made together in C: the same page as each name decided alone, as the walk
    meets it (no names found first), and as the Python draws them."""
    from shifts import native
    from shifts.perceptual import locators

    pages = [page.read_bytes() for page in fixture_pages()]
    # A site's hook classes (renamed without a coin), a `js-` one, and names no coin renames.
    pages.append(
        b'<body><a class="qa-go js-x b1 b2" id="g">go</a><a class="test-x b3" id="h">h</a></body>'
    )

    # (episodes made once: each has its own keys, which its pages carry)
    episodes = [new_episode(EpisodeConfig(condition="Src-Perc", seed=s)) for s in (3, 2**40)]

    def served() -> list[bytes]:
        return [
            shift_offline(episode, "http://app.test/", raw, assets=EMPTY)[1].to_bytes()
            for episode in episodes
            for raw in pages
        ]

    together = served()
    assert sum(b"qa-go" in page for page in together) == 0  # (a hook class: always renamed)
    with monkeypatch.context() as alone:
        alone.setattr(locators, "_attribute_words", lambda root, name, protected: [])
        assert served() == together
    with monkeypatch.context() as in_python:
        for name in ("coins", "tokens", "coin", "token", "attribute_words", "wrap_candidates"):
            in_python.setattr(native, name, None)
        assert served() == together
