"""Recording and replay through the real addon chain (with a recording directory)."""

from __future__ import annotations

import asyncio
import errno
import gzip
from pathlib import Path
from typing import Any

import pytest
from mitmproxy import http
from mitmproxy.addonmanager import AddonManager
from mitmproxy.flow import Error
from mitmproxy.proxy.layers.http import HttpErrorHook, HttpResponseHeadersHook

from proxy.recording_dir import Recording
from proxy.store import MemoryStore
from tests.unit.proxy.conftest import (
    NAV,
    exchange,
    html_response,
    make_episode,
    request_flow,
    run_request,
)


async def wait_for_event(store: MemoryStore, episode_id: str, wanted: str) -> dict[str, Any]:
    """The episode's first event of a type, once the loop has run what was handed to it."""
    async with asyncio.timeout(5):
        while True:
            found = [e for e in await store.read_events(episode_id) if e["type"] == wanted]
            if found:
                return found[0]
            await asyncio.sleep(0.01)


PAGE = (
    b"<!DOCTYPE html><html><head><title>x</title></head>"
    b"<body><a href='/l'>Sign in</a></body></html>"
)


async def test_a_shifted_page_is_recorded_as_served_with_its_source_and_change_map(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    episode = await make_episode(store, condition="Src-Exec", regime="multiple")
    flow = await exchange(chain, episode, html_response(PAGE))
    (entry,) = await recording.entries(episode.id)
    extra = entry["_skillshift"]
    assert await recording.body(extra["body"]) == flow.response.content != PAGE
    assert await recording.body(extra["source"]) == PAGE
    assert extra["navigation"] and extra["load"] == 1 and entry["pageref"] == "load_1"
    assert extra["changes"]["popup"]["load"] == 1
    assert entry["request"]["url"] == "http://site.test/"
    names = {h["name"].lower() for h in entry["request"]["headers"]}
    assert "x-skillshift-episode" not in names  # the binding's secret never lands in a HAR
    # nor the mark the proxy put on what it forwarded (the browser did not send it)
    assert flow.request.headers["x-skillshift-proxied"] and "x-skillshift-proxied" not in names
    har = await recording.har(episode.id, "test")
    assert har["log"]["pages"][0]["id"] == "load_1"
    assert har["log"]["entries"][0]["response"]["content"]["text"].startswith("<!DOCTYPE")


async def test_a_streamed_page_is_recorded_decoded_and_subresources_unless_pages_only(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    pages_only = await make_episode(store, condition="Src", record="pages")
    everything = await make_episode(store, condition="Src")  # the default: every response
    off = await make_episode(store, condition="Src", record=False)
    for episode in (pages_only, everything, off):
        zipped = html_response(b"", **{"Content-Encoding": "gzip"})
        zipped.raw_content = gzip.compress(PAGE)
        await exchange(chain, episode, zipped)
        image = http.Response.make(200, b"\x89PNG...", {"Content-Type": "image/png"})
        await exchange(chain, episode, image, "/logo.png", {"Sec-Fetch-Dest": "image"})
    entries = await recording.entries(pages_only.id)
    assert [e["request"]["url"] for e in entries] == ["http://site.test/"]
    assert await recording.body(entries[0]["_skillshift"]["body"]) == PAGE
    assert "source" not in entries[0]["_skillshift"]  # it went out as the upstream sent it
    headers = {h["name"].lower() for h in entries[0]["response"]["headers"]}
    assert "content-encoding" not in headers  # the recording holds the decoded body
    assert len(await recording.entries(everything.id)) == 2
    logo = (await recording.har(everything.id, "test"))["log"]["entries"][1]
    assert logo["response"]["content"]["encoding"] == "base64"
    assert logo["_skillshift"]["page_load"] == 1
    assert await recording.entries(off.id) == []


async def test_a_replay_answers_from_the_recording_and_never_from_the_upstream(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, condition="Src-Exec", regime="multiple", record="all")
    first = await exchange(chain, recorded, html_response(PAGE))
    style = http.Response.make(200, b"a{}", {"Content-Type": "text/css"})
    await exchange(chain, recorded, style, "/s.css", {"Sec-Fetch-Dest": "style"})
    replay = await make_episode(store, replay_of=recorded.id, replay_deterministic=False)
    for path, dest, body in (
        ("/", "document", first.response.content),
        ("/s.css", "style", b"a{}"),
    ):
        flow = request_flow(path, {"X-SkillShift-Episode": replay.id, "Sec-Fetch-Dest": dest})
        await run_request(chain, flow)
        assert flow.response is not None and flow.response.content == body
    missing = request_flow("/other", {"X-SkillShift-Episode": replay.id, **NAV})
    await run_request(chain, missing)
    assert missing.response is not None and missing.response.status_code == 404
    types = [e["type"] for e in await store.read_events(replay.id)]
    assert types == ["page_served", "replay_miss"]
    assert await recording.entries(replay.id) == []  # a replay records nothing itself


async def test_a_redirect_the_browser_left_early_is_recorded_all_the_same(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    """Browsers follow a redirect on its head and may hang up before its body is through:
    mitmproxy then reports an error instead of the response, and the exchange still counts."""
    episode = await make_episode(store, condition="Src", record="all")
    flow = request_flow("/?p=4", headers={"X-SkillShift-Episode": episode.id, **NAV})
    await run_request(chain, flow)
    flow.response = http.Response.make(301, b"", {"Location": "/post/"})
    await chain.handle_lifecycle(HttpResponseHeadersHook(flow))
    flow.error = Error("Client disconnected.")
    await chain.handle_lifecycle(HttpErrorHook(flow))
    (entry,) = await recording.entries(episode.id)
    assert entry["response"]["status"] == 301 and entry["response"]["redirectURL"] == "/post/"
    assert entry["_skillshift"]["incomplete"] is True


async def test_a_replay_from_a_load_starts_there(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    """The same URL visited twice, differently each time: `from_load` picks the second."""
    recorded = await make_episode(store, condition="Src-Exec", regime="multiple")
    first = await exchange(chain, recorded, html_response(PAGE))
    second = await exchange(chain, recorded, html_response(PAGE.replace(b"Sign in", b"Log in")))
    assert first.response.content != second.response.content
    for from_load, expected in ((None, first), (2, second)):
        config = {
            "replay_of": recorded.id,
            "replay_deterministic": False,
            **({"from_load": from_load} if from_load else {}),
        }
        replay = await make_episode(store, **config)
        flow = request_flow("/", {"X-SkillShift-Episode": replay.id, **NAV})
        await run_request(chain, flow)
        assert flow.response is not None
        assert flow.response.content == expected.response.content


async def test_redirects_on_the_way_to_a_page_are_recorded_by_default(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    episode = await make_episode(store, condition="Src", record="pages")
    await exchange(chain, episode, http.Response.make(302, b"", {"Location": "/login"}))
    await exchange(chain, episode, html_response(PAGE), "/login")
    assert [e["response"]["status"] for e in await recording.entries(episode.id)] == [302, 200]


async def test_a_body_not_kept_is_not_replayed_as_an_empty_one(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    from mitmproxy import ctx

    ctx.options.update(ss_record_max_bytes=10)
    recorded = await make_episode(store, condition="Src")
    await exchange(chain, recorded, html_response(PAGE))
    (entry,) = await recording.entries(recorded.id)
    assert "body" not in entry["_skillshift"] and entry["_skillshift"]["body_omitted"]
    replay = await make_episode(store, replay_of=recorded.id)
    flow = request_flow("/", {"X-SkillShift-Episode": replay.id, **NAV})
    await run_request(chain, flow)
    assert flow.response is not None and flow.response.status_code == 404


async def test_a_replay_that_cannot_read_its_recording_fails_closed(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, condition="Src")
    await exchange(chain, recorded, html_response(PAGE))
    (entry,) = await recording.entries(recorded.id)
    digest = entry["_skillshift"]["body"]
    (recording.root / "bodies" / digest[:2] / digest).unlink()
    replay = await make_episode(store, replay_of=recorded.id)
    flow = request_flow("/", {"X-SkillShift-Episode": replay.id, **NAV})
    await run_request(chain, flow)
    # Answered here (never sent upstream), and said.
    assert flow.response is not None and flow.response.status_code == 502
    assert "replay_error" in [e["type"] for e in await store.read_events(replay.id)]


async def test_a_request_s_body_is_recorded_in_the_form_replay_matches_on(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    episode = await make_episode(store, condition="Src", record="all")
    form = {"Sec-Fetch-Dest": "empty", "Content-Type": "application/x-www-form-urlencoded"}
    answer = http.Response.make(200, b"ok", {"Content-Type": "text/plain"})
    await exchange(chain, episode, answer, "/search", form, "POST", b"q=hats&page=2")
    await exchange(chain, episode, html_response(PAGE))
    found = [e["_skillshift"]["request_body"] for e in await recording.entries(episode.id)]
    assert found == ["form:page=2&q=hats", ""]


async def test_a_full_disk_says_in_the_episode_s_log_which_exchange_was_not_recorded(
    store: MemoryStore, chain: AddonManager, recording: Recording, monkeypatch: pytest.MonkeyPatch
) -> None:
    episode = await make_episode(store, condition="Src")

    def no_space(self: Path, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", no_space)
    flow = await exchange(chain, episode, html_response(PAGE))
    await recording.flush()
    errors = await wait_for_event(store, episode.id, "recording_error")
    # The page was served all the same; its log says what the recording lacks, and why.
    assert flow.response is not None and flow.response.status_code == 200
    assert errors["url"] == "http://site.test/" and errors["reason"] == "No space left on device"
    assert errors["file"].startswith("bodies/")


async def test_a_json_answer_whose_markup_was_shifted_is_recorded_among_the_pages(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    """`record: pages` keeps the HTML fragments a page fetches: so the JSON answers whose
    markup was shifted as theirs is (phpMyAdmin's screens), with their source; not the JSON
    answers of no markup (an app's data)."""
    episode = await make_episode(store, condition="Src-Perc", record="pages")
    await exchange(chain, episode, html_response(PAGE), "/app")
    fetch = {"Sec-Fetch-Dest": "empty", "Referer": "http://site.test/app"}
    screen = b'{"html": "<div class=\\"panel\\"><button id=\\"save\\">Save</button></div>"}'
    for body in (screen, b'{"rows": [1, 2]}'):
        answer = http.Response.make(200, body, {"Content-Type": "application/json"})
        await exchange(chain, episode, answer, "/ajax", fetch)
    entries = await recording.entries(episode.id)
    assert [e["request"]["url"] for e in entries] == [
        "http://site.test/app",
        "http://site.test/ajax",
    ]
    assert await recording.body(entries[1]["_skillshift"]["source"]) == screen
