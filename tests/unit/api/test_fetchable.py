from __future__ import annotations

import pytest

from api.fetchable import url_problem


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://[::1", "is not a URL that can be fetched (Invalid port"),
        ("http://[bad/", "is not a URL that can be fetched"),
        ("http://127.0.0.1:99999/", "names port 99999, outside 1-65535"),
        ("http://127.0.0.1:0/", "names port 0, outside 1-65535"),
        ("ftp://x.test/", "is not an http(s) URL"),
        ("http:///path", "is not an http(s) URL"),
        ("not a url", "is not an http(s) URL"),
    ],
)
def test_what_cannot_be_fetched_is_said_before_fetching(url: str, problem: str) -> None:
    found = url_problem(url)
    assert found is not None and problem in found and repr(url) in found


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8090/products", "https://[::1]:8443/a?b=c", "http://shop.test/"]
)
def test_a_url_that_can_be_fetched_has_no_problem(url: str) -> None:
    assert url_problem(url) is None
