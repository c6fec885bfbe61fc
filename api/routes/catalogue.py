"""Catalogue and operations routes: conditions, shifts, sites, listeners, health, metrics, CA."""

from __future__ import annotations

import time
from typing import Any

import mitmproxy.version
from fastapi import APIRouter
from fastapi.responses import JSONResponse, PlainTextResponse

import sites
from api.dependencies import ServicesDep, SettingsDep, StoreDep
from api.errors import ApiError
from api.models import ListenerUpdate
from api.service.ca import load_ca
from api.version import version
from proxy import metrics
from proxy.episode import Episode
from proxy.store import StoreUnavailable
from shifts import CONDITIONS, all_shifts

router = APIRouter()


@router.get("/conditions", tags=["catalogue"])
async def conditions() -> dict[str, Any]:
    return {
        "conditions": [{"name": name, "shifts": list(names)} for name, names in CONDITIONS.items()]
    }


@router.get("/shifts", tags=["catalogue"])
async def shifts() -> dict[str, Any]:
    return {
        "shifts": [
            {
                "name": shift.name,
                "kind": shift.kind,
                "description": shift.description,
                "params_schema": shift.Params.model_json_schema(),
            }
            for shift in all_shifts()
        ]
    }


@router.get("/sites", tags=["catalogue"])
async def site_profiles() -> dict[str, Any]:
    return {
        "sites": [
            {
                "name": profile.name,
                "description": profile.description,
                "host_patterns": list(profile.host_patterns),
                "targets": profile.targets,
                "protected_selectors": list(profile.protected_selectors),
                "popup_paths": list(profile.popup_paths),
            }
            for profile in sites.PROFILES.values()
        ]
    }


@router.get("/listeners", tags=["listeners"])
async def listeners(store: StoreDep, settings: SettingsDep) -> dict[str, Any]:
    return {
        "listeners": [
            {
                "name": listener.name,
                "kind": listener.kind,
                "mode": listener.mode,
                "upstream": listener.upstream,
                "takes_default": listener.takes_default,
                "default_episode": (
                    await store.get_listener_default(listener.name)
                    if listener.takes_default
                    else None
                ),
            }
            for listener in settings.listeners()
        ]
    }


@router.put("/listeners/{name}", tags=["listeners"])
async def set_listener(
    name: str, body: ListenerUpdate, store: StoreDep, settings: SettingsDep
) -> dict[str, Any]:
    """Bind unbound requests on a listener to an episode (for desktop browsers).

    Only on the desktop listener (`--desktop-proxy`) and reverse listeners: on the agents'
    listener a default would capture every agent's browser before it sends its credentials."""
    listener = next((item for item in settings.listeners() if item.name == name), None)
    if listener is None:
        raise ApiError(404, f"no listener {name!r}")
    if not listener.takes_default:
        raise ApiError(
            409,
            f"listener {name} is the agents' proxy listener and never takes a default episode "
            "(it would bind agents' browsers before they send credentials); start the service "
            "with --desktop-proxy HOST:PORT and set the default there",
        )
    expires_at = int(time.time()) + 3600
    if body.default_episode is not None:
        record = await store.get_episode(body.default_episode)
        if record is None:
            raise ApiError(404, f"episode {body.default_episode!r} not found")
        expires_at = Episode.model_validate(record).expires_at
    await store.set_listener_default(name, body.default_episode, expires_at)
    return {"name": name, "default_episode": body.default_episode}


@router.get("/health", tags=["operations"])
async def health(services: ServicesDep) -> JSONResponse:
    store = services.store
    try:
        await store.ping()
        store_state = {"ok": True, "kind": type(store).__name__}
    except StoreUnavailable as error:
        store_state = {"ok": False, "kind": type(store).__name__, "error": str(error)}
    body = {
        "status": "ok" if store_state["ok"] else "degraded",
        "store": store_state,
        "uptime_s": round(time.time() - services.started_at, 3),
    }
    return JSONResponse(body, status_code=200 if store_state["ok"] else 503)


@router.get("/version", tags=["operations"])
async def get_version() -> dict[str, Any]:
    return {"version": version(), "mitmproxy": mitmproxy.version.VERSION}


@router.get("/metrics", tags=["operations"], response_class=PlainTextResponse)
async def get_metrics(services: ServicesDep) -> str:
    store = services.store
    try:
        await store.ping()
        store_up = 1
        episodes = len(await store.list_episodes())
    except StoreUnavailable:
        store_up, episodes = 0, 0
    return metrics.render(
        {
            "store_up": store_up,
            "episodes": episodes,
            "uptime_seconds": round(time.time() - services.started_at, 3),
        }
    )


@router.get("/ca", tags=["operations"])
async def ca(settings: SettingsDep) -> dict[str, Any]:
    """The CA that signs intercepted HTTPS: trust it, or pass its SPKI hash to Chromium."""
    authority = load_ca(settings.confdir)
    if authority is None:
        raise ApiError(404, f"no CA certificate under {settings.confdir} yet")
    return {
        "path": str(authority.path),
        "pem": authority.pem,
        "spki_sha256": authority.spki_sha256,
        "browsers": authority.browser_setup(settings.agent_proxy_server),
    }
