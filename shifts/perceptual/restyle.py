"""Restyling (the extended perceptual set, beyond the benchmark): controls change colour.

Only colours: the text, border and background colours of links and buttons turn by one hue
angle drawn from the episode seed, each from the control's own computed colours, so contrast
with their surroundings (lightness, saturation) stays. Nothing changes size, place or
visibility, and nothing that holds an image (img, svg, picture, canvas, video, a background
image) is touched, so images render the same pixels. The client runtime applies it, because
only the browser knows a control's computed colours; it restyles controls rendered later too.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from shifts.base import ShiftKind, register
from shifts.document import HtmlDocument
from shifts.perceptual.relabel import runtime_rules
from shifts.rng import rng_for
from shifts.shift_context import ShiftContext


class RestyleParams(BaseModel):
    model_config = {"extra": "forbid"}
    min_angle: int = Field(60, ge=1, le=359, description="Smallest hue turn, in degrees")
    max_angle: int = Field(300, ge=1, le=359, description="Largest hue turn, in degrees")


def hue_angle(ctx: ShiftContext, params: RestyleParams) -> int:
    low, high = sorted((params.min_angle, params.max_angle))
    return rng_for(ctx.seed, "restyle").randint(low, high)


class Restyle:
    name: ClassVar[str] = "restyle"
    reads_data_values: ClassVar[bool] = False  # (it adds a stylesheet)
    kind: ClassVar[ShiftKind] = "perceptual"
    description: ClassVar[str] = (
        "Turn the text, border and background colours of links and buttons by a seeded hue "
        "angle (in the page's runtime, from each control's own colours); sizes, places and "
        "images stay."
    )
    Params: ClassVar[type[BaseModel]] = RestyleParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        if not ctx.is_navigation:
            return doc  # a fragment lands in a page whose runtime restyles it
        angle = hue_angle(ctx, RestyleParams.model_validate(ctx.params_for(self.name)))
        rules = doc.runtime.setdefault("r", {})
        assert isinstance(rules, dict)
        rules.update(runtime_rules(ctx), restyle={"angle": angle})
        doc.notes[self.name] = {"hue_angle": angle}
        return doc


register(Restyle())
