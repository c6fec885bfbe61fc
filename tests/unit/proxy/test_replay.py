"""Replay through the real addon chain: requests matched on their bodies, identical ones
answered in recorded order, misses refused and explained, documents made deterministic."""

from __future__ import annotations

import hashlib
import json

from mitmproxy import http
from mitmproxy.addonmanager import AddonManager
from mitmproxy.proxy.layers.http import HttpRequestHeadersHook

from proxy.recording_dir import Recording
from proxy.replay_determinism import recorded_ms
from proxy.store import MemoryStore
from shifts.runtime import runtime_source, runtime_version
from tests.unit.proxy.conftest import (
    NAV,
    exchange,
    html_response,
    make_episode,
    request_flow,
    run_request,
)

FORM = {"Sec-Fetch-Dest": "empty", "Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Sec-Fetch-Dest": "empty", "Content-Type": "application/json"}
PAGE = b"<!DOCTYPE html><html><head><title>x</title></head><body>page</body></html>"


def answer_of(text: str) -> http.Response:
    return http.Response.make(200, text.encode(), {"Content-Type": "text/plain"})


async def replayed(
    chain: AddonManager,
    episode,  # type: ignore[no-untyped-def]
    path: str,
    content: bytes = b"",
    headers: dict[str, str] | None = None,
    method: str = "POST",
) -> http.Response:
    headers = {"X-SkillShift-Episode": episode.id, **(headers or FORM)}
    flow = request_flow(path, headers, method=method, content=content)
    await run_request(chain, flow)
    assert flow.response is not None  # answered by the proxy: never sent to the upstream
    return flow.response


async def test_two_posts_to_one_url_get_the_answer_recorded_for_their_body(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, record="all")
    await exchange(chain, recorded, html_response(PAGE))
    for query in (b"shoes", b"hats"):
        body = b"page=1&q=" + query
        await exchange(chain, recorded, answer_of(query.decode()), "/search", FORM, "POST", body)
    await exchange(chain, recorded, answer_of("json"), "/api", JSON, "POST", b'{"b": 1, "a": 2}')
    entries = await recording.entries(recorded.id)
    assert [e["_skillshift"]["request_body"] for e in entries] == [
        "",
        "form:page=1&q=shoes",
        "form:page=1&q=hats",
        'json:{"a":2,"b":1}',
    ]
    replay = await make_episode(store, replay_of=recorded.id)
    # Fields in another order, JSON spaced otherwise: the same body.
    assert (await replayed(chain, replay, "/search", b"q=hats&page=1")).text == "hats"
    assert (await replayed(chain, replay, "/search", b"q=shoes&page=1")).text == "shoes"
    assert (await replayed(chain, replay, "/api", b'{"a":2,"b":1}', JSON)).text == "json"


async def test_identical_requests_get_the_recorded_answers_in_order_then_the_last(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, record="all")
    await exchange(chain, recorded, html_response(PAGE))
    for text in ("first", "second"):
        await exchange(chain, recorded, answer_of(text), "/poll", FORM, "POST", b"n=1")
    replay = await make_episode(store, replay_of=recorded.id)
    texts = [(await replayed(chain, replay, "/poll", b"n=1")).text for _ in range(4)]
    assert texts == ["first", "second", "second", "second"]
    # Another replay of the same recording starts again from the first.
    again = await make_episode(store, replay_of=recorded.id)
    assert (await replayed(chain, again, "/poll", b"n=1")).text == "first"


async def test_a_recording_made_before_bodies_were_kept_replays_as_it_did(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, record="all")
    await exchange(chain, recorded, html_response(PAGE))
    await exchange(chain, recorded, answer_of("old"), "/search", FORM, "POST", b"q=shoes")
    await recording.flush()
    entries_file = recording.root / "episodes" / recorded.id / "entries.jsonl"
    entries = [json.loads(line) for line in entries_file.read_text().splitlines()]
    for entry in entries:
        del entry["_skillshift"]["request_body"]
    entries_file.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    replay = await make_episode(store, replay_of=recorded.id)
    # Matched on method and URL alone, as before: any body gets the recorded answer.
    assert (await replayed(chain, replay, "/search", b"q=hats")).text == "old"
    document = await replayed(chain, replay, "/", headers=NAV, method="GET")
    assert document.status_code == 200 and b"<body>page</body>" in (document.content or b"")


