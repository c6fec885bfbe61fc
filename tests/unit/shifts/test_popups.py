from __future__ import annotations

from dataclasses import replace

from lxml import etree

from shifts.popups import KINDS, TEMPLATES, render_popup
from sites import PopupTheme

THEME = PopupTheme()


def parse(markup: str) -> etree._Element:
    root = etree.fromstring(f"<html><body>{markup}</body></html>", etree.HTMLParser())
    return root.find(".//body/div")


def test_five_kinds_each_a_real_blocking_dialog() -> None:
    assert set(KINDS) == {"cookie_consent", "newsletter", "survey", "promotion", "session"}
    for kind in KINDS:
        rendered = render_popup(kind, seed=1, theme=THEME)
        overlay = parse(rendered["markup"])
        dialog = overlay.find(".//*[@role='dialog']")
        assert dialog is not None and dialog.get("aria-modal") == "true", kind
        title = overlay.find(f".//*[@id='{dialog.get('aria-labelledby')}']")
        assert title is not None and title.text, kind
        close = overlay.find(".//button[@data-dismiss='close']")
        assert close is not None and close.get("aria-label") == "Close", kind
        text_buttons = [
            b.text for b in overlay.findall(".//button") if b.get("data-dismiss") != "close"
        ]
        assert len(text_buttons) == 2 and all(text_buttons), kind
        # The overlay covers the whole viewport above everything.
        root_class = overlay.get("class").split()[0]
        assert f".{root_class}{{position:fixed;inset:0;z-index:2147483000" in rendered["css"]
        assert "skillshift" not in (rendered["markup"] + rendered["css"]).lower()


def test_layouts_differ_by_kind() -> None:
    layouts = {kind: TEMPLATES[kind].layout for kind in KINDS}
    assert layouts["cookie_consent"] == "banner" and layouts["promotion"] == "fullpage"
    assert layouts["newsletter"] == layouts["survey"] == layouts["session"] == "modal"


def test_theme_restyles_and_names_are_seeded_or_configured() -> None:
    styled = render_popup("newsletter", 1, replace(THEME, accent="#ff6600", font_family="Georgia"))
    assert "#ff6600" in styled["css"] and "font-family:Georgia" in styled["css"]
    first, again, other = (render_popup("newsletter", seed, THEME) for seed in (1, 1, 2))
    assert first == again and first["markup"] != other["markup"]
    prefixed = render_popup("survey", 1, THEME, prefix="promo-box")
    assert 'class="promo-box-o promo-box-modal"' in prefixed["markup"]
