"""tools.drift_holds: what it says holds an element is what the drift obeys."""

from __future__ import annotations

import pytest
from lxml import etree

from shifts.document import HtmlDocument
from shifts.references import PageRefs, css_refs, inline_refs
from shifts.selectors import elements
from tools import drift_holds

PAGE = (
    b"<html><body><form><button id='send'>Send</button></form>"
    b"<ul><li><a href='/a'>A</a></li></ul><div><a href='/b'>B</a></div></body></html>"
)


def test_it_names_the_rule_the_parent_the_script_or_the_coin() -> None:
    assets = css_refs("form > button {} #send {}")
    root = HtmlDocument(PAGE).tree
    refs = PageRefs(assets, inline_refs(root))
    button, item, in_div = elements(etree.XPath("//button | //li | //div/a"), root)
    assert (
        drift_holds.why_not_wrapped(refs, button)
        == "a structural rule matches it: child: form > button"
    )
    assert drift_holds.why_not_wrapped(refs, item) == "not a tag the drift wraps"
    assert drift_holds.why_not_wrapped(refs, in_div) == "free (the seeded coin left it)"


def test_the_report_gives_shares_per_seed_and_referenced_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    drift_holds.report("http://app.test/", PAGE, css_refs("form > button {} #send {}"), 2)
    printed = capsys.readouterr().out
    assert "seeds 0-1: [" in printed
    assert "<button #send> 'Send'" in printed
    assert "names referenced: send" in printed
    assert "child: form > button" in printed
