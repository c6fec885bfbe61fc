from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from html import unescape
from typing import Any

import pytest
from pydantic import ValidationError

from shifts import PopupPlan, ShiftContext, apply_shifts
from shifts.document import HtmlDocument
from shifts.execution import (
    PopupParams,
    RegimeParams,
    draw_random,
    is_eligible,
    plan_popup,
    popup_params,
    regime_params,
)
from shifts.popups import KINDS
from shifts.rng import rng_for

PAGE = b"<!DOCTYPE html><html><head><title>x</title></head><body><p>x</p></body></html>"
CTX = ShiftContext(
    episode_id="e",
    seed=7,
    regime="multiple",
    load_index=1,
    url="http://h/a",
    beacon_key="k1",
    nonce="n0nce",
)


def test_random_regime_is_a_seeded_bernoulli_sequence() -> None:
    params = RegimeParams(p=0.5, min_ms=100, max_ms=900)
    first = [draw_random(7, i, params) for i in range(1, 41)]
    assert first == [draw_random(7, i, params) for i in range(1, 41)]
    assert first != [draw_random(8, i, params) for i in range(1, 41)]
    fired = sum(fires for fires, _ in first)
    assert 8 < fired < 32  # p = 0.5 over 40 loads
    assert all(100 <= delay <= 900 for _, delay in first)
    assert not any(draw_random(7, i, RegimeParams(p=0.0))[0] for i in range(1, 41))
    assert all(draw_random(7, i, RegimeParams(p=1.0))[0] for i in range(1, 41))


def test_a_draw_is_the_seeded_generators_whether_asked_before_or_not() -> None:
    options = [RegimeParams(p=0.5, min_ms=100, max_ms=900), RegimeParams(p=0.5, min_ms=0)]
    options.append(RegimeParams(p=0.5, min_ms=0, max_ms=40))  # (one `p`: each draws its own)
    # (True and 1 are one key to a memo, and not one seed: the generator reads their text)
    for seed, params, index in itertools.product((7, 1, True), options, range(1, 30)):
        rng = rng_for(seed, "regime-random", index)
        expected = (rng.random() < params.p, rng.randint(params.min_ms, params.max_ms))
        assert draw_random(seed, index, params) == expected == draw_random(seed, index, params)


def test_the_regime_options_are_validated_once_and_each_value_by_its_type() -> None:
    ctx = replace(CTX, regime="random", regime_params={"p": 0.25, "min_ms": 10, "max_ms": 20})
    options = regime_params(ctx)
    assert (options.p, options.min_ms, options.max_ms) == (0.25, 10, 20)
    assert regime_params(replace(ctx, regime_params=dict(ctx.regime_params))) is options
    assert regime_params(replace(ctx, regime_params={})) == RegimeParams()
    # 10 and 10.0 are one key, but the strict field refuses the second, asked first or after.
    assert regime_params(replace(ctx, regime_params={"min_ms": 10})).min_ms == 10
    refused: list[dict[Any, Any]] = [{"min_ms": 10.0}, {"p": 2.0}, {"min_ms": 30, "max_ms": 20}]
    refused += [{"q": 1}, {1: 2}, {"p": [0.5]}]  # (a value no key can hold: validated as it is)
    for options_refused in refused:
        with pytest.raises(ValidationError) as raised:
            regime_params(replace(ctx, regime_params=options_refused))
        with pytest.raises(ValidationError) as directly:
            RegimeParams.model_validate(options_refused)
        assert str(raised.value) == str(directly.value)  # (named in their order)
    # 0.0 and -0.0 are one key too, and two values kept.
    for zero in (0.0, -0.0, 0.0):
        kept = regime_params(replace(ctx, regime_params={"p": zero})).p
        assert math.copysign(1, kept) == math.copysign(1, zero)


def test_the_popup_options_unset_are_the_defaults_and_none_is_refused() -> None:
    assert popup_params(CTX) == PopupParams() == popup_params(replace(CTX, shift_params={}))
    assert popup_params(replace(CTX, shift_params={"popup": {}})) is popup_params(CTX)
    for refused in (None, [], ""):  # (options of another kind than a dict: not unset)
        with pytest.raises(ValidationError):
            popup_params(replace(CTX, shift_params={"popup": refused}))


def test_plan_respects_regime_and_eligibility() -> None:
    plan = plan_popup(CTX)
    assert (
        plan is not None and plan.kind in KINDS and (plan.delay_ms, plan.regime) == (0, "multiple")
    )
    only_survey = replace(CTX, shift_params={"popup": {"kinds": ["survey"]}})
    assert all(
        plan_popup(replace(only_survey, load_index=i)).kind == "survey"  # type: ignore[union-attr]
        for i in range(1, 20)
    )
    kinds_drawn = {plan_popup(replace(CTX, load_index=i)).kind for i in range(1, 60)}  # type: ignore[union-attr]
    assert kinds_drawn == set(KINDS)
    assert plan_popup(replace(CTX, is_navigation=False)) is None
    only_cart = replace(CTX, shift_params={"popup": {"paths": ["/cart*"]}})
    assert not is_eligible(only_cart) and plan_popup(only_cart) is None
    assert is_eligible(replace(only_cart, url="http://h/cart/1"))
    never = replace(CTX, regime="random", regime_params={"p": 0.0})
    assert plan_popup(never) is None


def test_injected_runtime_carries_nonce_plan_and_nothing_named() -> None:
    ctx = replace(CTX, popup=plan_popup(CTX))
    out = apply_shifts(["popup"], HtmlDocument(PAGE), ctx).to_bytes()
    tag = out[out.index(b"<script") : out.index(b"</script>")].decode()
    assert 'nonce="n0nce"' in tag and 'src="/__ss/r.js?v=' in tag
    config = json.loads(unescape(tag.split('data-cfg="')[1].split('"')[0]))
    assert config["b"] == "/__ss/b" and config["k"] == "k1"
    assert config["p"]["kind"] in KINDS and config["l"] == 1
    assert config["p"]["markup"].count('role="dialog"') == 1
    assert b"skillshift" not in out.lower()
    assert out == apply_shifts(["popup"], HtmlDocument(PAGE), ctx).to_bytes()  # deterministic


def test_once_plan_has_client_guard_and_no_plan_still_gets_runtime() -> None:
    once = replace(CTX, regime="once", popup=PopupPlan("newsletter", 0, "once"))
    out = apply_shifts(["popup"], HtmlDocument(PAGE), once).to_bytes().decode()
    assert "guard" in unescape(out)
    quiet = apply_shifts(["popup"], HtmlDocument(PAGE), CTX).to_bytes().decode()
    assert '"p":null' in unescape(quiet)


def test_fragment_gets_nothing() -> None:
    doc = apply_shifts(["popup"], HtmlDocument(b"<div>x</div>"), replace(CTX, is_navigation=False))
    assert not doc.changed
