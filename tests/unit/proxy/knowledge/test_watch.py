"""What the knowledge watch tells an episode about the code its browser loads."""

from __future__ import annotations

from types import SimpleNamespace

from mitmproxy import http
from mitmproxy.test import taddons, tflow, tutils

from proxy.episode import EpisodeConfig, new_episode
from proxy.flowstate import state_of
from proxy.knowledge.records import AssetRecord, PageRecord, page_record_flag
from proxy.knowledge.watch import KnowledgeWatch
from proxy.store import MemoryStore

ORIGIN = "http://127.0.0.1:8888"
HELD = AssetRecord(f"{ORIGIN}/static/main.js", "js", 200, "sha256:main", "markup")
RECORD = PageRecord(f"{ORIGIN}/lab", "markup", (HELD,), "browser")


class Store:
    def __init__(self, flags: list[str]) -> None:
        self.flags = flags

    async def get_flags(self, episode_id: str) -> dict[str, str]:
        return {flag: "0" for flag in self.flags}


class Lookup:
    async def generation(self, origin: str, epoch: int | None) -> SimpleNamespace:
        return SimpleNamespace(number=1)

    async def record(self, digest: str) -> PageRecord:
        assert digest == RECORD.digest
        return RECORD


async def finding(referer: str | None, asset: str, flags: list[str]) -> tuple[str, dict] | None:
    watch = KnowledgeWatch(Store(flags), Lookup())  # type: ignore[arg-type]
    episode = SimpleNamespace(id="e", knowledge=0, expires_at=0)
    return await watch._finding(episode, ORIGIN, referer, asset, "sha256:served")  # type: ignore[arg-type]


async def test_code_loaded_on_a_route_the_app_pushed_is_checked_against_the_page_it_runs_in() -> (
    None
):
    # JupyterLab: `/lab` is loaded, its router then shows `/lab/tree/Untitled.ipynb`, and the
    # notebook's chunk is requested with that route as its Referer, a URL never loaded.
    flags = [page_record_flag(f"{ORIGIN}/lab", RECORD.digest)]
    chunk = f"{ORIGIN}/static/5132.js"
    found = await finding(f"{ORIGIN}/lab/tree/Untitled.ipynb", chunk, flags)
    assert found == ("knowledge_gap", {"version": 1, "records": [RECORD.digest]})
    # What the page's record holds is no gap, whatever the route.
    held = await finding(f"{ORIGIN}/lab/tree/Untitled.ipynb", HELD.url, flags)
    assert held == (
        "knowledge_stale",
        {"version": 1, "learnt_sha256": "sha256:main", "served_sha256": "sha256:served"},
    )


async def test_an_episode_that_loaded_no_page_of_the_origin_is_told_nothing() -> None:
    elsewhere = [page_record_flag("http://127.0.0.1:9999/lab", RECORD.digest)]
    assert (
        await finding(f"{ORIGIN}/lab/tree/x.ipynb", f"{ORIGIN}/static/5132.js", elsewhere) is None
    )
    assert await finding(f"{ORIGIN}/lab/tree/x.ipynb", f"{ORIGIN}/static/5132.js", []) is None


async def test_code_a_page_without_referer_loads_is_checked_against_the_episodes_pages() -> None:
    # phpMyAdmin sends `Referrer-Policy: no-referrer`, and its ajax.js adds each screen's
    # scripts (`js/dist/sql.js`) by a URL it builds: a same-origin load with no Referer, which
    # went unchecked, so the code its JSON screens were drifted without was never told.
    flags = [page_record_flag(f"{ORIGIN}/lab", RECORD.digest)]
    gap = await finding(None, f"{ORIGIN}/js/dist/sql.js", flags)
    assert gap == ("knowledge_gap", {"version": 1, "records": [RECORD.digest]})
    held = await finding(None, HELD.url, flags)
    assert held is not None and held[0] == "knowledge_stale"
    assert await finding(None, f"{ORIGIN}/js/dist/sql.js", []) is None


async def test_a_same_origin_load_without_referer_is_watched() -> None:
    store = MemoryStore()
    episode = new_episode(EpisodeConfig.model_validate({"condition": "Src-Perc"}))
    watch = KnowledgeWatch(store, Lookup())  # type: ignore[arg-type]
    with taddons.context(watch):
        for headers, watched in (
            ({"Sec-Fetch-Site": "same-origin"}, True),  # phpMyAdmin's screens' scripts
            ({"Sec-Fetch-Site": "cross-site"}, False),  # another origin's page's
            ({}, False),  # no page known at all
        ):
            flow = tflow.tflow(
                resp=tutils.tresp(headers=http.Headers(content_type="text/javascript"))
            )
            flow.request.url = f"{ORIGIN}/js/dist/sql.js"
            flow.request.headers.update(headers)
            state_of(flow).episode = episode
            watch.responseheaders(flow)
            assert bool(flow.response.stream) is watched, headers


async def test_the_same_bytes_at_another_url_are_no_gap() -> None:
    """phpMyAdmin's screens add `vendor/jquery/additional-methods.js?v=5.2.1`, which a page
    loaded without the query: the same bytes, whose names the drift held, were told a gap."""
    flags = [page_record_flag(f"{ORIGIN}/lab", RECORD.digest)]
    watch = KnowledgeWatch(Store(flags), Lookup())  # type: ignore[arg-type]
    episode = SimpleNamespace(id="e", knowledge=0, expires_at=0)
    versioned = f"{HELD.url}?v=5.2.1"
    assert await watch._finding(episode, ORIGIN, None, versioned, "sha256:main", "js") is None  # type: ignore[arg-type]
    other = await watch._finding(episode, ORIGIN, None, versioned, "sha256:other", "js")  # type: ignore[arg-type]
    assert other is not None and other[0] == "knowledge_gap"


async def test_the_same_bytes_read_as_other_code_are_a_gap(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What bytes reference is keyed by their kind too: a script whose bytes a held stylesheet
    has (or a held 404's page, which references nothing) was never read as a script."""
    style = AssetRecord(f"{ORIGIN}/static/a.css", "css", 200, "sha256:same", "markup")
    missing = AssetRecord(f"{ORIGIN}/static/gone.js", "js", 404, "sha256:page404", "markup")
    record = PageRecord(f"{ORIGIN}/lab", "markup", (HELD, style, missing), "browser")
    monkeypatch.setattr(Lookup, "record", lambda self, digest: _held(record))
    flags = [page_record_flag(f"{ORIGIN}/lab", record.digest)]
    watch = KnowledgeWatch(Store(flags), Lookup())  # type: ignore[arg-type]
    episode = SimpleNamespace(id="e", knowledge=0, expires_at=0)
    script = f"{ORIGIN}/static/b.js"
    for served in ("sha256:same", "sha256:page404"):
        found = await watch._finding(episode, ORIGIN, None, script, served, "js")  # type: ignore[arg-type]
        assert found is not None and found[0] == "knowledge_gap", served
    # The same bytes as a stylesheet at another URL are known.
    stylesheet = f"{ORIGIN}/static/a.css?v=2"
    assert await watch._finding(episode, ORIGIN, None, stylesheet, "sha256:same", "css") is None  # type: ignore[arg-type]


async def _held(record: PageRecord) -> PageRecord:
    return record
