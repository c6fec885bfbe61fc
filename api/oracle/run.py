"""The browser alignment oracle: does a shifted page still render and run like the original?

The static checker (api/analysis/page_check.py) compares HTML. This compares what Chromium
renders and runs: a page is loaded several times unshifted (the baseline: the differences
between these loads are the page's own noise and are never reported) and once per seed shifted,
each load in a fresh browser context, and every load is reduced to a *snapshot*
(api/oracle/page.js, run in the page): for every element in document order a structural key that
skips the wrapper elements the perceptual shift inserts, its tag, box, visibility, whether a
click at its centre reaches it, its label, whether it is an image (with the pixels of its clip)
and which event listeners it has; plus page and console errors. `compare()` pairs the elements
by key and lists what changed that a task could depend on; ids, classes, data-* attributes and
wrappers are expected to change and are not compared.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import httpx
from pydantic import ValidationError

from api.analysis.summary import all_events
from api.analysis.verdicts import UNCHECKED, of_violations
from api.episodes.lifecycle import pinned_epoch, store_new_episode
from api.failures import Invalid, MissingExtra, Refused, Unavailable, validation_message
from api.oracle.browser import CHROMIUM, CHROMIUM_ARGS, missing_playwright
from api.oracle.compare import Snapshot, Violation, compare, locator_share
from api.oracle.load import load_snapshot
from api.service.settings import Settings
from proxy.episode import EpisodeConfig
from proxy.guard import upstream_allowed
from proxy.knowledge import KnowledgeStore
from proxy.store import EpisodeStore
from shifts.conditions import shifts_for

ORACLE_TTL_S = 300


# The condition a shifted condition is judged against: the same one without its perceptual part.
BASELINES = {"Src": "Src", "Src-Perc": "Src", "Tgt": "Tgt", "Tgt-Perc": "Tgt"}


_one_at_a_time = asyncio.Lock()  # one Chromium at a time on the service's machine


# How long the oracle's Chromium stays up after a check, for the next one (checks come in
# series: a page's conditions, a site's pages): each check loads every page in a fresh context
# of its own, so a browser kept between checks shares nothing between them but the process.
KEEP_BROWSER_S = 30.0


class _KeptBrowser:
    """The oracle's Playwright and Chromium, used by one check at a time (`_one_at_a_time`) and
    closed `KEEP_BROWSER_S` after the last check, when it went away, or with the service. It
    belongs to the event loop that started it (Playwright's driver does)."""

    def __init__(self) -> None:
        self.playwright: Any = None
        self.browser: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.idle: asyncio.TimerHandle | None = None
        self.checks = 0  # checks released so far: an idle close is for the last one only
        self.closing: asyncio.Task[None] | None = None

    async def get(self, error: type[Exception]) -> Any:
        """A connected Chromium (launched if there is none); call under `_one_at_a_time`."""
        if self.idle is not None:
            self.idle.cancel()
            self.idle = None
        loop = asyncio.get_running_loop()
        if self.loop is not loop:  # another loop's driver cannot be driven from this one
            self.playwright = self.browser = None
        if self.browser is not None and self.browser.is_connected():
            return self.browser
        await self.close()
        from playwright.async_api import async_playwright

        self.loop = loop
        self.playwright = await async_playwright().start()
        try:
            self.browser = await self.playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS
            )
        except error as failure:
            await self.close()
            message = f"the browser check needs Chromium at {CHROMIUM}: {_first_line(failure)}"
            raise Unavailable(message) from None
        return self.browser

    def release(self) -> None:
        """The check is over: close the browser if no check takes it up meanwhile."""
        if self.browser is None or self.loop is None:
            return
        self.checks += 1
        check = self.checks
        self.idle = self.loop.call_later(KEEP_BROWSER_S, self._close_when_idle, check)

    def _close_when_idle(self, check: int) -> None:
        async def close() -> None:
            async with _one_at_a_time:
                if self.checks == check and self.idle is not None:  # no check took it up
                    await self.close()

        self.closing = asyncio.ensure_future(close())

    async def close(self) -> None:
        if self.idle is not None:
            self.idle.cancel()
            self.idle = None
        browser, playwright = self.browser, self.playwright
        self.browser = self.playwright = None
        if self.loop is not asyncio.get_running_loop():
            return  # started on another loop, gone with it
        with contextlib.suppress(Exception):  # Playwright's errors: it is going away anyway
            if browser is not None:
                await browser.close()
        with contextlib.suppress(Exception):
            if playwright is not None:
                await playwright.stop()


