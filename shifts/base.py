"""The one interface every shift implements, and the registry of shifts by name."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ValidationError

from shifts.document import HtmlDocument
from shifts.shift_context import ShiftContext

ShiftKind = Literal["contextual", "perceptual", "execution"]


class NoParams(BaseModel):
    model_config = {"extra": "forbid"}


class Shift(Protocol):
    """A named, parameterised transform of one HTML document.

    `apply` must be deterministic in (document, context): every random choice comes from
    shifts.rng keyed by the episode seed, so the same page in the same episode gives the same bytes.
    """

    name: ClassVar[str]
    kind: ClassVar[ShiftKind]
    description: ClassVar[str]
    Params: ClassVar[type[BaseModel]]
    # Whether it may decide by a `data-*` attribute's value beyond the names its document
    # declares (`HtmlDocument.data_attributes_tested`): a next load whose number in such a
    # value differs is then shifted afresh (`FrozenDocument.with_values_swapped`).
    reads_data_values: ClassVar[bool]

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument: ...


class UnknownShift(KeyError):
    pass


_REGISTRY: dict[str, Shift] = {}


def register(shift: Shift) -> Shift:
    _REGISTRY[shift.name] = shift
    return shift


def get_shift(name: str) -> Shift:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownShift(name) from None


def all_shifts() -> list[Shift]:
    return list(_REGISTRY.values())


def validate_params(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Validated, defaults-filled params for shift `name`; raises UnknownShift/ValidationError."""
    return get_shift(name).Params.model_validate(params).model_dump()


__all__ = [
    "NoParams",
    "Shift",
    "ShiftKind",
    "UnknownShift",
    "ValidationError",
    "all_shifts",
    "get_shift",
    "register",
    "validate_params",
]
