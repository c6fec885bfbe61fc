"""The alignment check of one page under an episode's shifts (CLI `skillshift check` and the
API's GET /episodes/{id}/check): fetch the page directly, shift it exactly as the proxy would,
and list what a task needs that changed."""

from __future__ import annotations

from typing import Any

import httpx

from proxy.episode import Episode
from proxy.pipeline import shift_offline
from shifts.alignment import check_alignment
from shifts.contextual import origin_of_url, route

FETCH_TIMEOUT_S = 15.0


def check_page(
    episode: Episode,
    url: str,
    raw: bytes,
    charset: str | None = None,
    policies: list[str] | None = None,
) -> dict[str, Any]:
    """Shift `raw` (the page at `url`) under the episode and compare it with the original."""
    ctx, doc = shift_offline(episode, url, raw, charset, policies)
    violations = check_alignment(raw, doc.to_bytes(), ctx.site)
    return {
        "url": url,
        "site": ctx.site.name,
        "condition": episode.condition,
        "seed": episode.seed,
        "changed": doc.changed,
        "shifts": doc.notes,
        "violations": [violation.as_dict() for violation in violations],
    }


def fetch_url(episode: Episode, url: str) -> str:
    """Where the page really comes from: the target deployment in routed Tgt conditions."""
    parsed = httpx.URL(url)
    routed = "contextual" in episode.shift_names()
    target = route(origin_of_url(url), episode.all_targets()) if routed else None
    return f"{target}{parsed.raw_path.decode()}" if target else url


async def fetch_and_check(episode: Episode, url: str) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_S, trust_env=False) as client:
        # The source's Host, as the proxy sends it when it routes to a target deployment.
        response = await client.get(
            fetch_url(episode, url),
            headers={"Host": httpx.URL(url).netloc.decode()},
            follow_redirects=True,
        )
    if response.status_code >= 400 or "html" not in response.headers.get("content-type", ""):
        raise ValueError(
            f"{url} answered {response.status_code} {response.headers.get('content-type', '')!r}; "
            "the check needs an HTML page"
        )
    return check_page(
        episode,
        url,
        response.content,
        response.charset_encoding,
        response.headers.get_list("content-security-policy"),
    )


__all__ = ["check_page", "fetch_and_check"]
