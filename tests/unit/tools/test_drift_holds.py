"""tools.drift_holds: what it says holds an element is what the drift obeys."""

from __future__ import annotations

import pytest
from lxml import etree

from shifts.document import HtmlDocument
from shifts.references import PageRefs, css_refs, inline_refs, js_refs
from shifts.selectors import elements
from tests.helpers.upstream import UpstreamServer
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


def test_a_page_behind_a_login_is_learnt_with_the_headers_given(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Admin pages answer a login form to a request with no session: the page and what it
    loads are fetched with the headers given, as the service does with the agent's."""
    upstream = UpstreamServer().start()
    try:
        upstream.extra["/admin/"] = ("text/html", PAGE.replace(b"<body>", LINK))
        upstream.extra["/admin.css"] = ("text/css", b"form > button {}")
        url = f"{upstream.origin}/admin/"
        cookie = "sessionid=s3cret"
        assert (
            drift_holds.main([url, "--static", "--seeds", "1", "--header", f"Cookie: {cookie}"])
            == 0
        )
        asked = {
            entry["path"]: {name.lower(): value for name, value in entry["headers"].items()}.get(
                "cookie"
            )
            for entry in upstream.requests
        }
        assert asked == {"/admin/": cookie, "/admin.css": cookie}
        assert "child: form > button" in capsys.readouterr().out
    finally:
        upstream.stop()
    with pytest.raises(SystemExit):
        drift_holds.main([url, "--header", "Cookie sessionid=s3cret"])
    assert "expected 'Name: value'" in capsys.readouterr().err


LINK = b"<body><link rel='stylesheet' href='/admin.css'>"


def test_the_report_says_an_id_is_kept_where_scripts_read_ids_as_data(
    capsys: pytest.CaptureFixture[str],
) -> None:
    page = b"<html><body><a id='h_:logo.png' class='select' href='#'>logo</a></body></html>"
    script = "$(document).on('click', 'a.select', function () { f($(this).attr('id').substr(2)) })"
    drift_holds.report("http://app.test/", page, js_refs(script), 1)
    assert "id kept: the page's scripts read ids as data" in capsys.readouterr().out
    drift_holds.report("http://app.test/", page, js_refs(script.replace("substr", "x")), 1)
    assert "id kept" not in capsys.readouterr().out
