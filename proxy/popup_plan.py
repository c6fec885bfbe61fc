"""Which popup a page load shows under the episode's execution regime (`shifts.execution` plans
it; this claims `once` and logs `random` draws in the store)."""

from __future__ import annotations

from dataclasses import replace

from proxy.claims import ClaimedFlags
from proxy.episode import Episode
from proxy.events import EventBatch
from proxy.store import EpisodeStore
from shifts import HtmlDocument, ShiftContext
from shifts.execution import draw_random, plan_popup
from shifts.interruptions import interstitial_page
from shifts.runtime import INTERRUPTIONS_NAME, runtime_tag

ONCE_FLAG = "popup_once"  # the store flag `once` claims


async def planned_popup(
    store: EpisodeStore,
    episode: Episode,
    context: ShiftContext,
    events: EventBatch,
    claims: ClaimedFlags,
) -> ShiftContext:
    """The context with the popup this load shows, if any: a `random` draw is logged, and
    `once` is claimed in the store, so one popup shows per episode across replicas."""
    if context.regime == "random" and context.is_navigation and context.load_index:
        fires, delay = draw_random(context.seed, context.load_index, episode.regime_params)
        events.add(
            "random_draw",
            url=context.url,
            load_index=context.load_index,
            fired=fires,
            delay_ms=delay,
            p=episode.regime_params.p,
        )
    plan = plan_popup(context)
    if plan is not None and plan.regime == "once" and not await claims.claim(episode, ONCE_FLAG):
        plan = None
    return replace(context, popup=plan)


def is_interstitial(context: ShiftContext) -> bool:
    """Whether this load is served an interstitial page instead of the one asked for."""
    popup = context.popup
    return (
        popup is not None
        and popup.interruption is not None
        and (popup.interruption.host == "interstitial")
    )


def in_page_unless_get(context: ShiftContext, method: str) -> ShiftContext:
    """An interstitial only stands in for a GET: the answer to a form's POST is the app's
    doing, done already, so that load shows its popup in the page instead."""
    if not is_interstitial(context) or method == "GET":
        return context
    popup = context.popup
    assert popup is not None and popup.interruption is not None
    placed = replace(popup.interruption, host="page")
    return replace(context, popup=replace(popup, interruption=placed))


def interstitial_for(context: ShiftContext, doc: HtmlDocument) -> bytes:
    """The interstitial page of this load: the popup the shift planned, with its runtime."""
    plan = doc.runtime["x"]
    assert isinstance(plan, dict)
    tag = runtime_tag(context, {"l": context.load_index, "p": plan}, INTERRUPTIONS_NAME)
    return interstitial_page(plan, tag, context.nonce_attr())
