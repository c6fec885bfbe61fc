"""Which recorded exchange a replay answers with."""

from __future__ import annotations

from typing import Any

from proxy.replay import RecordedExchanges


def recorded(url: str, load: int | None, page_load: int, method: str = "GET") -> dict[str, Any]:
    extra: dict[str, Any] = {"page_load": page_load, "body": f"{url}@{page_load}"}
    if load:
        extra.update(navigation=True, load=load)
    return {"request": {"method": method, "url": url}, "_skillshift": extra}


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
    assert EXCHANGES.navigation(("GET", "/a"), 1)["_skillshift"]["load"] == 1  # type: ignore[index]
    # The next recorded visit of the URL at or after the expected load...
    assert EXCHANGES.navigation(("GET", "/a"), 2)["_skillshift"]["load"] == 3  # type: ignore[index]
    # ...else the latest before it.
    assert EXCHANGES.navigation(("GET", "/b"), 3)["_skillshift"]["load"] == 2  # type: ignore[index]
    # A redirect on the way to a page is no page but is replayed.
    assert EXCHANGES.navigation(("GET", "/redirect"), 4) is not None
    assert EXCHANGES.navigation(("POST", "/a"), 1) is None


def test_subresources_come_from_the_page_being_replayed() -> None:
    assert EXCHANGES.subresource(("GET", "/s.css"), 1)["_skillshift"]["body"] == "/s.css@1"  # type: ignore[index]
    assert EXCHANGES.subresource(("GET", "/s.css"), 2)["_skillshift"]["body"] == "/s.css@1"  # type: ignore[index]
    assert EXCHANGES.subresource(("GET", "/s.css"), 3)["_skillshift"]["body"] == "/s.css@3"  # type: ignore[index]
    assert EXCHANGES.subresource(("GET", "/s.css"), None)["_skillshift"]["body"] == "/s.css@1"  # type: ignore[index]
    assert EXCHANGES.subresource(("GET", "/nope"), 1) is None