async def test_a_miss_is_refused_and_says_which_fields_differ(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, record="all")
    await exchange(chain, recorded, html_response(PAGE))
    await exchange(chain, recorded, answer_of("ok"), "/cart", FORM, "POST", b"item=7&qty=1")
    replay = await make_episode(store, replay_of=recorded.id)
    missed = await replayed(chain, replay, "/cart", b"item=7&qty=2")
    assert missed.status_code == 404 and "not in the recording" in missed.text
    (miss,) = [e for e in await store.read_events(replay.id) if e["type"] == "replay_miss"]
    assert miss["url"] == "http://site.test/cart" and miss["method"] == "POST"
    assert miss["differs"] == ["body"] and miss["body_fields"] == ["qty"]
    assert miss["nearest"] == {"method": "POST", "url": "http://site.test/cart"}


async def test_fields_the_replay_ignores_do_not_stop_a_match(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, record="all")
    await exchange(chain, recorded, html_response(PAGE))
    await exchange(chain, recorded, answer_of("in"), "/login?t=1", FORM, "POST", b"csrf=a&u=ann")
    strict = await make_episode(store, replay_of=recorded.id)
    assert (await replayed(chain, strict, "/login?t=2", b"csrf=b&u=ann")).status_code == 404
    (miss,) = [e for e in await store.read_events(strict.id) if e["type"] == "replay_miss"]
    assert miss["differs"] == ["query", "body"]
    assert miss["query_fields"] == ["t"] and miss["body_fields"] == ["csrf"]
    lenient = await make_episode(
        store, replay_of=recorded.id, replay_ignore={"/login": ["csrf", "t"]}
    )
    assert (await replayed(chain, lenient, "/login?t=2", b"csrf=b&u=ann")).text == "in"
    assert (await replayed(chain, lenient, "/login?t=2", b"csrf=b&u=bob")).status_code == 404


async def test_replayed_documents_get_the_recorded_clock_unless_the_episode_opts_out(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, seed=5)
    await exchange(chain, recorded, html_response(PAGE))
    (entry,) = await recording.entries(recorded.id)
    deterministic = await make_episode(store, replay_of=recorded.id, seed=5)
    document = await replayed(chain, deterministic, "/", headers=NAV, method="GET")
    served = document.content or b""
    assert served.startswith(b"<!DOCTYPE html><html><head><script>(()=>{const recorded=")
    assert f"const recorded={recorded_ms(entry['startedDateTime'])};".encode() in served
    opted_out = await make_episode(store, replay_of=recorded.id, replay_deterministic=False)
    assert (await replayed(chain, opted_out, "/", headers=NAV, method="GET")).content == PAGE


def rewrite_entries(recording: Recording, episode_id: str, change) -> None:  # type: ignore[no-untyped-def]
    """Edit a recording's entries as an older service would have written them."""
    entries_file = recording.root / "episodes" / episode_id / "entries.jsonl"
    entries = [json.loads(line) for line in entries_file.read_text().splitlines()]
    kept = [changed for changed in map(change, entries) if changed is not None]
    entries_file.write_text("".join(json.dumps(entry) + "\n" for entry in kept))


async def test_a_replay_serves_the_client_script_its_recording_ran(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, condition="Src-Exec", regime="multiple")  # pages only
    await exchange(chain, recorded, html_response(PAGE))
    script = f"/__ss/r.js?v={runtime_version()}"
    served = await replayed(
        chain, recorded, script, headers={"Sec-Fetch-Dest": "script"}, method="GET"
    )
    assert served.content == runtime_source()
    await recording.flush()
    # Recorded though the episode records pages only: a replay cannot do without it.
    page, runtime = await recording.entries(recorded.id)
    assert runtime["request"]["url"] == f"http://site.test{script}"
    assert await recording.body(runtime["_skillshift"]["body"]) == runtime_source()
    # As if the service had changed its runtime since: the recording keeps the old bytes.
    old = b"/* the runtime the agent's browser ran */"
    digest = hashlib.sha256(old).hexdigest()
    (recording.root / "bodies" / digest[:2]).mkdir(exist_ok=True)
    (recording.root / "bodies" / digest[:2] / digest).write_bytes(old)

    def older_runtime(entry):  # type: ignore[no-untyped-def]
        if entry["request"]["url"].endswith(script):
            entry["_skillshift"]["body"] = digest
        return entry

    rewrite_entries(recording, recorded.id, older_runtime)
    replay = await make_episode(store, replay_of=recorded.id)
    await replayed(chain, replay, "/", headers=NAV, method="GET")
    again = await replayed(
        chain, replay, script, headers={"Sec-Fetch-Dest": "script"}, method="GET"
    )
    assert again.status_code == 200 and again.content == old


