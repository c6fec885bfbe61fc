"""The alignment check of one page under an episode's shifts (CLI `skillshift-proxy check` and
the API's GET /episodes/{id}/check): fetch the page directly, shift it exactly as the proxy
would, and list what a task needs that changed. A page that cannot be fetched, answers a
non-2xx status or is not HTML is `unchecked` (api/analysis/verdicts.py), never aligned."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from api.analysis.verdicts import Unchecked, of_violations, status_problem
from api.fetchable import url_problem
from proxy.classify import BodyType, coding_of
from proxy.codec import UndecodableBody, decode_body
from proxy.episode import Episode
from proxy.knowledge import Learner, LearnFailed, LearnRequest
from proxy.options import ASSET_MAX_BYTES
from proxy.page_shift import shift_offline
from shifts.alignment import check_alignment
from shifts.contextual import origin_of_url, route
from shifts.parsing import UnparsablePage
from shifts.references import EMPTY, UNKNOWN, AssetRefs, merge_refs

FETCH_TIMEOUT_S = 15.0


def check_page(
    episode: Episode,
    url: str,
    raw: bytes,
    charset: str | None = None,
    policies: list[str] | None = None,
    assets: AssetRefs | None = None,
) -> dict[str, Any]:
    """Shift `raw` (the page at `url`) under the episode and compare it with the original.
    `assets`: what the page's stylesheets and scripts reference (None: unknown, so locator
    drift changes nothing)."""
    try:
        ctx, doc = shift_offline(episode, url, raw, charset, policies, assets)
        violations = check_alignment(raw, doc.to_bytes(), ctx.site)
    except UnparsablePage as error:  # (the proxy answers it 502, saying so)
        raise Unchecked(f"{url}: {error}") from None
    return {
        "url": url,
        "site": ctx.site.name,
        "condition": episode.condition,
        "seed": episode.seed,
        "status": of_violations(len(violations)),
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


class UpstreamRefused(ValueError):
    """The check would contact an upstream the proxy may not reach."""


@dataclass(frozen=True)
class FetchedPage:
    """A page fetched for a check: its bytes decoded as the proxy decodes them."""

    content: bytes
    charset: str | None
    headers: httpx.Headers
    url: httpx.URL


async def fetch_page(
    client: httpx.AsyncClient, url: str, headers: dict[str, str] | None = None, shown: str = ""
) -> FetchedPage:
    """GET `url` (every redirect followed) for a check. `Unchecked` when it cannot be fetched or
    is no page to check (a non-2xx status, not HTML, a body that does not decode: the proxy
    answers that one 502, where httpx would read a truncated gzip as a shorter page); `shown`
    is the URL the message names."""
    shown = shown or url
    problem = url_problem(url)
    if problem:
        raise Unchecked(f"could not fetch it: {problem}")
    try:
        async with client.stream("GET", url, headers=headers, follow_redirects=True) as response:
            raw = b"".join([chunk async for chunk in response.aiter_raw()])
    except httpx.HTTPError as error:
        raise Unchecked(f"could not fetch {shown}: {error or type(error).__name__}") from None
    problem = status_problem(response.status_code, response.reason_phrase)
    if problem:
        raise Unchecked(f"{shown}: {problem}")
    try:
        content = decode_body(raw, coding_of(response.headers.get("content-encoding", "")))
    except UndecodableBody as error:
        raise Unchecked(f"{shown}: its body could not be decoded: {error}") from None
    # What the proxy shifts, as a browser reads it (`proxy.classify`): a type of several
    # values, or none and a body that sniffs as HTML.
    body_type = BodyType.of(
        response.headers.get_list("content-type"),
        response.headers.get("x-content-type-options", ""),
    )
    if not body_type.renders_as_html(content):
        shown_type = response.headers.get("content-type") or "no content type"
        raise Unchecked(f"{shown}: it answered {shown_type}, not an HTML page")
    return FetchedPage(content, body_type.charset, response.headers, response.url)


async def fetch_and_check(
    episode: Episode, url: str, allowed: Callable[[str, int], bool]
) -> dict[str, Any]:
    """Fetch `url` as the proxy would (the same allow-list, every redirect included), shift
    it under the episode and compare. `UpstreamRefused` when the allow-list refuses it,
    `Unchecked` when there is no page to check."""
    problem = url_problem(url)  # (before the target's URL is made of it)
    if problem:
        raise Unchecked(f"could not fetch it: {problem}")

    async def refuse_unless_allowed(request: httpx.Request) -> None:
        if not allowed(request.url.host, request.url.port or _default_port(request.url)):
            raise UpstreamRefused(
                f"the upstream {request.url.host}:{request.url.port or _default_port(request.url)} "
                "is not allowed through this proxy"
            )

    async with httpx.AsyncClient(
        timeout=FETCH_TIMEOUT_S,
        trust_env=False,
        event_hooks={"request": [refuse_unless_allowed]},
    ) as client:
        # The source's Host, as the proxy sends it when it routes to a target deployment.
        response = await fetch_page(
            client, fetch_url(episode, url), {"Host": httpx.URL(url).netloc.decode()}, url
        )
    return check_page(
        episode,
        url,
        response.content,
        response.charset,
        response.headers.get_list("content-security-policy"),
        await page_assets(response.content, url, str(response.url)),
    )


async def page_assets(raw: bytes, url: str, fetched_from: str) -> AssetRefs:
    """What the page's own stylesheets and scripts reference, learnt as the proxy learns a
    page, without the browser pass (same origin as the page's upstream, so already allowed);
    unknown when they cannot all be read."""
    upstream = httpx.URL(fetched_from)
    origin = f"{upstream.scheme}://{upstream.netloc.decode()}"
    learner = Learner(mode="static", timeout=FETCH_TIMEOUT_S, max_bytes=ASSET_MAX_BYTES)
    try:
        learned = await learner.learn(LearnRequest(url, origin, raw, browser=False))
    except LearnFailed:
        return UNKNOWN
    return merge_refs([EMPTY, *learned.refs.values()])


def _default_port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


__all__ = ["FetchedPage", "UpstreamRefused", "check_page", "fetch_and_check", "fetch_page"]
