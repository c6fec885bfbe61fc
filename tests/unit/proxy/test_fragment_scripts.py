"""The scripts an HTML fragment carries, through the addon chain: where the proxy takes them to
be (where its page's browser loads them), and how many it fetches."""

from __future__ import annotations

import json

import pytest
from mitmproxy import http
from mitmproxy.addonmanager import AddonManager

from proxy.flowstate import state_of
from proxy.knowledge import learner as learner_module
from proxy.store import MemoryStore
from tests.unit.proxy.conftest import html_response, make_episode
from tests.unit.proxy.test_rewrite import serve

# A page under /app/ whose script is named relative to it (/app/js/app.js).
PAGE = (
    b'<!DOCTYPE html><html><head><script src="js/app.js"></script></head>'
    b'<body><button id="save" class="btn">Save</button></body></html>'
)
FETCH = {"Sec-Fetch-Dest": "empty", "Referer": "http://site.test/app/index"}


@pytest.fixture
def fetched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every URL the learner GETs: /app/js/* and /many/* are scripts, anything else a 404."""
    seen: list[str] = []

    async def fetch(self, url, headers):  # type: ignore[no-untyped-def]
        seen.append(url)
        if url.startswith(("http://site.test/app/js/", "http://site.test/many/")):
            return learner_module._Fetched(200, "text/javascript", f"//{url}".encode())
        return learner_module._Fetched(404, "text/html", b"<h1>not found</h1>")

    monkeypatch.setattr(learner_module._Learn, "fetch", fetch)
    return seen


async def last_served(store: MemoryStore, episode) -> dict:  # type: ignore[no-untyped-def]
    return [e for e in await store.read_events(episode.id) if e["type"] == "page_served"][-1]


async def test_a_relative_src_is_where_the_page_that_inserts_the_fragment_loads_it(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """Inserted into /app/index, the fragment's `js/screen.js` loads from /app/js/screen.js;
    resolved against the fragment's URL (/part/js/screen.js, a 404) it went out unshifted,
    naming a script the browser never loads."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app/index")
    fetched.clear()
    fragment = b'<div><button id="refresh">R</button><script src="js/screen.js"></script></div>'
    flow = await serve(addons, episode, html_response(fragment), headers=FETCH, path="/part/r")
    assert fetched == ["http://site.test/app/js/screen.js"]
    assert "unknown_scripts" not in await last_served(store, episode)
    assert len(state_of(flow).knowledge.records) == 2


async def test_a_relative_src_that_names_a_known_script_from_the_fragments_url_is_not_known(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """From the fragment's URL (/app/js/part) `app.js` is the page's known /app/js/app.js: the
    fragment was drifted without the script its page loads for it (/app/app.js)."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app/index")
    fetched.clear()
    fragment = b'<div><button id="refresh">R</button><script src="app.js"></script></div>'
    flow = await serve(addons, episode, html_response(fragment), headers=FETCH, path="/app/js/part")
    assert fetched == ["http://site.test/app/app.js"]  # (a 404 here: nothing to learn)
    assert (await last_served(store, episode))["unknown_scripts"] == ["http://site.test/app/app.js"]
    assert flow.response.content == fragment


async def test_a_fragment_carrying_more_scripts_than_a_screen_may_name_fetches_none(
    store: MemoryStore, addons: AddonManager, fetched: list[str]
) -> None:
    """200 `<script src>` were 200 fetches with the user's cookies (a JSON screen's names are
    capped at 64); so were 200 absolute names in a JSON answer."""
    episode = await make_episode(store, condition="Src-Perc", seed=1)
    await serve(addons, episode, html_response(PAGE), path="/app/index")
    fetched.clear()
    tags = "".join(f'<script src="/many/s{n}.js"></script>' for n in range(200))
    fragment = f'<div><button id="refresh">R</button>{tags}</div>'.encode()
    flow = await serve(addons, episode, html_response(fragment), headers=FETCH, path="/part/m")
    assert fetched == []
    assert len((await last_served(store, episode))["unknown_scripts"]) == 20  # (the first 20)
    assert flow.response.content == fragment
    answer = json.dumps(
        {
            "success": True,
            "message": "<div>x</div>",
            "scripts": [f"/many/j{n}.js" for n in range(200)],
        }
    )
    response = http.Response.make(200, answer.encode(), {"Content-Type": "application/json"})
    await serve(addons, episode, response, headers=FETCH, path="/ajax")
    assert fetched == []
