"""Which recorded exchanges answer a replayed request, and how the nearest one differs."""

from __future__ import annotations

from typing import Any

from proxy.replay_match import IgnoredFields, RecordedExchanges, RequestKey

NONE: frozenset[str] = frozenset()


def recorded(
    url: str,
    load: int | None,
    page_load: int,
    method: str = "GET",
    body: str | None = "",
    answer: str = "",
) -> dict[str, Any]:
    extra: dict[str, Any] = {"page_load": page_load, "body": answer or f"{url}@{page_load}"}
    if body is not None:  # None: an entry recorded before request bodies were kept
        extra["request_body"] = body
    if load:
        extra.update(navigation=True, load=load)
    return {"request": {"method": method, "url": url}, "_skillshift": extra}


def get(url: str, body: str = "") -> RequestKey:
    return RequestKey("GET", url, body)


def post(url: str, body: str) -> RequestKey:
    return RequestKey("POST", url, body)


def answers(found: list[dict[str, Any]]) -> list[str]:
    return [entry["_skillshift"]["body"] for entry in found]


EXCHANGES = RecordedExchanges(
    [
        recorded("/a", 1, 1),
        recorded("/s.css", None, 1),
        recorded("/b", 2, 2),
        recorded("/a", 3, 3),
        recorded("/s.css", None, 3),
        recorded("/redirect", None, 3),
    ]
)


def test_navigations_step_through_the_recording() -> None:
    assert answers(EXCHANGES.navigation(get("/a"), NONE, 1)) == ["/a@1"]
    # The next recorded visit of the URL at or after the expected load...
    assert answers(EXCHANGES.navigation(get("/a"), NONE, 2)) == ["/a@3"]
    # ...else the latest before it.
    assert answers(EXCHANGES.navigation(get("/b"), NONE, 3)) == ["/b@2"]
    # A redirect on the way to a page is no page but is replayed.
    assert EXCHANGES.navigation(get("/redirect"), NONE, 4)
    assert EXCHANGES.navigation(RequestKey("POST", "/a", ""), NONE, 1) == []


def test_subresources_come_from_the_page_being_replayed() -> None:
    assert answers(EXCHANGES.subresource(get("/s.css"), NONE, 1)) == ["/s.css@1"]
    assert answers(EXCHANGES.subresource(get("/s.css"), NONE, 2)) == ["/s.css@1"]
    assert answers(EXCHANGES.subresource(get("/s.css"), NONE, 3)) == ["/s.css@3"]
    assert answers(EXCHANGES.subresource(get("/s.css"), NONE, None)) == ["/s.css@1"]
    assert EXCHANGES.subresource(get("/nope"), NONE, 1) == []


def test_requests_to_one_url_are_told_apart_by_their_body() -> None:
    exchanges = RecordedExchanges(
        [
            recorded("/api", None, 1, "POST", "form:q=shoes", "shoes"),
            recorded("/api", None, 1, "POST", "form:q=hats", "hats"),
        ]
    )
    assert answers(exchanges.subresource(post("/api", "form:q=hats"), NONE, 1)) == ["hats"]
    assert answers(exchanges.subresource(post("/api", "form:q=shoes"), NONE, 1)) == ["shoes"]
    assert exchanges.subresource(post("/api", "form:q=socks"), NONE, 1) == []


def test_identical_requests_of_a_page_are_all_offered_in_recorded_order() -> None:
    exchanges = RecordedExchanges(
        [
            recorded("/poll", None, 1, answer="first"),
            recorded("/poll", None, 1, answer="second"),
            recorded("/poll", None, 2, answer="on the next page"),
        ]
    )
    assert answers(exchanges.subresource(get("/poll"), NONE, 1)) == ["first", "second"]
    assert answers(exchanges.subresource(get("/poll"), NONE, 2)) == ["on the next page"]


def test_an_entry_recorded_before_bodies_were_kept_matches_any_body() -> None:
    exchanges = RecordedExchanges([recorded("/api", None, 1, "POST", None, "old")])
    assert answers(exchanges.subresource(post("/api", "form:q=anything"), NONE, 1)) == ["old"]
    assert answers(exchanges.subresource(post("/api", ""), NONE, 1)) == ["old"]
    assert exchanges.subresource(get("/api"), NONE, 1) == []  # the method still counts


def test_ignored_fields_are_left_out_of_query_and_body() -> None:
    exchanges = RecordedExchanges(
        [
            recorded("http://h/login?next=/&_token=1", None, 1, "POST", "form:_token=1&u=ann"),
            recorded("http://h/api", None, 1, "POST", 'json:{"csrf":"1","q":"x"}', "json"),
        ]
    )
    ignored = IgnoredFields({"/login": ["_token"], "http://h/api": ["csrf"]})
    login = post("http://h/login?next=/&_token=2", "form:_token=2&u=ann")
    assert exchanges.subresource(login, NONE, 1) == []
    assert exchanges.subresource(login, ignored.for_url(login.url), 1)
    api = post("http://h/api", 'json:{"csrf":"2","q":"x"}')
    assert answers(exchanges.subresource(api, ignored.for_url(api.url), 1)) == ["json"]
    other = post("http://h/api", 'json:{"csrf":"2","q":"y"}')
    assert exchanges.subresource(other, ignored.for_url(other.url), 1) == []


def test_ignore_rules_apply_by_path_or_url_prefix() -> None:
    rules = IgnoredFields({"/wp-admin/": ["_wpnonce"], "https://h/api": ["t"], "/": ["all"]})
    assert rules.for_url("http://x/wp-admin/post.php?a=1") == {"_wpnonce", "all"}
    assert rules.for_url("https://h/api/v1") == {"t", "all"}
    assert rules.for_url("http://h/api") == {"all"}  # another scheme: another URL
    assert IgnoredFields().for_url("http://h/") == frozenset()


def test_a_miss_names_what_differs_from_the_nearest_recorded_request() -> None:
    exchanges = RecordedExchanges(
        [
            recorded("http://h/search?q=shoes&page=1", None, 1),
            recorded("http://h/cart", None, 1, "POST", "form:item=7&qty=1"),
            recorded("http://h/upload", None, 1, "PUT", "sha256:aa"),
        ]
    )
    query = exchanges.nearest(get("http://h/search?q=hats&page=1"), NONE)
    assert query.fields() == {
        "differs": ["query"],
        "nearest": {"method": "GET", "url": "http://h/search?q=shoes&page=1"},
        "query_fields": ["q"],
    }
    body = exchanges.nearest(post("http://h/cart", "form:item=7&qty=2&gift=1"), NONE).fields()
    assert body["differs"] == ["body"] and body["body_fields"] == ["gift", "qty"]
    method = exchanges.nearest(RequestKey("GET", "http://h/cart", ""), NONE).fields()
    assert method["differs"] == ["method", "body"]
    assert method["body_fields"] == ["item", "qty"]
    hashed = exchanges.nearest(RequestKey("PUT", "http://h/upload", "sha256:bb"), NONE).fields()
    assert hashed["differs"] == ["body"] and hashed["body_fields"] == []
    path = exchanges.nearest(get("http://h/checkout"), NONE).fields()
    assert "path" in path["differs"]
    assert exchanges.nearest(get("http://elsewhere/"), NONE).fields() == {
        "differs": ["origin"],
        "nearest": None,
    }
