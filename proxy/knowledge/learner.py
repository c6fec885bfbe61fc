"""Learning one page: every stylesheet and script it loads, now and later, read from its upstream.

Two passes, whose union is the page's `PageRecord`:

- **static**: the assets its markup names, what stylesheets `@import`, and what scripts name by
  literal URL (code-split chunks, bundlers' preload lists), transitively and bounded; fetched
  with the page request's headers (its cookies: the same bytes the browser gets), GET only.
- **browser**: the page in a headless Chromium, so scripts that build their URLs at run time
  (a wiki's module loader, a framework's router) load what they load. The browser never
  reaches anything but the page's own upstream: every same-origin GET is fetched by the learner
  from that upstream (with the source's Host, as the proxy routes it) without cookies, the
  document itself is the markup the agent was served, and every other request (another
  origin, a POST) is refused. So learning changes no state of the app.

A learn either reads everything it found whole or fails (`LearnFailed`, naming what could not be
read): a page is never shifted against part of its knowledge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

import httpx

from proxy.chromium import missing_playwright
from proxy.classify import JS_TYPES
from proxy.knowledge.records import (
    AssetRecord,
    PageRecord,
    body_digest,
    markup_digest,
    on_upstream,
    refs_key,
    url_origin,
)
from proxy.options import ASSET_MAX_BYTES
from shifts.references import (
    AssetRefs,
    PageAsset,
    css_imports,
    css_refs,
    js_refs,
    page_assets,
    script_imports,
)

logger = logging.getLogger(__name__)

CSS_TYPES = ("text/css",)
MAX_ASSETS_PER_PAGE = 256  # of those the markup names
MAX_FOLLOWED_PER_PAGE = 256  # of those stylesheets import and scripts name
MAX_PARALLEL_FETCHES = 8
MAX_DEPTH = 4
MAX_REDIRECTS = 5
# Headers of the page request the static pass sends with each asset request: the browser's own
# would carry them (cookies decide what a signed-in page's assets are).
FORWARDED_HEADERS = ("cookie", "user-agent", "accept-language", "authorization")
LearnMode = Literal["browser", "static"]
# What the learning browser fetches: what a page is made of and what its scripts ask for.
# Images, media and fonts reference no code; they are refused, never fetched.
ROUTED_TYPES = frozenset({"document", "script", "stylesheet", "xhr", "fetch"})
# Anything the browser would send past the learner's routing (its own background requests)
# goes to a port where nothing listens: learning never reaches the network.
NOWHERE_PROXY = ("--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>")
MISSING_PLAYWRIGHT = missing_playwright("the learning browser") + " (or serve with --learn static)"


class LearnFailed(RuntimeError):
    """A page's knowledge could not be read whole; the message names what and why."""


def asset_kind_of(content_type: str) -> Literal["css", "js"] | None:
    mime = content_type.split(";")[0].strip().lower()
    if mime in CSS_TYPES:
        return "css"
    if mime in JS_TYPES:
        return "js"
    return None


@dataclass(frozen=True)
class LearnRequest:
    page_url: str  # as the browser sees it (the source's origin under Tgt)
    upstream_origin: str  # the upstream that serves it (a target deployment under Tgt)
    raw: bytes | None  # the markup as the agent was served it (None: fetch it)
    headers: dict[str, str] = field(default_factory=dict)  # the page request's (cookies...)
    browser: bool = True  # run the browser pass (navigations; not XHR fragments)

    def upstream_url(self, url: str) -> str:
        """A same-origin URL of the page on the upstream that serves it."""
        return on_upstream(self.upstream_origin, url)

    @property
    def upstream_page(self) -> str:
        return self.upstream_url(self.page_url)


@dataclass
class Learned:
    record: PageRecord
    refs: dict[str, AssetRefs]  # refs key -> what those bytes reference
    seconds: float


@dataclass
class _Fetched:
    status: int
    content_type: str
    body: bytes
    location: str | None = None


