"""What the routes are given: the process's services, injected by FastAPI.

`create_app` puts one `Services` on the application; a route names what it needs by type in its
signature (`store: StoreDep`), and a test can replace any of them with
`app.dependency_overrides`. No route builds a service of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from api.episodes.evidence import Evidence
from api.service.settings import Settings
from proxy.knowledge import KnowledgeLookup
from proxy.store import EpisodeStore


@dataclass(frozen=True)
class Services:
    store: EpisodeStore
    settings: Settings
    knowledge: KnowledgeLookup
    evidence: Evidence
    started_at: float
    # The admin page's session secret, new at every start (api/routes/ui.py).
    ui_session: str = field(repr=False)


def services(request: Request) -> Services:
    found: Services = request.app.state.services
    return found


def get_store(request: Request) -> EpisodeStore:
    return services(request).store


def get_settings(request: Request) -> Settings:
    return services(request).settings


def get_knowledge(request: Request) -> KnowledgeLookup:
    return services(request).knowledge


def get_evidence(request: Request) -> Evidence:
    return services(request).evidence


ServicesDep = Annotated[Services, Depends(services)]
StoreDep = Annotated[EpisodeStore, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
KnowledgeDep = Annotated[KnowledgeLookup, Depends(get_knowledge)]
EvidenceDep = Annotated[Evidence, Depends(get_evidence)]
