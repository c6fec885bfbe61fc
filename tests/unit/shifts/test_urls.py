"""`shifts.urls.as_requested`: a link as a browser's URL parser reads it in every part of a URL."""

from __future__ import annotations

import pytest

from shifts.urls import as_requested


@pytest.mark.parametrize(
    ("url", "utf8", "requested"),
    [
        ("/a/b?c=d#e", False, "/a/b?c=d#e"),  # (nothing to read otherwise: the same string)
        (" \x01/a\x02b\x03 ", False, "/a%02b"),  # blanks and controls at the ends dropped
        ("/a\tb\nc\rd", False, "/abcd"),  # tabs and newlines removed anywhere
        ('/a b"<c>\x7f', False, "/a%20b%22%3Cc%3E%7F"),  # what every part encodes
        ("/a`{}'^|\\[]", False, "/a`{}'^|\\[]"),  # what only some parts encode: as it is
        ("/é?q=д#ж", False, "/é?q=д#ж"),  # non-ASCII: as it is (a query's encoding is the page's)
        ("/é?q=д#ж", True, "/%C3%A9?q=%D0%B4#%D0%B6"),  # ...UTF-8 on a UTF-8 page
        ("/%01%20", True, "/%01%20"),  # (what is encoded already stays so)
    ],
)
def test_a_link_reads_as_a_browser_requests_it(url: str, utf8: bool, requested: str) -> None:
    assert as_requested(url, utf8) == requested
    assert as_requested(requested, utf8) == requested  # (read twice, the same)
