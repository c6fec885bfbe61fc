"""The benchmark's six conditions and the shifts each one applies, in pipeline order."""

from __future__ import annotations

PERCEPTUAL = ("relabel", "locator_drift", "restyle", "relayout")
CONDITIONS: dict[str, tuple[str, ...]] = {
    "Src": (),
    "Src-Perc": PERCEPTUAL,
    "Src-Exec": ("popup",),
    "Tgt": ("contextual",),
    "Tgt-Perc": ("contextual", *PERCEPTUAL),
    "Tgt-Exec": ("contextual", "popup"),
}

# Contextual first (it decides which page we are looking at), then perceptual, then execution.
KIND_ORDER = {"contextual": 0, "perceptual": 1, "execution": 2}


def shifts_for(condition: str) -> tuple[str, ...]:
    """The shift names a condition applies; KeyError for an unknown condition."""
    return CONDITIONS[condition]