async def test_a_recording_without_its_client_script_gets_the_current_one_and_says_so(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store, condition="Src-Exec", regime="multiple")
    await exchange(chain, recorded, html_response(PAGE))
    await recording.flush()
    replay = await make_episode(store, replay_of=recorded.id)
    script = {"headers": {"Sec-Fetch-Dest": "script"}, "method": "GET"}
    same = await replayed(chain, replay, f"/__ss/r.js?v={runtime_version()}", **script)  # type: ignore[arg-type]
    assert same.content == runtime_source()
    # The version is a hash of the bytes: the current script is the one recorded, nothing to say.
    assert [e["type"] for e in await store.read_events(replay.id)] == []
    older = await replayed(chain, replay, "/__ss/r.js?v=0123456789", **script)  # type: ignore[arg-type]
    assert older.status_code == 200 and older.content == runtime_source()
    (substituted,) = await store.read_events(replay.id)
    assert substituted["type"] == "replay_substituted" and substituted["script"] == "r.js"
    assert substituted["recorded_version"] == "0123456789"
    assert substituted["served_version"] == runtime_version()


async def test_a_recorded_body_cut_short_is_refused_naming_its_file_never_replayed(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    recorded = await make_episode(store)
    await exchange(chain, recorded, html_response(PAGE))
    (entry,) = await recording.entries(recorded.id)
    digest = entry["_skillshift"]["body"]
    (recording.root / "bodies" / digest[:2] / digest).write_bytes(PAGE[:20])
    replay = await make_episode(store, replay_of=recorded.id)
    document = await replayed(chain, replay, "/", headers=NAV, method="GET")
    assert document.status_code == 502 and b"<body>" not in (document.content or b"")[:20]
    (error,) = [e for e in await store.read_events(replay.id) if e["type"] == "replay_error"]
    assert error["reason"].startswith(f"bodies/{digest[:2]}/{digest}: the body's bytes")


async def test_a_body_over_the_size_limit_is_cut_off_never_streamed_upstream(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    """mitmproxy streams a body over `stream_large_bodies`, its headers going upstream before
    the `request` hook answers: bound to a replay, such a request is cut off."""
    recorded = await make_episode(store, record="all")
    await exchange(chain, recorded, answer_of("uploaded"), "/upload", FORM, "POST", b"n=1")
    replay = await make_episode(store, replay_of=recorded.id)
    flow = request_flow(
        "/upload", {"X-SkillShift-Episode": replay.id, **FORM}, method="POST", content=b"n=1"
    )
    flow.request.stream = True  # (as mitmproxy sets it from the length, before the hooks)
    await chain.handle_lifecycle(HttpRequestHeadersHook(flow))
    assert flow.error is not None and flow.error.msg == "Connection killed."


async def test_a_replay_of_a_tgt_episode_answers_the_url_the_browser_asked(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    """A replay labelled with a `Tgt` condition is not routed: it answers from the recording
    by the URL the browser asked for, as the recording holds it."""
    recorded = await make_episode(store, record="all")
    await exchange(chain, recorded, answer_of("recorded"), "/upload", FORM, "POST", b"n=1")
    replay = await make_episode(
        store,
        replay_of=recorded.id,
        condition="Tgt",
        targets={"http://site.test": "http://other.test:81"},
    )
    assert (await replayed(chain, replay, "/upload", b"n=1")).text == "recorded"


async def test_a_body_of_no_declared_length_is_cut_off_as_its_headers_arrive(
    store: MemoryStore, chain: AddonManager, recording: Recording
) -> None:
    """A chunked body grows past `stream_large_bodies` while mitmproxy reads it, and is then
    streamed upstream with no hook between: bound to a replay, it is cut off at its headers."""
    recorded = await make_episode(store, record="all")
    replay = await make_episode(store, replay_of=recorded.id)
    flow = request_flow(
        "/upload",
        {"X-SkillShift-Episode": replay.id, "Transfer-Encoding": "chunked", **FORM},
        method="POST",
    )
    await chain.handle_lifecycle(HttpRequestHeadersHook(flow))
    assert flow.error is not None and flow.error.msg == "Connection killed."
