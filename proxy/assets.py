"""The asset index: what a page's stylesheets and scripts reference, for locator drift.

A page is shifted against the `shifts.references.AssetRefs` of every stylesheet and script it
loads: the ones its markup names (read before the page is shifted, when they are not known
yet) and the ones browsers loaded for it before (scripts load more scripts: code-split chunks,
modules on demand), learnt as they stream through and attributed to the page by their
`Referer`. Assets are read once per URL (and validator) and shared by all episodes of the
process. A page whose assets cannot all be read (a timeout, a dead upstream, an asset over the
size limit) is reported incomplete, and locator drift then changes nothing on it: a page is
never shifted against references it did not see.

What a page loads only grows: an asset seen once keeps its names protected on that page, which
can only make the shift more careful (a first load cannot know the chunks its scripts will load
later; the oracle's baseline loads teach them). `page_served` events carry the digest of the
assets a page was shifted against, so two runs can tell whether they shifted against the same.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from mitmproxy import ctx, http

from proxy import classify
from proxy.binding import EPISODE
from proxy.codec import UndecodableBody, decode_body
from proxy.pipeline import page_digest
from proxy.routing import origin_of
from shifts.references import (
    EMPTY,
    AssetRefs,
    PageAsset,
    css_imports,
    css_refs,
    js_refs,
    merge_refs,
    page_assets,
)

logger = logging.getLogger(__name__)

CSS_TYPES = ("text/css",)
JS_TYPES = (
    "text/javascript",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "text/ecmascript",
    "module",
)
MAX_ASSETS_PER_PAGE = 64
MAX_IMPORT_DEPTH = 3
CACHED_ASSETS = 4096
FORWARDED_HEADERS = ("cookie", "user-agent", "accept-language", "authorization")


@dataclass(frozen=True)
class _Entry:
    validator: str
    refs: AssetRefs


class _Recent[K, V](OrderedDict[K, V]):
    """At most `limit` entries, the least recently used out first."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def recall(self, key: K) -> V | None:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def keep(self, key: K, value: V) -> V:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)
        return value


