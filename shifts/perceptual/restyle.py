"""Restyling: colours, fonts, spacing and shapes change through one injected stylesheet.

Nothing is hidden, moved out of view or resized to nothing: the stylesheet only recolours
links and buttons, swaps the font family, and nudges spacing and corner radii, so every
control stays visible and clickable. The choices come from the episode seed.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from shifts.base import ShiftKind, register
from shifts.context import ShiftContext
from shifts.document import HtmlDocument
from shifts.rng import rng_for

FONTS = (
    "'DejaVu Sans', Verdana, sans-serif",
    "'DejaVu Serif', Georgia, serif",
    "'Liberation Sans', Arial, sans-serif",
    "'Liberation Serif', 'Times New Roman', serif",
    "Tahoma, 'DejaVu Sans Condensed', sans-serif",
)


class RestyleParams(BaseModel):
    model_config = {"extra": "forbid"}
    fonts: bool = Field(True, description="Swap the font family")
    colors: bool = Field(True, description="Recolour links and buttons")
    spacing: bool = Field(True, description="Change letter spacing, line height, corner radii")


def stylesheet(ctx: ShiftContext, params: RestyleParams) -> str:
    rng = rng_for(ctx.seed, "restyle")
    rules = []
    if params.fonts:
        rules.append(
            f"body,button,input,select,textarea{{font-family:{rng.choice(FONTS)}!important}}"
        )
    if params.colors:
        # Hue rotation keeps each colour's lightness, so contrast with the background (and
        # with it legibility) survives whatever the site's palette is.
        rules.append(f"a{{filter:hue-rotate({rng.randrange(60, 300)}deg)}}")
        rules.append(
            "button,[type=submit],[type=button],[role=button]"
            f"{{filter:hue-rotate({rng.randrange(60, 300)}deg)}}"
        )
    if params.spacing:
        rules.append(f"body{{letter-spacing:{rng.choice((0.01, 0.02, 0.03))}em}}")
        rules.append(f"p,li{{line-height:{rng.choice((1.5, 1.6, 1.7))}}}")
        rules.append(
            "button,[type=submit],[type=button],[role=button],input,select"
            f"{{border-radius:{rng.choice((0, 3, 8, 12))}px!important}}"
        )
    return "".join(rules)


class Restyle:
    name: ClassVar[str] = "restyle"
    kind: ClassVar[ShiftKind] = "perceptual"
    description: ClassVar[str] = (
        "Inject a stylesheet (with the CSP nonce) that swaps fonts, recolours links and "
        "buttons, and changes spacing and corner radii."
    )
    Params: ClassVar[type[BaseModel]] = RestyleParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        if not ctx.is_navigation:
            return doc  # fragments inherit the stylesheet of the page they land in
        css = stylesheet(ctx, RestyleParams.model_validate(ctx.params_for(self.name)))
        if css:
            doc.inject_head(f"<style{ctx.nonce_attr()}>{css}</style>")
            doc.notes[self.name] = {"rules": css.count("}")}
        return doc


register(Restyle())
