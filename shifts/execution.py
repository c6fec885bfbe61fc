"""Execution shift: a popup that blocks the skill at run time, under a regime.

The decision for a page load is pure (`plan_popup`): eligibility, the popup kind and, under
`random`, the Bernoulli draw and delay, all from the episode RNG keyed by the load index. The one
stateful part, `once`'s "already shown" flag, is the proxy's: it claims the flag atomically in
the store before it lets the plan through.
"""

from __future__ import annotations

import fnmatch
from typing import ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, model_validator

from shifts.base import ShiftKind, register
from shifts.document import HtmlDocument
from shifts.popups import KINDS, TEMPLATES, render_popup
from shifts.rng import rng_for, token_for
from shifts.shift_context import PopupPlan, ShiftContext

Regime = Literal["once", "multiple", "random"]
REGIMES: tuple[Regime, ...] = ("once", "multiple", "random")


class RegimeParams(BaseModel):
    model_config = {"extra": "forbid"}
    p: float = Field(
        0.5, ge=0.0, le=1.0, strict=True, description="random: probability a load gets a popup"
    )
    min_ms: int = Field(
        0, ge=0, le=600_000, strict=True, description="random: shortest delay before showing"
    )
    max_ms: int = Field(
        5000, ge=0, le=600_000, strict=True, description="random: longest delay before showing"
    )

    @model_validator(mode="after")
    def _ordered(self) -> RegimeParams:
        if self.min_ms > self.max_ms:
            raise ValueError("min_ms must not exceed max_ms")
        return self


class PopupParams(BaseModel):
    model_config = {"extra": "forbid"}
    kinds: list[str] = Field(
        default_factory=list,
        description=f"Popup kinds to draw from ({', '.join(KINDS)}); empty means all",
    )
    class_prefix: str = Field(
        "",
        pattern=r"^([a-z][a-z0-9-]{0,23})?$",
        description="Class-name root of popup markup; empty means a neutral seeded token",
    )
    paths: list[str] = Field(
        default_factory=list,
        description="URL path globs where popups may appear; empty means the site's default",
    )

    @model_validator(mode="after")
    def _known_kinds(self) -> PopupParams:
        unknown = sorted(set(self.kinds) - set(TEMPLATES))
        if unknown:
            raise ValueError(f"unknown popup kinds {unknown}; known: {sorted(TEMPLATES)}")
        return self


def draw_random(seed: int, load_index: int, params: RegimeParams) -> tuple[bool, int]:
    """The `random` regime's draw for one load: (fires, delay in ms). Pure in its inputs."""
    rng = rng_for(seed, "regime-random", load_index)
    fires = rng.random() < params.p
    delay = rng.randint(params.min_ms, params.max_ms)
    return fires, delay


def is_eligible(ctx: ShiftContext) -> bool:
    """Whether this response may carry a popup: a navigation document on an eligible path."""
    if not ctx.is_navigation:
        return False
    params = PopupParams.model_validate(ctx.params_for(Popup.name))
    patterns = params.paths or list(ctx.site.popup_paths)
    path = urlsplit(ctx.url).path or "/"
    return not patterns or any(fnmatch.fnmatch(path, pattern) for pattern in patterns)


def plan_popup(ctx: ShiftContext) -> PopupPlan | None:
    """The popup this load should show under the episode's regime, before `once` is claimed."""
    if not is_eligible(ctx) or ctx.load_index is None:
        return None
    params = PopupParams.model_validate(ctx.params_for(Popup.name))
    kinds = sorted(params.kinds or TEMPLATES)
    kind = rng_for(ctx.seed, "popup-kind", ctx.load_index).choice(kinds)
    delay = 0
    if ctx.regime == "random":
        fires, delay = draw_random(
            ctx.seed, ctx.load_index, RegimeParams.model_validate(ctx.regime_params)
        )
        if not fires:
            return None
    return PopupPlan(kind=kind, delay_ms=delay, regime=ctx.regime)


class Popup:
    name: ClassVar[str] = "popup"
    kind: ClassVar[ShiftKind] = "execution"
    description: ClassVar[str] = (
        "Inject the client runtime into navigation documents; it shows a blocking popup per "
        "the episode's regime (once / multiple / random)."
    )
    Params: ClassVar[type[BaseModel]] = PopupParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        if not is_eligible(ctx):
            return doc
        plan: dict[str, object] | None = None
        if ctx.popup is not None:
            params = PopupParams.model_validate(ctx.params_for(self.name))
            plan = {
                "kind": ctx.popup.kind,
                "delay": ctx.popup.delay_ms,
                "regime": ctx.popup.regime,
                **render_popup(ctx.popup.kind, ctx.seed, ctx.site.popup_theme, params.class_prefix),
            }
            if ctx.popup.regime == "once":
                # Client-side guard: reload, bfcache, SPA route changes and other tabs of the
                # origin never show it again. A reset (new generation) gets a fresh key.
                plan["guard"] = "_" + token_for(
                    ctx.seed, "once-guard", ctx.episode_id, ctx.generation, length=8
                )
            doc.notes[self.name] = {"kind": ctx.popup.kind, "delay_ms": ctx.popup.delay_ms}
        doc.runtime["p"] = plan
        return doc


register(Popup())
