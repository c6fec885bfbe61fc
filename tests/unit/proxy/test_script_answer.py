"""Script answers (rails-ujs `remote: true`, jQuery's `dataType: "script"`): their selector
literals find what locator drift renamed on their page (`proxy.script_answer`)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from mitmproxy import http
from mitmproxy.addonmanager import AddonManager

from proxy.flowstate import state_of
from proxy.knowledge import learner as learner_module
from proxy.rewrite import PASS
from proxy.script_answer import asks_for_script, widen, widen_selector
from proxy.script_markup import read_answer
from proxy.store import MemoryStore
from shifts import apply_shifts
from shifts.document import HtmlDocument
from shifts.perceptual.locators import LocatorDrift, drifted_class, drifted_id
from shifts.references import js_refs
from tests.unit.proxy.conftest import html_response, make_episode
from tests.unit.proxy.test_rewrite import serve
from tests.unit.shifts.perceptual.test_locators import ALWAYS, CTX

# Redmine's issue page, in short: the "Quote" link's answer (journals/new.js.erb) checks the
# private-notes box, which no asset of the page names.
PAGE = (
    b"<html><head><script src='/javascripts/jquery_ujs.js'></script></head><body>"
    b"<a data-remote='true' data-method='post' href='/issues/2/quoted?journal_id=9'>Quote</a>"
    b"<form id='issue-form'><fieldset><textarea id='issue_notes' name='issue[notes]'></textarea>"
    b"<input type='checkbox' id='issue_private_notes' name='issue[private_notes]' value='1'>"
    b"<label for='issue_private_notes'>Private notes</label></fieldset></form>"
    b"<a class='issue-2-watcher icon' data-remote='true' href='/watchers/watch'>Watch</a>"
    b"</body></html>"
)
ANSWER = (
    "$('#issue_notes').blur().focus().val(notes + \"Admin wrote in #note-7:\\n> see .x\");\n"
    "$('#issue_private_notes').prop('checked', true);\n"
    '$(".issue-2-watcher").each(function(){'
    '$(this).replaceWith("<a class=\\"issue-2-watcher\\">U</a>")});\n'
)
SCRIPT_FETCH = {
    "Sec-Fetch-Dest": "empty",
    "Sec-Fetch-Mode": "cors",
    "X-Requested-With": "XMLHttpRequest",
    "Accept": "text/javascript, application/javascript, application/ecmascript, */*; q=0.01",
    "Referer": "http://site.test/app",
}


def js_response(body: bytes) -> http.Response:
    return http.Response.make(200, body, {"Content-Type": "text/javascript; charset=utf-8"})


@pytest.mark.parametrize("seed", range(3))
def test_a_remote_answer_finds_what_the_drift_renamed_on_its_page(seed: int) -> None:
    assets = js_refs("$(document).on('click', '#issue-form', function(){}); $('#issue_notes');")
    ctx = replace(CTX, seed=seed, shift_params={"locator_drift": ALWAYS}, assets=assets)
    out = apply_shifts([LocatorDrift.name], HtmlDocument(PAGE), ctx).to_bytes().decode()
    new_id = re.search(r'id="([^"]+)" name="issue\[private_notes\]"', out).group(1)
    assert new_id == drifted_id(seed, "issue_private_notes")  # (renamed: nothing names it)
    new_class = re.search(r'<a class="([^" ]+) ', out).group(1)
    assert new_class == drifted_class(seed, "issue-2-watcher")
    widened, count = widen(ANSWER, seed)
    assert count == 3
    assert f"$(':is(#issue_private_notes,#{new_id})').prop('checked', true);" in widened
    assert f'$(":is(.issue-2-watcher,.{new_class})").each(' in widened
    # the text it writes into the note and the markup it inserts are as they came
    assert '"Admin wrote in #note-7:\\n> see .x"' in widened
    assert '"<a class=\\"issue-2-watcher\\">U</a>"' in widened


def test_only_plain_selector_literals_are_widened() -> None:
    same = [
        '$(\'<div id="a" class="b">\')',  # markup
        "$('#x:visible')",  # jQuery's own pseudo-classes: its engine would not read :is()
        "$(\"a[href='#top'][class~=y]\")",  # names inside brackets are attribute values
        "document.getElementById('x')",
        "el.html('#x .y')",
        "$(sel + '#x')",  # not the whole argument
        "$('#x\\\\:y')",
        "f.reload('.x')",
    ]
    for script in same:
        assert widen(script, 1) == (script, 0), script
    assert widen_selector("tr#issue-5 > td.subject, .a.b", 1) == (
        f"tr:is(#issue-5,#{drifted_id(1, 'issue-5')}) > "
        f"td:is(.subject,.{drifted_class(1, 'subject')}), "
        f":is(.a,.{drifted_class(1, 'a')}):is(.b,.{drifted_class(1, 'b')})"
    )
    assert widen("x.find('.c').closest(\"#d\")", 2)[1] == 2
    assert widen("document.querySelectorAll('.c')", 2)[1] == 1


def test_a_script_is_asked_for_by_a_javascript_type_first() -> None:
    assert asks_for_script(SCRIPT_FETCH["Accept"])  # rails-ujs
    assert asks_for_script("*/*;q=0.5, text/javascript, application/javascript")  # jquery_ujs
    assert asks_for_script("application/javascript")
    assert asks_for_script("*/*", from_jquery=True)  # $.ajax with no dataType runs it
    assert not asks_for_script("*/*")  # fetch()
    assert not asks_for_script("application/json, text/javascript, */*; q=0.01")  # getJSON
    assert not asks_for_script("text/plain, */*; q=0.01", from_jquery=True)  # dataType: text
    assert not asks_for_script("text/javascript;q=0")
    assert not asks_for_script("")


async def test_a_script_answer_is_served_widened_under_locator_drift_only(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Redmine's Quote of a private note: served as it came, its `$('#issue_private_notes')`
    found nothing on a page whose drift renamed the box, and the reply was saved public."""
    episode = await make_episode(store, condition="Src-Perc", seed=3)
    await serve(addons, episode, html_response(PAGE), path="/app")
    body = ANSWER.encode()
    flow = await serve(addons, episode, js_response(body), headers=SCRIPT_FETCH, path="/quoted")
    served = flow.response.content.decode()
    token = drifted_id(3, "issue_private_notes")
    assert f"$(':is(#issue_private_notes,#{token})')" in served
    assert flow.response.headers["cache-control"] == "no-store"
    (event,) = [e for e in await store.read_events(episode.id) if e["type"] == "script_answer"]
    assert event["url"] == "http://site.test/quoted" and event["selectors_widened"] == 3
    # code loaded as code, or read as text, and any answer of an episode with no drift: as it came
    for headers in (
        {**SCRIPT_FETCH, "Sec-Fetch-Dest": "script"},
        {k: v for k, v in SCRIPT_FETCH.items() if k != "X-Requested-With"} | {"Accept": "*/*"},
    ):
        flow = await serve(addons, episode, js_response(body), headers=headers, path="/x.js")
        assert flow.response.content == body and flow.response.stream
    for condition in ("Src", "Src-Exec"):
        other = await make_episode(store, condition=condition)
        flow = await serve(addons, other, js_response(body), headers=SCRIPT_FETCH, path="/q")
        assert state_of(flow).rewrite == PASS and flow.response.content == body


