"""Execution shift: a popup that blocks the skill at run time, under a regime.

The decision for a page load is pure (`plan_popup`): eligibility, the popup kind and, under
`random`, the Bernoulli draw and delay, all from the episode RNG keyed by the load index. The one
stateful part, `once`'s "already shown" flag, is the proxy's: it claims the flag atomically in
the store before it lets the plan through.
"""

from __future__ import annotations

import fnmatch
import functools
import json
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, model_validator

from shifts.base import ShiftKind, register
from shifts.document import HtmlDocument
from shifts.interruptions import HOSTS, RANGES, TRIGGERS, pairs, plan_interruption
from shifts.popups import ALL_TEMPLATES, EXTENDED_KINDS, KINDS, TEMPLATES, render_popup
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


def _range(name: str, unit: str, what: str) -> Any:
    low, high = RANGES[name]
    return Field(
        None,
        description=f"extended set: {what}, drawn per load from [low, high] {unit} "
        f"(default [{low}, {high}])",
    )


class PopupParams(BaseModel):
    model_config = {"extra": "forbid"}
    kinds: list[str] = Field(
        default_factory=list,
        description=f"Popup kinds to draw from ({', '.join(KINDS)}; the extended set adds "
        f"{', '.join(k for k in EXTENDED_KINDS if k not in KINDS)}); empty means all",
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
    triggers: list[str] = Field(
        default_factory=list,
        description=f"extended set: when a popup shows ({', '.join(TRIGGERS)}); empty means all",
    )
    hosts: list[str] = Field(
        default_factory=list,
        description=f"extended set: where a popup lives ({', '.join(HOSTS)}; native dialogs are "
        "the browser's); empty means all",
    )
    delay_ms: tuple[int, int] | None = _range("delay_ms", "ms", "the `delay` trigger's wait")
    scroll_px: tuple[int, int] | None = _range(
        "scroll_px", "px", "the `scroll` trigger's depth (or the page's end, if nearer)"
    )
    toast_ms: tuple[int, int] | None = _range("toast_ms", "ms", "how long a toast stays")
    absorb_ms: tuple[int, int] | None = _range(
        "absorb_ms", "ms", "how long a click absorber absorbs"
    )

    @model_validator(mode="after")
    def _known_choices(self) -> PopupParams:
        for name, values, known in (
            ("popup kinds", self.kinds, ALL_TEMPLATES),
            ("triggers", self.triggers, TRIGGERS),
            ("hosts", self.hosts, HOSTS),
        ):
            unknown = sorted(set(values) - set(known))
            if unknown:
                raise ValueError(f"unknown {name} {unknown}; known: {sorted(known)}")
        for name in RANGES:
            span = getattr(self, name)
            if span is not None and not 0 <= span[0] <= span[1] <= 600_000:
                raise ValueError(f"{name} must be [low, high] with 0 <= low <= high <= 600000")
        if not pairs(self.kinds, self.hosts):
            raise ValueError(f"none of the kinds {self.kinds} can be shown in hosts {self.hosts}")
        return self

    def extended_only(self) -> list[str]:
        """The settings only the extended set honours (refused for the benchmark's)."""
        named = [name for name in ("triggers", "hosts", *RANGES) if getattr(self, name)]
        return named + sorted(set(self.kinds) - set(TEMPLATES))


def popup_params(ctx: ShiftContext) -> PopupParams:
    """The popup's options in the context, validated once per distinct options (a page load
    asks for them three times: its eligibility, its plan, its markup; and they are an
    episode's, the same at every load). Not to be changed: they are shared."""
    options = ctx.params_for(Popup.name)
    # (most episodes set none: no text made of them to look them up by)
    unset = type(options) is dict and not options
    return _validated_popup_params("{}" if unset else json.dumps(options, sort_keys=True))


@functools.lru_cache(maxsize=256)
def _validated_popup_params(options: str) -> PopupParams:
    return PopupParams.model_validate(json.loads(options))


def draw_random(seed: int, load_index: int, params: RegimeParams) -> tuple[bool, int]:
    """The `random` regime's draw for one load: (fires, delay in ms). Pure in its inputs."""
    # (the seed and the load as the generator's seed reads them, their text: True and 1 are
    # one key to a memo, and not one seed)
    return _drawn(str(seed), str(load_index), params.p, params.min_ms, params.max_ms)


@functools.lru_cache(maxsize=256)
def _drawn(seed: str, load_index: str, p: float, min_ms: int, max_ms: int) -> tuple[bool, int]:
    # Memoized: a load's draw is asked when it is logged and again when its popup is planned,
    # and seeding a generator costs more than the draw.
    rng = rng_for(seed, "regime-random", load_index)
    return rng.random() < p, rng.randint(min_ms, max_ms)


@functools.lru_cache(maxsize=256)
def _regime_params(items: tuple[tuple[str, type, str, Any], ...]) -> RegimeParams:
    return RegimeParams.model_validate({name: value for name, _, _, value in items})


def regime_params(ctx: ShiftContext) -> RegimeParams:
    """The context's regime options, validated once per distinct options (they are an
    episode's, the same at every load). Not to be changed: they are shared."""
    options = ctx.regime_params
    try:
        # Keyed by each value's type and text too: 1, 1.0 and True are one key, and 0.0 and
        # -0.0, but not one value to the strict fields, nor one value kept. In their order: a
        # refusal names them as the options do.
        return _regime_params(
            tuple((name, type(value), repr(value), value) for name, value in options.items())
        )
    except TypeError:  # (a value that cannot be a key: validated as it is, to say why)
        return RegimeParams.model_validate(options)


def is_eligible(ctx: ShiftContext) -> bool:
    """Whether this response may carry a popup: a navigation document on an eligible path."""
    if not ctx.is_navigation:
        return False
    params = popup_params(ctx)
    patterns = params.paths or list(ctx.site.popup_paths)
    path = urlsplit(ctx.url).path or "/"
    return not patterns or any(fnmatch.fnmatch(path, pattern) for pattern in patterns)


def plan_popup(ctx: ShiftContext) -> PopupPlan | None:
    """The popup this load should show under the episode's regime, before `once` is claimed."""
    if not is_eligible(ctx) or ctx.load_index is None:
        return None
    params = popup_params(ctx)
    interruption = None
    if ctx.execution == "extended":
        interruption = plan_interruption(ctx.seed, ctx.load_index, params.model_dump())
        if interruption is None:
            return None
        kind = interruption.kind
    else:
        kinds = sorted(params.kinds or TEMPLATES)
        kind = rng_for(ctx.seed, "popup-kind", ctx.load_index).choice(kinds)
    delay = 0
    if ctx.regime == "random":
        fires, delay = draw_random(ctx.seed, ctx.load_index, regime_params(ctx))
        if not fires:
            return None
    return PopupPlan(kind=kind, delay_ms=delay, regime=ctx.regime, interruption=interruption)


class Popup:
    name: ClassVar[str] = "popup"
    reads_data_values: ClassVar[bool] = False  # (its popups are strings put into the page)
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
            params = popup_params(ctx)
            interstitial = (
                ctx.popup.interruption is not None and ctx.popup.interruption.host == "interstitial"
            )
            plan = {
                "kind": ctx.popup.kind,
                "delay": ctx.popup.delay_ms,
                "regime": ctx.popup.regime,
                **render_popup(
                    ctx.popup.kind,
                    ctx.seed,
                    ctx.site.popup_theme,
                    params.class_prefix,
                    continue_to=ctx.url if interstitial else None,
                ),
            }
            if interstitial:
                plan["title"] = ALL_TEMPLATES[ctx.popup.kind].title
            if ctx.popup.regime == "once":
                # Client-side guard: reload, bfcache, SPA route changes and other tabs of the
                # origin never show it again. A reset (new generation) gets a fresh key.
                plan["guard"] = "_" + token_for(
                    ctx.seed, "once-guard", ctx.episode_id, ctx.generation, length=8
                )
            note: dict[str, object] = {"kind": ctx.popup.kind, "delay_ms": ctx.popup.delay_ms}
            if ctx.popup.interruption is not None:
                plan.update(ctx.popup.interruption.placement())
                note.update(ctx.popup.interruption.placement())
            doc.notes[self.name] = note
        # The extended set's plan goes to its own runtime (`finish` adds its tag), and the
        # benchmark's runtime loads only if some other shift needs it.
        doc.runtime["x" if ctx.execution == "extended" else "p"] = plan
        return doc


register(Popup())
