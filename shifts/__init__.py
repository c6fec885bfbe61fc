"""Pure transforms: (document, ShiftContext) -> document. No mitmproxy, FastAPI or Redis here."""

from shifts import contextual, execution  # noqa: F401  (registers the shifts)
from shifts.base import Shift, all_shifts, get_shift, validate_params
from shifts.conditions import CONDITIONS, KIND_ORDER, shifts_for
from shifts.document import HtmlDocument
from shifts.perceptual import locators, relabel, relayout, restyle  # noqa: F401  (registers them)
from shifts.runtime import INTERRUPTIONS_NAME, runtime_tag
from shifts.shift_context import PopupPlan, ShiftContext


def apply_shifts(names: list[str], doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
    """Apply the named shifts in pipeline order (contextual, perceptual, execution), then add
    one client runtime tag carrying what the shifts asked the runtime to do (if anything)."""
    return finish(run_shifts(names, doc, ctx), ctx)


def run_shifts(names: list[str], doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
    """The named shifts, in pipeline order, without the runtime tag (`finish` adds it)."""
    shifts = sorted((get_shift(name) for name in names), key=lambda s: KIND_ORDER[s.kind])
    for shift in shifts:
        doc = shift.apply(doc, ctx)
    if any(shift.reads_data_values for shift in shifts):
        doc.data_attributes_tested = None
    elif doc.data_attributes_tested is not None:
        doc.data_attributes_tested |= ctx.site.data_attributes_selected
    return doc


def finish(doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
    """Add the client runtime's tag, configured with what the shifts asked of it, and the
    extended execution set's runtime's when that set planned for the page (`x`)."""
    if not (doc.runtime and ctx.is_navigation):
        return doc
    config = dict(doc.runtime)
    extended = "x" in config
    interruption = config.pop("x", None)
    if config:
        doc.inject_deferred_script(runtime_tag(ctx, {"l": ctx.load_index, "p": None, **config}))
    if extended:
        doc.inject_deferred_script(
            runtime_tag(ctx, {"l": ctx.load_index, "p": interruption}, INTERRUPTIONS_NAME)
        )
    return doc


__all__ = [
    "CONDITIONS",
    "HtmlDocument",
    "PopupPlan",
    "Shift",
    "ShiftContext",
    "all_shifts",
    "apply_shifts",
    "finish",
    "run_shifts",
    "get_shift",
    "shifts_for",
    "validate_params",
]
