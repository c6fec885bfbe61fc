"""The extended execution set's plan (shifts.interruptions via shifts.execution): seeded per
load, narrowed by its parameters, refused where it cannot be honoured, and carried to its own
runtime while the benchmark's set keeps its bytes."""

from __future__ import annotations

import json
from dataclasses import replace
from html import unescape

import pytest
from pydantic import ValidationError

from proxy.episode import EpisodeConfig
from shifts import ShiftContext, apply_shifts
from shifts.document import HtmlDocument
from shifts.execution import PopupParams, plan_popup
from shifts.interruptions import HOSTS, NATIVE_KINDS, TRIGGERS, Interruption, plan_interruption
from shifts.popups import EXTENDED_KINDS, KINDS

PAGE = b"<!DOCTYPE html><html><head><title>x</title></head><body><p>x</p></body></html>"
CTX = ShiftContext(
    episode_id="e",
    seed=7,
    regime="multiple",
    execution="extended",
    load_index=1,
    url="http://h/a",
    beacon_key="k1",
)
LOADS = range(1, 400)


def plans(seed: int = 7, **params: object) -> list[Interruption]:
    drawn = [plan_interruption(seed, load, PopupParams(**params).model_dump()) for load in LOADS]
    return [plan for plan in drawn if plan is not None]


def test_every_kind_host_and_trigger_is_drawn_from_the_seed() -> None:
    drawn = plans()
    assert drawn == plans()  # the same seed and loads: the same plans
    assert len(drawn) == len(LOADS) and drawn != plans(seed=8)
    assert {p.kind for p in drawn} == set(EXTENDED_KINDS)
    assert {p.trigger for p in drawn} == set(TRIGGERS)
    assert {p.host for p in drawn} == {*HOSTS, "native"}
    for plan in drawn:
        native = plan.kind in NATIVE_KINDS
        assert (plan.host == "native") == native
        if plan.kind in ("toast", "click_absorber", "consent_push"):
            assert plan.host != "iframe"  # they live in the page
        if plan.trigger == "delay":
            assert 1000 <= plan.after <= 5000
        if plan.kind == "toast":
            assert 3000 <= plan.lasts_ms <= 8000


def test_parameters_narrow_the_draw() -> None:
    narrowed = plans(
        kinds=["toast", "survey"], hosts=["shadow_closed"], triggers=["scroll"], scroll_px=[50, 60]
    )
    assert {(p.kind, p.host, p.trigger) for p in narrowed} == {
        ("toast", "shadow_closed", "scroll"),
        ("survey", "shadow_closed", "scroll"),
    }
    assert {p.after for p in narrowed} <= set(range(50, 61))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"kinds": ["fireworks"]}, "unknown popup kinds ['fireworks']"),
        ({"triggers": ["on_tuesday"]}, "unknown triggers ['on_tuesday']"),
        ({"hosts": ["webview"]}, "unknown hosts ['webview']"),
        ({"delay_ms": [500, 100]}, "delay_ms must be [low, high]"),
        ({"toast_ms": [0, 700_000]}, "toast_ms must be [low, high]"),
        ({"kinds": ["toast"], "hosts": ["iframe"]}, "none of the kinds ['toast'] can be shown"),
    ],
)
def test_settings_that_cannot_be_honoured_are_refused(
    params: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        EpisodeConfig(condition="Src-Exec", execution="extended", shift_params={"popup": params})


def test_the_benchmark_set_refuses_what_only_the_extended_one_does() -> None:
    for params in ({"triggers": ["exit"]}, {"kinds": ["toast"]}, {"hosts": ["iframe"]}):
        with pytest.raises(ValidationError, match='give "execution": "extended"'):
            EpisodeConfig(condition="Src-Exec", shift_params={"popup": params})
    EpisodeConfig(condition="Src-Exec", shift_params={"popup": {"kinds": ["survey"]}})


def test_only_the_extended_set_changes_the_digest() -> None:
    benchmark = EpisodeConfig(condition="Src-Exec", seed=3)
    explicit = EpisodeConfig(condition="Src-Exec", seed=3, execution="benchmark")
    extended = EpisodeConfig(condition="Src-Exec", seed=3, execution="extended")
    assert benchmark.shift_digest("v") == explicit.shift_digest("v")
    assert extended.shift_digest("v") != benchmark.shift_digest("v")


def test_the_plan_goes_to_its_own_runtime() -> None:
    params = {"popup": {"kinds": ["newsletter"], "hosts": ["iframe"], "triggers": ["exit"]}}
    ctx = replace(CTX, shift_params=params)
    ctx = replace(ctx, popup=plan_popup(ctx))
    out = apply_shifts(["popup"], HtmlDocument(PAGE), ctx).to_bytes().decode()
    assert "/__ss/i.js?v=" in out and "/__ss/r.js" not in out  # the benchmark's runtime stays out
    config = json.loads(unescape(out.split('data-cfg="')[1].split('"')[0]))
    plan = config["p"]
    assert (plan["kind"], plan["host"], plan["trigger"]) == ("newsletter", "iframe", "exit")
    assert plan["markup"].count('role="dialog"') == 1 and plan["css"]
    # A load without an interruption still gets the runtime (an agent cannot tell the two).
    quiet = apply_shifts(["popup"], HtmlDocument(PAGE), replace(ctx, popup=None)).to_bytes()
    assert b"/__ss/i.js" in quiet and "&quot;p&quot;:null" in quiet.decode()


def test_the_benchmark_set_never_draws_an_extended_kind() -> None:
    benchmark = replace(CTX, execution="benchmark")
    drawn = {plan_popup(replace(benchmark, load_index=i)) for i in LOADS}
    assert {plan.kind for plan in drawn if plan} == set(KINDS)  # type: ignore[union-attr]
    assert all(plan.interruption is None for plan in drawn if plan)  # type: ignore[union-attr]


def test_an_interstitial_never_follows_an_interstitial() -> None:
    only = plans(kinds=["session"], hosts=["interstitial"])
    hosts = [
        plan_interruption(
            7, load, PopupParams(kinds=["session"], hosts=["interstitial"]).model_dump()
        )
        for load in range(1, 21)
    ]
    # Loads that all draw one: every other one keeps it (the next is its "Continue").
    assert [bool(plan) for plan in hosts] == [load % 2 == 1 for load in range(1, 21)]
    assert {plan.host for plan in only} == {"interstitial"}
    mixed = plans(kinds=["session", "survey"])
    for before, after in zip(mixed, mixed[1:], strict=False):
        assert not (before.host == after.host == "interstitial")
    assert "interstitial" in {plan.host for plan in mixed}


def test_an_interstitial_is_planned_as_what_it_is_shown_as_on_load() -> None:
    """Its events and reports name the trigger the agent met: it is the page, from the start
    (they named a drawn delay or scroll that never applied)."""
    params = PopupParams(kinds=["session"], hosts=["interstitial"]).model_dump()
    drawn = [plan_interruption(seed, 1, params) for seed in range(40)]
    assert {(plan.trigger, plan.after) for plan in drawn if plan} == {("load", 0)}


def test_only_page_like_kinds_are_interstitials() -> None:
    with pytest.raises(ValidationError, match="none of the kinds"):
        EpisodeConfig(
            condition="Src-Exec",
            execution="extended",
            shift_params={"popup": {"kinds": ["toast", "newsletter"], "hosts": ["interstitial"]}},
        )
