"""Request and response bodies of the admin API."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, field_validator

from proxy.episode import EPISODE_ID, EpisodeConfig


class EpisodeCreate(EpisodeConfig):
    id: str | None = Field(None, description="Episode id; generated (unguessable) if omitted")

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        if value is not None and not EPISODE_ID.match(value):
            raise ValueError("id must be 1-64 characters of A-Z a-z 0-9 _ . -")
        return value


class EpisodePatch(BaseModel):
    """Fields to change; anything left out keeps its value. The result is validated as a whole."""

    model_config = {"extra": "forbid"}
    condition: str | None = None
    regime: str | None = None
    regime_params: dict[str, Any] | None = None
    seed: int | None = None
    site: str | None = None
    shifts: list[str] | None = None
    shift_params: dict[str, dict[str, Any]] | None = None
    targets: dict[str, str] | None = None
    tags: dict[str, str] | None = None


class AgentEvent(BaseModel):
    """An event reported by agent code (skill call, skill failure, task result, steps...)."""

    model_config = {"extra": "allow"}
    type: str = Field(..., min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")


class ListenerUpdate(BaseModel):
    model_config = {"extra": "forbid"}
    default_episode: str | None = Field(
        ..., description="Episode that unbound requests on this listener fall back to; null clears"
    )
