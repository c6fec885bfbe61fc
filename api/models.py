"""Request and response bodies of the admin API."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from proxy.episode import EPISODE_ID, Condition, EpisodeConfig, Origin, Regime, Seed
from shifts.execution import RegimeParams


class EpisodeCreate(EpisodeConfig):
    id: str | None = Field(
        None,
        pattern=EPISODE_ID.pattern,
        description="Episode id, 1-64 of A-Z a-z 0-9 _ . -; generated (unguessable) if omitted",
    )


def unset() -> Any:
    """A PATCH field that may be left out but is never null (`exclude_unset` drops it)."""
    return Field(None, validate_default=False)


class EpisodePatch(BaseModel):
    """Fields to change; anything left out keeps its value. The result is validated as a whole.

    Only `site` and `shifts` take null (back to matching by host / the condition's shifts); the
    other fields have no null meaning, so the schema does not offer one.
    """

    model_config = {"extra": "forbid"}
    condition: Condition = unset()
    regime: Regime = unset()
    regime_params: RegimeParams = unset()
    seed: Seed = unset()
    site: str | None = None
    shifts: list[str] | None = None
    shift_params: dict[str, dict[str, Any]] = unset()
    targets: dict[Origin, Origin] = unset()
    tags: dict[str, str] = unset()


class AgentEvent(BaseModel):
    """An event reported by agent code (skill call, skill failure, task result, steps...)."""

    model_config = {"extra": "allow"}
    type: str = Field(..., min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")


class ListenerUpdate(BaseModel):
    model_config = {"extra": "forbid"}
    default_episode: str | None = Field(
        ..., description="Episode that unbound requests on this listener fall back to; null clears"
    )
