"""Request and response bodies of the admin API."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StrictBool, StrictFloat, StrictInt, model_validator

from proxy.episode import Condition, EpisodeConfig, EpisodeId, Origin, Regime, Seed
from shifts.conditions import ExecutionSet, PerceptualSet
from shifts.execution import RegimeParams

# The largest integer every JSON reader keeps exact (a double's 53 bits): a count past it is
# no count an agent made.
MAX_EXACT_INT = 2**53 - 1


class EpisodeCreate(EpisodeConfig):
    id: EpisodeId | None = Field(
        None,
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
    perceptual: PerceptualSet = unset()
    execution: ExecutionSet = unset()
    regime: Regime = unset()
    regime_params: RegimeParams = unset()
    seed: Seed = unset()
    site: str | None = None
    shifts: list[str] | None = None
    shift_params: dict[str, dict[str, Any]] = unset()
    targets: dict[Origin, Origin] = unset()
    tags: dict[str, str] = unset()


AGENT_EVENT_MAX_FIELDS = 32
MAX_TEXT = 2048
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Name = Annotated[str, Field(min_length=1, max_length=256)]
# Fields an event gets from the service, never from its poster.
RESERVED_FIELDS = frozenset({"id", "ts", "source"})


class _AgentEvent(BaseModel):
    """Fields beyond the declared ones are free labels (a skill's arguments, a run's notes):
    any JSON value of at most 2,048 characters once encoded; at most 32 fields."""

    model_config = {"extra": "allow"}

    @model_validator(mode="after")
    def _labels_are_scalars(self) -> _AgentEvent:
        extra = self.model_extra or {}
        reserved = sorted(RESERVED_FIELDS & set(extra))
        if reserved:
            raise ValueError(f"{reserved} are set by the service, not by the poster")
        if len(extra) + len(type(self).model_fields) > AGENT_EVENT_MAX_FIELDS:
            raise ValueError(f"an event may have at most {AGENT_EVENT_MAX_FIELDS} fields")
        for key, value in extra.items():
            if len(json.dumps(value)) > MAX_TEXT:
                raise ValueError(f"{key}: at most {MAX_TEXT} characters once encoded as JSON")
        return self


class TaskResult(_AgentEvent):
    """How the task ended: one per task attempt (the last one posted counts)."""

    type: Literal["task_result"]
    success: StrictBool
    steps: StrictInt | None = Field(
        None, ge=0, le=MAX_EXACT_INT, description="steps the agent took"
    )


class _SkillEvent(_AgentEvent):
    """A skill's call or failure. It names its skill: SFR pairs each failure with a call of the
    same skill (api/analysis/outcomes.py), so an unnamed one could be counted against nothing."""

    skill: Name

    @model_validator(mode="before")
    @classmethod
    def _names_its_skill(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("skill") is None:
            kind = data.get("type", "skill event")
            raise ValueError(
                f'a {kind} names its skill ("skill": "search"): the skill failure rate '
                "counts failures of the skills that were called"
            )
        return data


class SkillCall(_SkillEvent):
    type: Literal["skill_call"]


class SkillFailure(_SkillEvent):
    """A called skill failed. One with no unfailed call of its skill before it counts as a
    call as well (the skill ran and failed), so SFR never exceeds 1."""

    type: Literal["skill_failure"]
    error: Text | None = None
    target: Text | None = Field(
        None, description="what the failed skill looked for: a selector, XPath, role+name or text"
    )


class Step(_AgentEvent):
    type: Literal["step"]
    action: Text | None = None
    duration_ms: StrictInt | StrictFloat | None = Field(None, ge=0, le=MAX_EXACT_INT)


class Note(_AgentEvent):
    """A free annotation of the run (kept in the log, counted in nothing)."""

    type: Literal["note"]
    text: Text = ""


# What agents may post; the proxy's and the page runtime's own event types are refused.
AgentEvent = Annotated[
    TaskResult | SkillCall | SkillFailure | Step | Note, Field(discriminator="type")
]
AGENT_EVENT_TYPES = ("task_result", "skill_call", "skill_failure", "step", "note")


class ListenerUpdate(BaseModel):
    model_config = {"extra": "forbid"}
    default_episode: str | None = Field(
        ..., description="Episode that unbound requests on this listener fall back to; null clears"
    )
