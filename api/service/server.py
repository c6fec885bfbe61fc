"""One asyncio process: mitmproxy (regular + reverse listeners) and the admin API side by side.

uvicorn normally installs its own SIGINT/SIGTERM handlers, which stop uvicorn but leave
mitmproxy running; here the process takes the signals itself and stops both.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Coroutine, Iterator
from typing import Any

import uvicorn
from mitmproxy import options
from mitmproxy.addons import (
    block,
    core,
    disable_h2c,
    errorcheck,
    next_layer,
    proxyserver,
    tlsconfig,
    update_alt_svc,
)
from mitmproxy.master import Master

from api.app import create_app
from api.demo.shop import demo_app, register_profile
from api.oracle.run import close_browser as close_oracle_browser
from api.service.settings import Settings
from proxy import build_addons
from proxy.knowledge import KnowledgeLookup, Learner, open_knowledge
from proxy.knowledge.store import KnowledgeStoreUnavailable
from proxy.options import OPTIONS
from proxy.recording_dir import Recording
from proxy.store import EpisodeStore, StoreUnavailable, open_store
from proxy.store.archiving import ArchivingStore

logger = logging.getLogger(__name__)


class StartupFailed(RuntimeError):
    """A part of the process (proxy listener, API, demo site) could not start."""


async def _guarded(name: str, part: Coroutine[Any, Any, None]) -> None:
    # mitmproxy and uvicorn both sys.exit() when they cannot bind; inside a task that would
    # tear the loop down without stopping the other parts, so turn it into an exception.
    try:
        await part
    except SystemExit as exit_:
        raise StartupFailed(f"{name} failed to start (exit status {exit_.code})") from None


class _Uvicorn(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # Signals belong to serve(): it stops the proxy and the API together.
        yield


def mitmproxy_addons() -> list[object]:
    """The part of mitmproxy's default addon set this service uses: the proxy server, layer
    selection, TLS interception, the core options, no h2c upgrades, Alt-Svc rewriting for
    reverse listeners, and the refusal of non-local clients on a wildcard bind. mitmproxy runs
    every hook of every loaded addon on every request: the other two dozen (playback,
    map-local, sticky cookies, scripts, flow saving, onboarding, its own proxy auth...) would
    cost every request for nothing this service offers."""
    return [
        core.Core(),
        block.Block(),
        disable_h2c.DisableH2C(),
        proxyserver.Proxyserver(),
        next_layer.NextLayer(),
        tlsconfig.TlsConfig(),
        update_alt_svc.UpdateAltSvc(),
    ]


def make_master(
    settings: Settings,
    store: EpisodeStore,
    recording: Recording | None = None,
    knowledge: KnowledgeLookup | None = None,
) -> Master:
    opts = options.Options(
        mode=[listener.mode for listener in settings.listeners()],
        confdir=settings.confdir,
    )
    master = Master(opts)
    master.addons.add(*mitmproxy_addons())
    master.addons.add(*build_addons(store, recording, knowledge))
    # Exit (instead of running on without a listener) when a port cannot be bound.
    master.addons.add(errorcheck.ErrorCheck(repeat_errors_on_stderr=True))
    opts.update(
        # Connect upstream only once the hooks have chosen the upstream (contextual shift).
        connection_strategy="lazy",
        # A tunnel's bytes are HTTP or TLS, or nothing: as raw TCP no hook sees them (no
        # binding, no shift, no guard), which would pass unshifted pages and admin APIs.
        rawtcp=False,
        # Chunked HTML past the rewrite limit is streamed rather than buffered without bound.
        stream_large_bodies=str(settings.max_rewrite_bytes + 1),
        ssl_insecure=settings.upstream_insecure,
        ssl_verify_upstream_trusted_ca=settings.upstream_ca,
        # Every option a setting carries (proxy.options), of the addons this process loaded.
        **{
            option.name: getattr(settings, option.setting)
            for option in OPTIONS.values()
            if option.setting is not None and option.name in opts
        },
        # The options the service derives.
        ss_forbidden_upstreams=",".join(settings.own_addresses()),
        ss_default_listeners=",".join(
            listener.name for listener in settings.listeners() if listener.takes_default
        ),
    )
    return master


def _server(app: object, host: str, port: int, log_level: str) -> _Uvicorn:
    config = uvicorn.Config(
        app,  # type: ignore[arg-type]
        host=host,
        port=port,
        log_level=log_level,
        lifespan="off",
        timeout_graceful_shutdown=1,
        access_log=False,
    )
    return _Uvicorn(config)


async def serve(settings: Settings) -> None:
    store = open_store(settings.redis_url, settings.key_prefix)
    try:
        knowledge_store = open_knowledge(
            settings.redis_url, settings.knowledge_path, settings.key_prefix
        )
    except KnowledgeStoreUnavailable as unusable:
        # Checked with the settings; this is what they cannot see (root passes every
        # permission check, and /proc refuses it all the same) or what changed since.
        raise StartupFailed(f"{settings.knowledge_path_setting}: {unusable}") from None
    knowledge = KnowledgeLookup(knowledge_store, Learner())
    try:
        recording = Recording(settings.record_dir) if settings.record_dir else None
    except OSError as unusable:  # checked with the settings; this is what changed since
        raise StartupFailed(f"{settings.setting('record_dir')}: {unusable}") from None
    if recording is not None:
        store = ArchivingStore(store, recording)
    master = make_master(settings, store, recording, knowledge)
    servers = [
        _server(
            create_app(store, settings, recording, knowledge),
            settings.api_host,
            settings.api_port,
            settings.log_level,
        )
    ]
    if settings.demo:
        register_profile(settings.demo_port, settings.demo_port + 1)
        servers.append(_server(demo_app("source"), "127.0.0.1", settings.demo_port, "warning"))
        servers.append(_server(demo_app("target"), "127.0.0.1", settings.demo_port + 1, "warning"))

    def stop() -> None:
        if not master.should_exit.is_set():
            logger.info("stopping")
        for server in servers:
            server.should_exit = True
        master.shutdown()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)

    api = settings.api_url
    logger.info(
        "starting: %s, admin API %s (admin page %s/ui, OpenAPI %s/docs), %s%s",
        ", ".join(listener.describe() for listener in settings.listeners()),
        api,
        api,
        api,
        f"record directory {settings.record_dir}" if settings.record_dir else "no record directory",
        f", demo shop http://127.0.0.1:{settings.demo_port}" if settings.demo else "",
    )
    # Everything built so far (mitmproxy, FastAPI, lxml, the profiles, the shifts' tables)
    # lives as long as the process: out of the collector's sight, a full collection while
    # serving no longer walks it. So does Playwright's protocol (the browser learner's, the
    # oracle's): imported now, the 3,000 validators it builds at import are frozen with the
    # rest; imported at the first learn, every full collection walked them
    # (proxy/collector.py runs one after every few dozen page loads).
    if settings.redis_url:
        try:
            await store.ping()
        except StoreUnavailable as unreachable:  # (it serves all the same, and recovers)
            logger.warning(
                "%s: the episode store is not reachable yet; requests answer 503 until it is",
                unreachable,
            )
    if settings.learn == "browser":
        with contextlib.suppress(ImportError):  # (not installed: the learner says so)
            import playwright.async_api  # noqa: F401
    gc.collect()
    gc.freeze()
    # (mitmproxy says which of its listeners failed in a log line before; the last line names
    # them all, so a port in use is named where a user reads first.)
    ports = ", ".join(listener.name for listener in settings.listeners())
    proxy = f"the proxy on port{'s' if ',' in ports else ''} {ports}"
    tasks = [asyncio.create_task(_guarded(proxy, master.run()))]
    tasks += [
        asyncio.create_task(
            _guarded(f"the HTTP server on port {server.config.port}", server.serve())
        )
        for server in servers
    ]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        stop()  # whichever part ended first (a signal, or a failure to bind), end the rest
        await asyncio.wait(tasks, timeout=5)
        for task in done:
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error
    finally:
        await close_oracle_browser()
        await store.close()
        await knowledge.store.close()