class AssetIndex:
    def __init__(self) -> None:
        self._assets: _Recent[str, _Entry] = _Recent(CACHED_ASSETS)
        # Page (upstream origin + path) -> the assets browsers loaded for it, in order.
        self._loaded_by: dict[str, dict[str, None]] = {}
        self._merged: _Recent[tuple[str, ...], AssetRefs] = _Recent(256)
        # (kind, how it is decoded, digest of its bytes) -> what the asset references.
        self._bodies: _Recent[tuple[str, str, bytes], AssetRefs] = _Recent(CACHED_ASSETS)
        # (digest of a page's bytes, its URL) -> the assets its markup loads.
        self._page_assets: _Recent[tuple[bytes, str], list[PageAsset]] = _Recent(CACHED_ASSETS)

    def add(self, url: str, validator: str, refs: AssetRefs, page: str | None = None) -> None:
        """Index one asset (by its upstream URL); `page` (upstream origin + path) loaded it."""
        self._assets.keep(url, _Entry(validator, refs))
        if page is not None:
            self._loaded_by.setdefault(page, {})[url] = None

    async def read(
        self, kind: str, body: bytes, decoding: str, text_of: Callable[[bytes], str]
    ) -> AssetRefs:
        """What an asset references, read from its body (`text_of`, decoding it as
        `decoding` says). The same bytes are read once: a stylesheet served without a
        validator is streamed again on every page, a bundle under another cache-busting URL."""
        key = (kind, decoding, hashlib.blake2b(body, digest_size=16).digest())
        refs = self._bodies.recall(key)
        if refs is None:
            refs = self._bodies.keep(key, await _read(kind, text_of(body)))
        return refs

    def knows(self, url: str) -> bool:
        return url in self._assets

    def has_current(self, url: str, validator: str) -> bool:
        """Whether the asset is indexed as of this validator (an ETag or Last-Modified: an
        asset without one may have changed, and is read again)."""
        entry = self._assets.get(url)
        return entry is not None and bool(validator) and entry.validator == validator

    def add_loaded(self, page: str, url: str) -> None:
        """A known asset was loaded (again) for `page`."""
        self._loaded_by.setdefault(page, {})[url] = None

    def refs_of(self, urls: list[str]) -> tuple[AssetRefs, str]:
        """The merged references of these assets, and a digest of which (URLs, validators)."""
        entries = [(url, self._assets[url]) for url in urls if url in self._assets]
        key = tuple(f"{url} {entry.validator}" for url, entry in entries)
        digest = hashlib.blake2b("\n".join(key).encode(), digest_size=6).hexdigest()
        merged = self._merged.recall(key)
        if merged is None:
            merged = self._merged.keep(key, merge_refs([EMPTY, *(e.refs for _, e in entries)]))
        return merged, digest

    async def page_refs(
        self,
        raw: bytes,
        page_url: str,
        upstream_origin: str,
        request_headers: dict[str, str],
        timeout: float,
        max_bytes: int,
        verify: bool | str = True,
        raw_digest: bytes | None = None,
    ) -> tuple[AssetRefs, str]:
        """The references of the page's stylesheets and scripts (read first when not known
        yet) and of those browsers loaded for it before, with their digest. `page_url` is the
        URL the browser sees; assets are fetched from `upstream_origin` (the upstream that
        really serves the page, e.g. a target deployment) with the page request's Host.
        `raw_digest` is the page's `page_digest`, when the caller has it already."""
        browser_origin = _origin(page_url)

        def upstream_url(asset: PageAsset) -> str:
            parts = urlsplit(asset.url)
            query = f"?{parts.query}" if parts.query else ""
            return upstream_origin + (parts.path or "/") + query

        wanted = self._assets_of(raw, page_url, raw_digest or page_digest(raw))
        missing = [asset for asset in wanted if not self.knows(upstream_url(asset))]
        complete = True
        if missing:
            headers = {**request_headers, "host": urlsplit(browser_origin).netloc}
            started = time.monotonic()
            try:
                async with httpx.AsyncClient(
                    timeout=timeout, verify=verify, trust_env=False, follow_redirects=False
                ) as client:
                    results = await asyncio.wait_for(
                        asyncio.gather(
                            *(
                                self._fetch(client, asset, upstream_url, headers, max_bytes, 0)
                                for asset in missing
                            )
                        ),
                        timeout,
                    )
                complete = all(results)
            except TimeoutError:
                complete = False
            if not complete:
                logger.warning(
                    "assets of %s not all readable within %.1f s: locator drift skips the page",
                    page_url,
                    time.monotonic() - started,
                )
        page = page_key(upstream_origin, page_url)
        urls = [upstream_url(asset) for asset in wanted] + list(self._loaded_by.get(page, {}))
        urls += [url for url in self._imports_of(urls) if url not in urls]
        refs, digest = self.refs_of(urls)
        return (refs if complete else AssetRefs(complete=False)), digest

    def _assets_of(self, raw: bytes, page_url: str, digest: bytes) -> list[PageAsset]:
        """The assets the page's markup loads. Found by a scan of the whole page and a URL
        join per tag (a millisecond on a big page): once per distinct page and URL, since
        every load of a page looks them up to know whether its shifted copy still holds."""
        key = (digest, page_url)
        found = self._page_assets.recall(key)
        if found is None:
            found = self._page_assets.keep(key, page_assets(raw, page_url)[:MAX_ASSETS_PER_PAGE])
        return found

    def _imports_of(self, urls: list[str]) -> list[str]:
        """What these stylesheets @import (recorded as loaded "by" the importing sheet)."""
        return [imported for url in urls for imported in self._loaded_by.get(url, {})]

    async def _fetch(
        self,
        client: httpx.AsyncClient,
        asset: PageAsset,
        upstream_url: Callable[[PageAsset], str],
        headers: dict[str, str],
        max_bytes: int,
        depth: int,
    ) -> bool:
        """Read one asset into the index; False if it could not be read whole."""
        url = upstream_url(asset)
        try:
            async with client.stream("GET", url, headers=headers) as response:
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        logger.warning("asset %s is over %d bytes", url, max_bytes)
                        return False
        except httpx.HTTPError as error:
            logger.warning("asset %s could not be read: %s", url, error)
            return False
        if not 200 <= response.status_code < 300:
            # The browser gets the same error: the asset references nothing.
            self.add(url, f"status:{response.status_code}", EMPTY)
            return True
        charset = response.encoding or "utf-8"
        text = body.decode(charset, "replace")
        refs = await self.read(asset.kind, body, charset, lambda _: text)
        self.add(url, _validator(response.headers), refs)
        if asset.kind == "css" and depth < MAX_IMPORT_DEPTH:
            imported = css_imports(text, asset.url)
            for each in imported:  # a stylesheet's imports count for every page that loads it
                self._loaded_by.setdefault(url, {})[upstream_url(each)] = None
            imports = [a for a in imported if not self.knows(upstream_url(a))]
            results = await asyncio.gather(
                *(
                    self._fetch(client, imported, upstream_url, headers, max_bytes, depth + 1)
                    for imported in imports
                )
            )
            return all(results)
        return True