# (the page with no script to learn: what names its elements is the answer alone)
OWN_PAGE = PAGE.replace(b"<script src='/javascripts/jquery_ujs.js'></script>", b"")


async def test_the_markup_a_script_answer_inserts_is_drifted_as_its_page_is(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Redmine's watch link: its answer replaces the page's link with markup of its own, which
    came as the upstream wrote it, the rest of the episode's pages drifted."""
    renamed = 0
    for seed in range(4):
        episode = await make_episode(store, condition="Src-Perc", seed=seed)
        page = (await serve(addons, episode, html_response(OWN_PAGE), path="/app")).response
        (on_page,) = re.findall(r'<a class="([^"]+)" data-remote="true" href="/watchers', page.text)
        flow = await serve(
            addons, episode, js_response(ANSWER.encode()), headers=SCRIPT_FETCH, path="/watch"
        )
        served = flow.response.content.decode()
        # the link it puts in is drifted as the page's was (its selector finds either)
        (inserted,) = re.findall(r'replaceWith\("(?:<[\w-]+>)?<a class=\\"([^"\\]+)\\">U<', served)
        assert inserted == on_page.split()[0], seed
        renamed += inserted != "issue-2-watcher"
        assert '"Admin wrote in #note-7:\\n> see .x"' in served  # text, as it came
        events = await store.read_events(episode.id)
        (event,) = [e for e in events if e["type"] == "script_answer"]
        changed = '"<a class=\\"issue-2-watcher\\">U</a>"' not in served  # (or as it came)
        assert event["markup_strings"] == {"found": 1, "changed": int(changed)}
        (answer,) = [e for e in events if e["type"] == "page_served" and "/watch" in e["url"]]
        assert answer["kind"] == "fragment" and answer["markup_strings"]["found"] == 1
    assert renamed >= 2


async def test_a_script_answer_served_widened_keeps_the_upstream_s_text_as_its_source(
    store: MemoryStore, addons: AddonManager
) -> None:
    """Its markup as it came, its selectors widened: what went out is not what came, and the
    page record (the recorder's, `/pages/{load}/source`) must hold the upstream's text."""
    seen = 0
    for seed in range(8):
        episode = await make_episode(store, condition="Src-Perc", seed=seed)
        await serve(addons, episode, html_response(OWN_PAGE), path="/app")
        body = ANSWER.encode()
        flow = await serve(addons, episode, js_response(body), headers=SCRIPT_FETCH, path="/w")
        events = await store.read_events(episode.id)
        (event,) = [e for e in events if e["type"] == "script_answer"]
        if event["markup_strings"]["changed"]:
            continue
        seen += 1
        assert flow.response.content != body  # (widened)
        assert state_of(flow).page["source"] == body
    assert seen


# Redmine's issues/new.js.erb after a tracker change: the form, whose own script then sets each
# select to its `option[selected=selected]`.
TRACKER_FORM = (
    "replaceIssueFormWith('<p class=\\'tracker\\'><label for=\\\"issue_tracker_id\\\">Tracker"
    '<\\/label><select id=\\"issue_tracker_id\\"><option value=\\"1\\">Bug<\\/option>\\n'
    '<option selected=\\"selected\\" value=\\"2\\">Feature<\\/option><\\/select><\\/p>\');\n'
)


async def test_a_drifted_answer_s_options_stay_selected_as_the_form_s_script_reads_them(
    store: MemoryStore, addons: AddonManager
) -> None:
    """The markup written again kept `selected` bare: `option[selected=selected]` found no
    option, and Redmine's tracker came back blank after its change (every seed)."""
    changed = 0
    for seed in range(3):
        episode = await make_episode(store, condition="Src-Perc", seed=seed)
        await serve(addons, episode, html_response(OWN_PAGE), path="/app")
        flow = await serve(
            addons,
            episode,
            js_response(TRACKER_FORM.encode()),
            headers=SCRIPT_FETCH,
            path="/new.js",
        )
        served = flow.response.content.decode()
        (event,) = [e for e in await store.read_events(episode.id) if e["type"] == "script_answer"]
        changed += event["markup_strings"]["changed"]
        (markup,) = read_answer(served).strings
        assert '<option selected="selected" value="2">Feature</option>' in markup.value
    assert changed >= 1


# A library's own markup: jQuery UI measures the scrollbar with it (wrapped, it read 200 px).
LIBRARY_MARKUP = (
    "$.position = {scrollbarWidth: function() { var div = $(\"<div style='display:block;"
    "position:absolute;width:200px;height:200px;overflow:hidden;'><div style='height:300px;"
    "width:auto;'></div></div>\"); return div; }};\n"
)
LIBRARY_PAGE = (
    b"<html><head><script src='/js/lib.js'></script></head><body>"
    b"<a class='open' data-remote='true' href='/dialog'>Open</a></body></html>"
)


async def test_a_library_fetched_to_run_keeps_its_markup(
    store: MemoryStore, addons: AddonManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """jQuery fetches the `<script src>` of the markup it inserts asking for JavaScript first,
    as `$.getScript()` does: code the page's knowledge holds as a file, or a big script with
    little markup, is no answer, and its markup goes out as written."""

    async def fetch(self, url, headers):  # type: ignore[no-untyped-def]
        return learner_module._Fetched(200, "text/javascript", LIBRARY_MARKUP.encode())

    monkeypatch.setattr(learner_module._Learn, "fetch", fetch)
    answers = {"changed": 0}
    for seed in range(4):
        episode = await make_episode(store, condition="Src-Perc", seed=seed)
        await serve(addons, episode, html_response(LIBRARY_PAGE), path="/app")
        body = LIBRARY_MARKUP.encode()
        flow = await serve(
            addons, episode, js_response(body), headers=SCRIPT_FETCH, path="/js/lib.js"
        )
        assert flow.response.content == body, seed
        # the same code as the answer to a click: its markup is drifted
        answer = await serve(
            addons, episode, js_response(body), headers=SCRIPT_FETCH, path="/dialog"
        )
        events = [e for e in await store.read_events(episode.id) if e["type"] == "script_answer"]
        assert events[0]["markup_strings"] == {"found": 1, "changed": 0, "library": True}
        assert "library" not in events[1]["markup_strings"], seed
        answers["changed"] += answer.response.content != body
    assert answers["changed"] >= 2
    # A big script with little markup is a library wherever it comes from.
    big = (LIBRARY_MARKUP + "var filler = 1;\n" * 3000).encode()
    episode = await make_episode(store, condition="Src-Perc", seed=0)
    await serve(addons, episode, html_response(LIBRARY_PAGE), path="/app")
    flow = await serve(addons, episode, js_response(big), headers=SCRIPT_FETCH, path="/more")
    assert flow.response.content == big
    (event,) = [e for e in await store.read_events(episode.id) if e["type"] == "script_answer"]
    assert event["markup_strings"]["library"] is True


async def test_a_library_fetched_by_get_script_with_its_cache_buster_keeps_its_markup(
    store: MemoryStore, addons: AddonManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`$.getScript()` (jQuery's `dataType: "script"`, `cache: false` by default) fetches the
    page's own file with `?_=<timestamp>` after its URL: the same file, still a library."""

    async def fetch(self, url, headers):  # type: ignore[no-untyped-def]
        return learner_module._Fetched(200, "text/javascript", LIBRARY_MARKUP.encode())

    monkeypatch.setattr(learner_module._Learn, "fetch", fetch)
    for seed in range(4):
        episode = await make_episode(store, condition="Src-Perc", seed=seed)
        await serve(addons, episode, html_response(LIBRARY_PAGE), path="/app")
        body = LIBRARY_MARKUP.encode()
        flow = await serve(
            addons,
            episode,
            js_response(body),
            headers=SCRIPT_FETCH,
            path="/js/lib.js?_=1733412345678",
        )
        assert flow.response.content == body, seed
        events = [e for e in await store.read_events(episode.id) if e["type"] == "script_answer"]
        assert events[0]["markup_strings"].get("library") is True, seed