class _Learn:
    """One learn run: every asset fetched once, read once."""

    def __init__(self, learner: Learner, request: LearnRequest, client: httpx.AsyncClient):
        self.learner = learner
        self.request = request
        self.client = client
        self.origin = url_origin(request.page_url)
        self.assets: dict[str, AssetRecord] = {}  # upstream URL -> record
        self.refs: dict[str, AssetRefs] = {}
        self.fetched: dict[str, _Fetched] = {}  # browser URL -> what the upstream answered
        # The static pass's bound: URLs followed beyond the markup's own (what stylesheets
        # import, what scripts name), counted before they are fetched, and fetches at once.
        self.followed = 0
        self.fetch_slots = asyncio.Semaphore(MAX_PARALLEL_FETCHES)

    async def fetch(self, url: str, headers: dict[str, str]) -> _Fetched:
        """GET one URL of the page's origin from its upstream (no redirects followed: the
        browser gets a redirect as such)."""
        if url in self.fetched:
            return self.fetched[url]
        upstream = self.request.upstream_url(url)
        limit = self.learner.max_bytes
        try:
            async with self.client.stream(
                "GET", upstream, headers={**headers, "host": urlsplit(url).netloc}
            ) as response:
                body = b""
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise LearnFailed(f"{upstream} is over {limit} bytes")
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as error:
            # ValueError: a URL or header httpx refuses to send (UnicodeError is one).
            reason = str(error) or type(error).__name__
            raise LearnFailed(f"{upstream} could not be read: {reason}") from None
        location = response.headers.get("location")
        found = _Fetched(response.status_code, response.headers.get("content-type", ""), body)
        found.location = location
        self.fetched[url] = found
        return found

    async def read(self, url: str, kind: Literal["css", "js"], found: _Fetched, by: str) -> None:
        """Record one asset and what it references; follow what it loads (static pass)."""
        upstream = self.request.upstream_url(url)
        if upstream in self.assets:
            return
        if not 200 <= found.status < 300:
            # The browser gets the same error: the asset references nothing.
            self.assets[upstream] = AssetRecord(upstream, kind, found.status, None, by)
            return
        if kind == "js" and _is_markup(found.body):
            # An app's HTML page where a script was asked for (a fallback for any path): the
            # browser stops at its first `<`, so it references nothing (read as a script, its
            # markup's names held what no code looks up).
            self.assets[upstream] = AssetRecord(upstream, kind, found.status, None, by)
            return
        sha = body_digest(found.body)
        key = refs_key(kind, sha)
        self.assets[upstream] = AssetRecord(upstream, kind, found.status, sha, by)
        if key not in self.refs:
            text = found.body.decode(_charset(found.content_type), "replace")
            self.refs[key] = await self.learner.read(key, kind, text)

    async def static(self, assets: list[tuple[PageAsset, str]], depth: int = 0) -> None:
        """Read these assets, then what they load (`@import`s, scripts' literal URLs)."""
        headers = self.learner.forwarded(self.request.headers)
        found = await asyncio.gather(
            *(self._static_one(asset, by, headers, depth) for asset, by in assets)
        )
        more = list(dict.fromkeys(pair for pairs in found for pair in pairs))
        if more:
            await self.static(more, depth + 1)

    async def _static_one(
        self, asset: PageAsset, by: str, headers: dict[str, str], depth: int
    ) -> list[tuple[PageAsset, str]]:
        if self.request.upstream_url(asset.url) in self.assets:
            return []
        if by != "markup" and asset.url not in self.fetched:
            if self.followed >= MAX_FOLLOWED_PER_PAGE:
                return []  # what the browser pass sees loading is still read
            self.followed += 1
        async with self.fetch_slots:
            found = await self.fetch(asset.url, headers)
        kind = asset.kind
        if by == "script":
            # A script's URL-looking string: an asset only if the upstream serves one there
            # (not a 404, not an app's HTML fallback page).
            served = asset_kind_of(found.content_type)
            if served is None or not 200 <= found.status < 300:
                return []
            kind = served
        await self.read(asset.url, kind, found, by)
        if depth >= MAX_DEPTH or not 200 <= found.status < 300:
            return []
        text = found.body.decode(_charset(found.content_type), "replace")
        named = css_imports(text, asset.url) if kind == "css" else script_imports(text, asset.url)
        by = "import" if kind == "css" else "script"
        return [(each, by) for each in named if each.url not in self.fetched]


def _is_markup(body: bytes) -> bool:
    """Whether a script's body is markup: no script starts with a `<` but an HTML-like
    comment (`<!--`, a line comment in a classic script). Read on the bytes (a UTF-8 BOM and
    whitespace first), not decoded: a bundle whose refs are known is never decoded."""
    start = body.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
    return start.startswith(b"<") and not start.startswith(b"<!--")


