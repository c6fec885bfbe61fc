"""The popup a load shows: an interstitial only stands in for a GET."""

from __future__ import annotations

from proxy.popup_plan import in_page_unless_get, is_interstitial
from shifts import PopupPlan, ShiftContext
from shifts.interruptions import Interruption

CTX = ShiftContext(episode_id="e", seed=1, execution="extended", load_index=1)
INTERSTITIAL = PopupPlan(
    "session", 0, "multiple", Interruption("session", "interstitial", "load", 0, 0)
)


def test_an_interstitial_stands_in_for_a_get_only() -> None:
    planned = ShiftContext(**{**CTX.__dict__, "popup": INTERSTITIAL})
    assert is_interstitial(in_page_unless_get(planned, "GET"))
    posted = in_page_unless_get(planned, "POST")
    assert not is_interstitial(posted)
    assert posted.popup is not None and posted.popup.interruption is not None
    assert (posted.popup.kind, posted.popup.interruption.host) == ("session", "page")
    assert not is_interstitial(CTX) and in_page_unless_get(CTX, "POST") is CTX