_kept = _KeptBrowser()


async def close_browser() -> None:
    """Close the oracle's Chromium if it is up (the service stopping: a check still under way
    fails with it)."""
    await _kept.close()


def wrapper_tags_of(events: Sequence[dict[str, Any]], page_url: str) -> list[str]:
    """The wrapper tag names of the last `page_served` document event for `page_url` (or, when
    none names that URL, e.g. after a redirect, the last document served); [] if absent."""
    served = [
        event
        for event in events
        if event.get("type") == "page_served" and event.get("kind", "document") == "document"
    ]
    matching = [event for event in served if event.get("url") == page_url] or served
    if not matching:
        return []
    shifts = matching[-1].get("shifts")
    drift = shifts.get("locator_drift") if isinstance(shifts, dict) else None
    wrapper = drift.get("wrapper") if isinstance(drift, dict) else None
    names = [wrapper] if isinstance(wrapper, str) else wrapper if isinstance(wrapper, list) else []
    return [name.lower() for name in names if isinstance(name, str) and name]


# --- the route's run: temporary episodes through this process's proxy -------------------------


async def browser_check(
    store: EpisodeStore,
    settings: Settings,
    *,
    url: str,
    condition: str,
    seeds: Sequence[int],
    site: str | None = None,
    targets: dict[str, str] | None = None,
    shift_params: dict[str, dict[str, Any]] | None = None,
    perceptual: str | None = None,
    cookies: Sequence[dict[str, Any]] = (),
    tolerance_px: float = 4,
    tolerance_ratio: float = 0.05,
    settle_ms: int = 800,
    baseline_runs: int = 2,
    knowledge: KnowledgeStore | None = None,
) -> AsyncGenerator[dict[str, Any], None]:
    """Baseline loads under the condition without its perceptual part, one shifted load per
    seed, each in its own temporary episode (internal, tagged `oracle`, deleted after its load).

    Yields as it goes: `{"type": "started"}` once Chromium runs, `{"type": "baseline", "load",
    "of", "status", "load_ms"}` per baseline load, `{"type": "run", "seed", "load_ms",
    "locator_share", "violations"}` per seed and, last, `{"type": "result", ...}`: the whole
    answer, whose `status` is `aligned`, `violations` or `unchecked` (with a `reason`: the
    unshifted page did not load or answered a non-2xx status, or the browser crashed; nothing
    can be said about the shift then). Raises a Failure only before its first item (a refused
    request, no Playwright, no Chromium)."""
    try:
        from playwright.async_api import Error as PlaywrightError
    except ImportError:
        raise MissingExtra(missing_playwright("the browser check")) from None
    await _preflight(settings, url)
    # Every load of one check is shifted against the same knowledge, even if a learn run makes
    # a new version while it runs.
    epoch = await pinned_epoch(knowledge, None) if knowledge is not None else None
    baseline_condition = BASELINES.get(condition)
    if baseline_condition is None or not seeds:
        raise Invalid(f"the browser check takes one of {sorted(BASELINES)} and a seed")
    common: dict[str, Any] = {
        **({"knowledge": epoch} if epoch is not None else {}),
        "site": site,
        "targets": dict(targets or {}),
        "ttl_s": ORACLE_TTL_S,
        "tags": {"oracle": "1"},
        "internal": True,  # the service's own: no task attempt, kept out of /reports
        **({"perceptual": perceptual} if perceptual is not None else {}),
    }
    params = dict(shift_params or {})
    baseline_names = set(shifts_for(baseline_condition))
    shifted_config = {**common, "condition": condition, "shift_params": params}
    baseline_config = {
        **common,
        "condition": baseline_condition,
        "shift_params": {name: value for name, value in params.items() if name in baseline_names},
    }
    expect_relabel = "relabel" in _validated(shifted_config).shift_names()
    _validated(baseline_config)  # both are checked before a browser starts
    created: list[str] = []

    async def load(browser: Any, config: dict[str, Any], seed: int) -> Snapshot:
        config = {**config, "seed": seed}
        episode = await store_new_episode(store, settings, config, None, knowledge)
        created.append(episode.id)

        async def tags(page_url: str) -> list[str]:
            return wrapper_tags_of(await all_events(store, episode.id), page_url)

        try:
            return await load_snapshot(
                browser,
                url,
                proxy={
                    "server": settings.proxy_server,
                    "username": episode.id,
                    "password": episode.token,
                },
                cookies=cookies,
                settle_ms=settle_ms,
                wrappers=tags,
            )
        finally:
            await store.delete_episode(episode.id)

    async def crashed(browser: Any, error: Exception, which: str) -> str | None:
        """The reason of an unchecked result when Chromium went away during a load, else None."""
        if await _alive(browser, PlaywrightError):
            return None
        return f"the browser crashed during {which}: {_first_line(error)}"

    runs: list[dict[str, Any]] = []
    reason: str | None = None
    try:
        async with _one_at_a_time:
            browser = await _kept.get(PlaywrightError)
            try:
                yield {"type": "started", "url": url, "condition": condition}
                baselines: list[Snapshot] = []
                for index in range(baseline_runs):
                    which = f"the unshifted load of {url}"
                    try:
                        snapshot = await load(browser, baseline_config, seeds[0])
                    except PlaywrightError as error:
                        failed = f"{which} failed: {_first_line(error)}"
                        reason = await crashed(browser, error, which) or failed
                        break
                    if not _loaded(snapshot):
                        reason = f"{which} {_answered(snapshot)}"
                        break
                    baselines.append(snapshot)
                    yield {
                        "type": "baseline",
                        "load": index + 1,
                        "of": baseline_runs,
                        "status": snapshot.status,
                        "load_ms": snapshot.load_ms,
                    }
                for seed in seeds if reason is None else ():
                    try:
                        shifted = await load(browser, shifted_config, seed)
                    except PlaywrightError as error:
                        reason = await crashed(browser, error, f"the load of seed {seed}")
                        if reason:
                            break
                        # The unshifted page loads and this one does not: the shift broke it.
                        failure = Violation("error", f"no load: {_first_line(error)}", "page")
                        run: dict[str, Any] = {
                            "seed": seed,
                            "load_ms": None,
                            "violations": [failure],
                        }
                    else:
                        found = compare(
                            baselines,
                            shifted,
                            tolerance_px=tolerance_px,
                            tolerance_ratio=tolerance_ratio,
                            expect_relabel=expect_relabel,
                        )
                        run = {
                            "seed": seed,
                            "load_ms": shifted.load_ms,
                            "violations": found,
                            "locator_share": locator_share(baselines[0], shifted),
                        }
                    run["violations"] = [violation.as_dict() for violation in run["violations"]]
                    runs.append(run)
                    yield {"type": "run", **run}
            finally:
                if browser.is_connected():
                    _kept.release()  # kept for the next check
                else:  # it crashed: the next check starts another
                    await _kept.close()
    finally:
        for episode_id in created:
            await store.delete_episode(episode_id)
    total = sum(len(run["violations"]) for run in runs)
    yield {
        "type": "result",
        "url": url,
        "condition": condition,
        "status": UNCHECKED if reason else of_violations(total),
        "reason": reason,
        "runs": runs,
        "violations": total,
    }


