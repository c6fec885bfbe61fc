"""The scripts a JSON screen names, through the addon chain: what the proxy fetches and learns
for them, and what the screen and its page's later answers are shifted against."""

from __future__ import annotations

import json

import pytest
from mitmproxy import http
from mitmproxy.addonmanager import AddonManager

from proxy.flowstate import state_of
from proxy.knowledge import learner as learner_module
from proxy.store import MemoryStore
from tests.unit.proxy.conftest import html_response, make_episode, member
from tests.unit.proxy.test_rewrite import serve

PAGE = (
    b'<!DOCTYPE html><html><head><script src="/js/app.js?v=1"></script></head>'
    b'<body><button id="save" class="btn">Save</button></body></html>'
)
FETCH = {"Sec-Fetch-Dest": "empty", "Referer": "http://site.test/app", "Cookie": "sid=secret"}
SCREEN = '<div class="panel"><form id="f"><button id="go" class="btn">Go</button></form></div>'


@pytest.fixture
def fetched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every URL the learner GETs: `/js/*.js` are scripts, anything else a 404."""
    seen: list[str] = []

    async def fetch(self, url, headers):  # type: ignore[no-untyped-def]
        seen.append(url)
        if url.startswith("http://site.test/js/") and ".js" in url:
            return learner_module._Fetched(200, "text/javascript", b"document.body.id")
        return learner_module._Fetched(404, "text/html", b"<h1>not found</h1>")

    monkeypatch.setattr(learner_module._Learn, "fetch", fetch)
    return seen


def json_response(body: str) -> http.Response:
    return http.Response.make(200, body.encode(), {"Content-Type": "application/json"})


async def last_served(store: MemoryStore, episode) -> dict:  # type: ignore[no-untyped-def]
    return [e for e in await store.read_events(episode.id) if e["type"] == "page_served"][-1]


async def test_a_data_string_ending_in_js_names_no_script(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """An issue titled `Node.js`, a file listing's `config.js`: the app's data, no script its
    page loads; the answer's markup is shifted (it went out as it came, `unknown_scripts`)."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app")
    fetched.clear()
    answer = json.dumps(
        {"title": "Node.js", "files": ["app.js", "config.js"], "description_html": SCREEN}
    )
    await serve(addons, episode, json_response(answer), headers=FETCH, path="/issue.json")
    assert (await last_served(store, episode))["markup_strings"] == {"found": 1, "changed": 1}
    assert fetched == []


async def test_a_url_whose_query_ends_in_js_is_no_script(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """`/index.php?route=/logout&next=/x.js` was taken for the script `/index.php` and fetched,
    with the user's cookies."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app")
    fetched.clear()
    answer = json.dumps(
        {
            "success": True,
            "message": SCREEN,
            "scripts": ["app.js", "/index.php?route=/logout&next=/x.js", "index.php?t=a.js"],
        }
    )
    await serve(addons, episode, json_response(answer), headers=FETCH, path="/ajax")
    assert fetched == []


async def test_a_long_list_of_script_names_is_fetched_for_none(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """Each page of a listing of 1,000 names was a learn of 256 fetches and a record."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app")
    fetched.clear()
    for page in range(2):
        names = [f"src/f{page}-{n}.js" for n in range(1000)] + ["app.js"]
        answer = json.dumps({"success": True, "message": SCREEN, "scripts": names})
        await serve(addons, episode, json_response(answer), headers=FETCH, path=f"/t?p={page}")
    assert fetched == []
    lookup = member(addons, "pagerewriter").knowledge  # type: ignore[attr-defined]
    entries = await lookup.store.entries("http://site.test", 1)
    assert list(entries) == ["http://site.test/app"]


async def test_a_script_named_with_its_query_is_learnt_at_that_url(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """Drupal's `add_js` names `/js/extra.js?v=7`, which its page loads: learnt without its
    query, the knowledge watch found the page's load in no record (a `knowledge_gap`)."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app")
    fetched.clear()
    answer = json.dumps(
        [
            {"command": "add_js", "data": [{"src": "/js/extra.js?v=7"}]},
            {"command": "insert", "data": SCREEN},
        ]
    )
    await serve(addons, episode, json_response(answer), headers=FETCH, path="/ajax")
    assert fetched == ["http://site.test/js/extra.js?v=7"]
    assert "unknown_scripts" not in (await last_served(store, episode))["markup_strings"]


async def test_a_later_answer_of_the_page_is_shifted_with_the_scripts_a_screen_brought(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """Drupal names a library's script once (its ajax_page_state lists it after): the markup
    its later answers insert is still looked up by that script."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app")
    first = json.dumps(
        [
            {"command": "add_js", "data": [{"src": "/js/extra.js?v=1"}]},
            {"command": "insert", "data": SCREEN},
        ]
    )
    one = await serve(addons, episode, json_response(first), headers=FETCH, path="/ajax1")
    later = json.dumps([{"command": "insert", "data": SCREEN}])
    two = await serve(addons, episode, json_response(later), headers=FETCH, path="/ajax2")
    assert len(state_of(one).knowledge.records) == 2
    assert state_of(two).knowledge.records == state_of(one).knowledge.records
