"""What the knowledge watch tells an episode about the code its browser loads."""

from __future__ import annotations

from types import SimpleNamespace

from proxy.knowledge.records import AssetRecord, PageRecord, page_record_flag
from proxy.knowledge.watch import KnowledgeWatch

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


async def finding(referer: str, asset: str, flags: list[str]) -> tuple[str, dict] | None:
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
