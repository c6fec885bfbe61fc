"""The benchmark's six conditions and the shifts each one applies, in pipeline order.

The perceptual shift is, by default, the benchmark's own: locator drift on the same objects
(ids, classes, test hooks and DOM structure change; placement and labels stay). Relabel,
restyle and relayout go beyond the benchmark and apply only when an episode asks for the
extended set.
"""

from __future__ import annotations

from typing import Literal

PerceptualSet = Literal["benchmark", "extended"]
ExecutionSet = Literal["benchmark", "extended"]  # the popups of -Exec (shifts.interruptions)
PERCEPTUAL_SETS: dict[str, tuple[str, ...]] = {
    "benchmark": ("locator_drift",),
    "extended": ("relabel", "locator_drift", "restyle", "relayout"),
}
CONDITIONS: dict[str, tuple[str, ...]] = {
    "Src": (),
    "Src-Perc": ("perceptual",),
    "Src-Exec": ("popup",),
    "Tgt": ("contextual",),
    "Tgt-Perc": ("contextual", "perceptual"),
    "Tgt-Exec": ("contextual", "popup"),
}

# Contextual first (it decides which page we are looking at), then perceptual, then execution.
KIND_ORDER = {"contextual": 0, "perceptual": 1, "execution": 2}


def canonical_condition(name: str) -> str:
    """A condition in the benchmark's own spelling too (`src-perc`, `TGT-EXEC`)."""
    for condition in CONDITIONS:
        if condition.lower() == name.strip().lower():
            return condition
    raise KeyError(name)


def shifts_for(condition: str, perceptual: PerceptualSet = "benchmark") -> tuple[str, ...]:
    """The shift names a condition applies; KeyError for an unknown condition."""
    names: list[str] = []
    for name in CONDITIONS[condition]:
        names += PERCEPTUAL_SETS[perceptual] if name == "perceptual" else (name,)
    return tuple(names)