def _loaded(snapshot: Snapshot) -> bool:
    return snapshot.status is not None and 200 <= snapshot.status < 300


def _answered(snapshot: Snapshot) -> str:
    """What a load that gave no page answered, its status and what the page said: there is
    nothing to compare a shifted load with."""
    if snapshot.status is None:
        return "got no response"
    said = f"; the page says: {snapshot.text}" if snapshot.text else ""
    return f"answered {snapshot.status}, not a page that loads{said}"


async def _alive(browser: Any, error: type[Exception]) -> bool:
    """Whether Chromium still runs: it can still open a context."""
    if not browser.is_connected():
        return False
    try:
        context = await browser.new_context()
        await context.close()
    except error:
        return False
    return True


async def _preflight(settings: Settings, url: str) -> None:
    """Refuse what the proxy would refuse, and a proxy that is not listening, before a browser
    starts."""
    parsed = httpx.URL(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    forbidden = ",".join(settings.own_addresses())
    if not upstream_allowed(parsed.host, port, settings.upstream_allow, forbidden):
        raise Refused(f"the upstream {parsed.host}:{port} is not allowed through this proxy")
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(settings.public_proxy_host, settings.proxy_port), 2
        )
    except (OSError, TimeoutError):
        raise Unavailable(f"the proxy is not reachable at {settings.proxy_server}") from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


def _validated(config: dict[str, Any]) -> EpisodeConfig:
    try:
        return EpisodeConfig.model_validate(config)
    except ValidationError as error:
        raise Invalid(validation_message(error)) from None


def _first_line(error: Exception) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0]


__all__ = ["BASELINES", "browser_check", "wrapper_tags_of"]