async def _read(kind: str, text: str) -> AssetRefs:
    # Indexing a big bundle takes tens of milliseconds: off the event loop.
    return await asyncio.to_thread(css_refs if kind == "css" else js_refs, text)


def page_key(upstream_origin: str, page_url: str) -> str:
    """Which page an asset was loaded for: the upstream that served it, and the page's path
    (its query left out: the same page with other parameters loads the same code)."""
    return upstream_origin + (urlsplit(page_url).path or "/")


def asset_kind(response: http.Response) -> str | None:
    mime = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if mime in CSS_TYPES:
        return "css"
    if mime in JS_TYPES:
        return "js"
    return None


def _validator(headers: httpx.Headers | http.Headers) -> str:
    return headers.get("etag") or headers.get("last-modified") or ""


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class AssetObserver:
    """Reads the stylesheets and scripts browsers fetch, as they stream through unchanged, so
    the index learns what scripts load later (code-split chunks, modules loaded on demand)."""

    def __init__(self, index: AssetIndex) -> None:
        self.index = index
        self._tasks: set[asyncio.Task[None]] = set()

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        loader.add_option(
            "ss_asset_timeout",
            float,
            5.0,
            "Seconds to read the stylesheets and scripts of a page whose assets are not known "
            "yet, before locator drift shifts it; past it the page is shifted without drift.",
        )
        loader.add_option(
            "ss_asset_max_bytes",
            int,
            8 * 1024 * 1024,
            "Largest stylesheet or script the asset index reads; a page loading a bigger one "
            "is shifted without locator drift.",
        )

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        response = flow.response
        # Every episode's browser teaches the index (what a page loads later, a Src run shows a
        # Src-Perc one), each version of an asset read once.
        if response is None or EPISODE not in flow.metadata:
            return
        if not 200 <= response.status_code < 300:
            return
        kind = asset_kind(response)
        url = _upstream_url(flow)
        if kind is None:
            return
        referer = flow.request.headers.get("referer")
        page = page_key(_origin(url), referer) if referer else None
        validator = _validator(response.headers)
        if page is not None and self.index.knows(url):
            self.index.add_loaded(page, url)
        # A known asset is read again unless its validator says it is the same version: the
        # same URL may serve new code (its bytes, when unchanged, are not parsed again).
        if self.index.has_current(url, validator):
            return
        collected: list[bytes] = []
        size = [0]
        limit = ctx.options.ss_asset_max_bytes
        encoding = classify.content_encoding(response)

        def tee(chunk: bytes) -> bytes:
            if size[0] <= limit:
                collected.append(chunk)
                size[0] += len(chunk)
            if chunk == b"" and size[0] <= limit:
                task = asyncio.get_running_loop().create_task(
                    self._index(url, kind, validator, b"".join(collected), encoding, page)
                )
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return chunk

        response.stream = tee

    async def _index(
        self, url: str, kind: str, validator: str, body: bytes, encoding: str, page: str | None
    ) -> None:
        def text_of(raw: bytes) -> str:
            return decode_body(raw, encoding).decode("utf-8", "replace")

        try:
            refs = await self.index.read(kind, body, encoding, text_of)
        except UndecodableBody:
            return
        self.index.add(url, validator, refs, page)


def _upstream_url(flow: http.HTTPFlow) -> str:
    """The asset's URL on the upstream that serves it, as `page_refs` keys what it reads."""
    return (origin_of(flow.request) + flow.request.path).split("#")[0]