class Learner:
    """Learns pages (`learn`); one headless Chromium shared by its browser passes, started on
    the first and stopped by `close`."""

    def __init__(
        self,
        *,
        mode: LearnMode = "browser",
        timeout: float = 30.0,
        max_bytes: int = ASSET_MAX_BYTES,
        verify: bool | str = True,
        settle_ms: int = 1500,
    ) -> None:
        self.mode = mode
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.verify = verify
        self.settle_ms = settle_ms
        self._refs_cache: dict[str, AssetRefs] = {}  # refs key -> refs: a pure function's memo
        self._browser: Any = None
        self._playwright: Any = None
        self._browser_lock = asyncio.Lock()
        self._browser_passes = asyncio.Semaphore(2)

    @staticmethod
    def forwarded(headers: dict[str, str]) -> dict[str, str]:
        return _kept_headers(headers, FORWARDED_HEADERS)

    async def read(self, key: str, kind: str, text: str) -> AssetRefs:
        """What an asset's text references (the same bytes are read once per process)."""
        refs = self._refs_cache.get(key)
        if refs is None:
            # Reading a big bundle takes tens of milliseconds: off the event loop.
            refs = await asyncio.to_thread(css_refs if kind == "css" else js_refs, text)
            if len(self._refs_cache) > 4096:
                self._refs_cache.clear()
            self._refs_cache[key] = refs
        return refs

    async def learn(self, request: LearnRequest) -> Learned:
        # Learns that run a browser take turns for its slots first; the time a learn may take
        # starts once it has one (many first loads at once queue, they do not time out).
        slot = (
            self._browser_passes
            if request.browser and self.mode == "browser"
            else contextlib.nullcontext()
        )
        async with slot:
            return await self._timed_learn(request)

    async def _timed_learn(self, request: LearnRequest) -> Learned:
        started = time.monotonic()
        try:
            return await asyncio.wait_for(self._learn(request, started), self.timeout)
        except TimeoutError:
            raise LearnFailed(
                f"learning {request.page_url} took longer than {self.timeout:.0f} s"
            ) from None

    async def _learn(self, request: LearnRequest, started: float) -> Learned:
        async with httpx.AsyncClient(
            timeout=self.timeout, verify=self.verify, trust_env=False, follow_redirects=False
        ) as client:
            run = _Learn(self, request, client)
            raw = request.raw
            if raw is None:
                request = await self._final_page(run, request)
                run.request = request
                raw = request.raw
                assert raw is not None
            markup = page_assets(raw, request.page_url)[:MAX_ASSETS_PER_PAGE]
            await run.static([(asset, "markup") for asset in markup])
            learnt_by: Literal["static", "browser"] = "static"
            if request.browser and self.mode == "browser":
                await self._browser_pass(run, raw)
                learnt_by = "browser"
        record = PageRecord(
            page=request.upstream_page,
            markup=markup_digest(markup),
            assets=tuple(sorted(run.assets.values(), key=lambda asset: asset.url)),
            learnt_by=learnt_by,
        )
        return Learned(record, run.refs, time.monotonic() - started)

    async def _final_page(self, run: _Learn, request: LearnRequest) -> LearnRequest:
        """Fetch the page of a learn run, following its redirects within its origin."""
        seen = [request.page_url]
        while True:
            page = await run.fetch(seen[-1], self.forwarded(request.headers))
            if page.status in (301, 302, 303, 307, 308) and page.location:
                target = urljoin(seen[-1], page.location).split("#")[0]
                if url_origin(target) != run.origin:
                    raise LearnFailed(f"{seen[-1]} redirects to another origin ({target})")
                if target in seen or len(seen) > MAX_REDIRECTS:
                    raise LearnFailed(
                        f"{request.page_url} redirects in a loop ({' -> '.join(seen)})"
                    )
                seen.append(target)
                continue
            if not 200 <= page.status < 300 or "html" not in page.content_type:
                raise LearnFailed(
                    f"{seen[-1]} answered {page.status} {page.content_type!r}: only an HTML page "
                    "can be learnt"
                )
            return replace(request, page_url=seen[-1], raw=page.body)

    async def _chromium(self) -> Any:
        async with self._browser_lock:
            if self._browser is None or not self._browser.is_connected():
                try:
                    from playwright.async_api import async_playwright
                except ModuleNotFoundError:
                    raise LearnFailed(MISSING_PLAYWRIGHT) from None

                from proxy.chromium import CHROMIUM, CHROMIUM_ARGS

                try:
                    if self._playwright is None:
                        self._playwright = await async_playwright().start()
                    self._browser = await self._playwright.chromium.launch(
                        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *NOWHERE_PROXY]
                    )
                except Exception as error:  # Playwright's errors, a missing binary
                    raise LearnFailed(f"the learning browser could not start: {error}") from None
            return self._browser

    async def _browser_pass(self, run: _Learn, raw: bytes) -> None:
        try:
            from playwright.async_api import Error as PlaywrightError
        except ModuleNotFoundError:
            raise LearnFailed(MISSING_PLAYWRIGHT) from None

        request = run.request
        document = request.page_url.split("#")[0]
        failures: list[str] = []
        reads: list[asyncio.Task[None]] = []
        in_flight: set[asyncio.Task[Any]] = set()

        async def answer(route: Any) -> None:
            asked = route.request
            url = asked.url.split("#")[0]
            if (
                asked.method != "GET"
                or url_origin(url) != run.origin
                or asked.resource_type not in ROUTED_TYPES
            ):
                await route.abort("blockedbyclient")
                return
            if url == document and asked.resource_type == "document":
                await route.fulfill(status=200, body=raw, content_type="text/html")
                return
            try:
                found = await run.fetch(url, _browser_headers(request.headers))
            except LearnFailed as error:
                failures.append(str(error))
                await route.abort("failed")
                return
            kind = asset_kind_of(found.content_type)
            if kind is None and asked.resource_type in ("script", "stylesheet"):
                kind = "css" if asked.resource_type == "stylesheet" else "js"
            if kind is not None:
                reads.append(asyncio.ensure_future(run.read(url, kind, found, "browser")))
            headers = {"content-type": found.content_type} if found.content_type else {}
            if found.location:
                headers["location"] = found.location
            await route.fulfill(status=found.status, headers=headers, body=found.body)

        async def handle(route: Any) -> None:
            # Counted, so the pass ends only when every request it let through was answered
            # (and its asset read): a script still on its way when the page went quiet is
            # part of the page.
            task = asyncio.current_task()
            if task is not None:
                in_flight.add(task)
            try:
                await answer(route)
            except PlaywrightError:
                pass  # the page went away (the pass ended): nothing is waiting for it
            finally:
                in_flight.discard(task)

        async def refuse_socket(socket: Any) -> None:
            # A page's live connection (a dev server's reload socket, a chat): never opened.
            with contextlib.suppress(PlaywrightError):
                await socket.close(code=1000)

        try:
            browser = await self._chromium()
            context = await browser.new_context(
                ignore_https_errors=True, service_workers="block", java_script_enabled=True
            )
            try:
                page = await context.new_page()
                await page.route("**/*", handle)
                await page.route_web_socket("**/*", refuse_socket)
                await page.goto(document, wait_until="load", timeout=self.timeout * 1000)
                # What scripts load after `load` (a module loader's batches): until the
                # network has been idle for a while, within the learn's budget.
                with contextlib.suppress(PlaywrightError):
                    await page.wait_for_load_state(
                        "networkidle", timeout=max(self.settle_ms, 1) * 4
                    )
                # Requests still being answered (a page that never goes idle, polling):
                # the ones under way are finished, new ones are not waited for.
                if in_flight:
                    await asyncio.wait(set(in_flight))
            finally:
                with contextlib.suppress(PlaywrightError):
                    await context.close()
        except PlaywrightError as error:
            raise LearnFailed(
                f"the learning browser could not load {document}: "
                f"{str(error).splitlines()[0] if str(error) else type(error).__name__}"
            ) from None
        finally:
            # Every read started is finished (or its failure seen) before the pass returns.
            done = await asyncio.gather(*reads, return_exceptions=True)
        for outcome in done:
            if isinstance(outcome, BaseException):
                raise outcome
        if failures:
            raise LearnFailed("; ".join(failures[:3]))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._browser is not None:
                await self._browser.close()
            if self._playwright is not None:
                await self._playwright.stop()
        self._browser = self._playwright = None


def _browser_headers(headers: dict[str, str]) -> dict[str, str]:
    """What the learning browser's requests carry: no cookies, no credentials."""
    return _kept_headers(headers, ("user-agent", "accept-language"))


def _kept_headers(headers: dict[str, str], names: tuple[str, ...]) -> dict[str, str]:
    """The named headers, those a request can carry as they are (a value that is not ASCII,
    which a client may send and httpx cannot, is left out rather than failing the learn)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    return {name: lowered[name] for name in names if name in lowered and lowered[name].isascii()}


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
            try:
                "".encode(charset)
            except LookupError:
                return "utf-8"
            return charset
    return "utf-8"
