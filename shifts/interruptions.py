"""The extended execution set (`"execution": "extended"` on an episode): interruptions as agents
meet them on the open web, beyond the benchmark's popups, under the same regimes.

Each planned interruption is a kind (the benchmark's five; a toast over a corner, a clear
overlay that absorbs clicks, a consent banner that pushes the page down; the browser's own
`alert`, `confirm` and `beforeunload` dialogs), a host (in the page, inside an open or a closed
shadow root, inside a same-origin iframe; a native dialog is the browser's) and a trigger (on
load, after a delay, on the first pointer or key interaction, on scrolling past a point, on exit
intent: the pointer leaving through the top edge). Every choice is drawn from the episode's seed
and the load index, under labels the benchmark's plan never uses, so its draws are unchanged.

The plan travels to the extended runtime (`assets/interruptions.js`, served apart from the
benchmark's runtime, whose bytes this set leaves alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from shifts.popups import EXTENDED_KINDS, TEMPLATES
from shifts.rng import rng_for

TRIGGERS = ("load", "delay", "interaction", "scroll", "exit")
HOSTS = ("page", "shadow_open", "shadow_closed", "iframe", "interstitial")
# Kinds that can be a page of their own, served once instead of the navigation (a GET's).
INTERSTITIAL_KINDS = ("promotion", "session")
NATIVE_KINDS = ("native_alert", "native_beforeunload", "native_confirm")
# Kinds that overlay the page can sit in an iframe (the iframe is the overlay); a toast, a
# push banner and an absorber live in the page's own box model.
_IN_FLOW_HOSTS = ("page", "shadow_open", "shadow_closed")
_OVERLAY_HOSTS = (*_IN_FLOW_HOSTS, "iframe")  # the benchmark's kinds, which cover the page
# Seeded ranges (ms or px) a kind or trigger draws from, and their defaults.
RANGES: dict[str, tuple[int, int]] = {
    "delay_ms": (1000, 5000),  # the `delay` trigger: after this long
    "scroll_px": (200, 800),  # the `scroll` trigger: once scrolled this far (or to the end)
    "toast_ms": (3000, 8000),  # a toast goes by itself after this long
    "absorb_ms": (2000, 8000),  # an absorber stops absorbing after this long
}


@dataclass(frozen=True)
class Interruption:
    """What the extended set planned for one load."""

    kind: str
    host: str
    trigger: str
    after: int  # the trigger's delay (ms) or scroll depth (px); 0 for the others
    lasts_ms: int  # a toast's or absorber's own time; 0: until dismissed

    def placement(self) -> dict[str, Any]:
        """Where and when it shows (its kind aside), for the runtime, the events, the change map."""
        return {
            "host": self.host,
            "trigger": self.trigger,
            "after": self.after,
            "lasts_ms": self.lasts_ms,
        }


def hosts_for(kind: str) -> tuple[str, ...]:
    if kind in NATIVE_KINDS:
        return ("native",)
    if kind in INTERSTITIAL_KINDS:
        return HOSTS
    return _OVERLAY_HOSTS if kind in TEMPLATES else _IN_FLOW_HOSTS


def pairs(kinds: list[str], hosts: list[str]) -> list[tuple[str, str]]:
    """Every (kind, host) the settings allow: the native kinds are the browser's whatever the
    hosts say; an empty list allows everything."""
    return [
        (kind, host)
        for kind in sorted(kinds or EXTENDED_KINDS)
        for host in hosts_for(kind)
        if host == "native" or not hosts or host in hosts
    ]


def plan_interruption(seed: int, load_index: int, params: dict[str, Any]) -> Interruption | None:
    """The interruption of one load, drawn from the seed and the load index (None when the
    settings allow no kind in any host: refused at episode creation, so only a safety net)."""
    allowed = pairs(params.get("kinds", []), params.get("hosts", []))
    if not allowed:
        return None
    kind, host = _draw_pair(seed, load_index, allowed)
    if host == "interstitial" and _after_interstitial(seed, load_index, allowed):
        # The load after an interstitial is, most often, its "Continue": never another one.
        others = [pair for pair in allowed if pair[1] != "interstitial"]
        if not others:
            return None
        kind, host = _draw_pair(seed, load_index, others)
    trigger = rng_for(seed, "interruption-trigger", load_index).choice(
        sorted(params.get("triggers") or TRIGGERS)
    )
    if host == "interstitial":
        # It is the page, there from the start: what the events and reports say is what
        # the agent met (they said a delay or a scroll no agent waited for).
        trigger = "load"
    after = 0
    if trigger in ("delay", "scroll"):
        name = "delay_ms" if trigger == "delay" else "scroll_px"
        after = _draw(seed, load_index, name, params)
    lasts = 0
    if kind in ("toast", "click_absorber"):
        lasts = _draw(seed, load_index, "toast_ms" if kind == "toast" else "absorb_ms", params)
    return Interruption(kind, host, trigger, after, lasts)


def _draw_pair(seed: int, load_index: int, allowed: list[tuple[str, str]]) -> tuple[str, str]:
    return rng_for(seed, "interruption-kind", load_index).choice(allowed)


def _after_interstitial(seed: int, load_index: int, allowed: list[tuple[str, str]]) -> bool:
    """Whether the load before this one was planned an interstitial. Within a run of loads
    that all draw one, every other one keeps it (the first, the third...): so the answer is
    whether the run before this load is of odd length. Pure, like every draw here."""
    run, before = 0, load_index - 1
    while before >= 1 and _draw_pair(seed, before, allowed)[1] == "interstitial":
        run, before = run + 1, before - 1
    return run % 2 == 1


def interstitial_page(plan: dict[str, Any], runtime_tag: str, nonce_attr: str) -> bytes:
    """The page a navigation gets instead of the one asked for, once: the popup as a page of
    its own, with its runtime (which reports it) and a link on to the page."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{runtime_tag}'
        f"<title>{escape(str(plan['title']))}</title>"
        f"<style{nonce_attr}>{plan['css']}</style></head><body>{plan['markup']}</body></html>"
    ).encode()


def _draw(seed: int, load_index: int, name: str, params: dict[str, Any]) -> int:
    low, high = params.get(name) or RANGES[name]
    return rng_for(seed, "interruption", name, load_index).randint(low, high)
