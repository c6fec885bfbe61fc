"""The oracle's run: which wrappers it skips, and the route's refusals before any browser starts."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from api.failures import Invalid
from api.oracle.run import _validated, wrapper_tags_of
from api.service.settings import Settings
from tests.helpers.ports import free_port
from tests.unit.api.conftest import in_process


def test_wrapper_tags_come_from_the_last_page_served_for_the_url() -> None:
    def served(url: str, shifts: Any) -> dict[str, Any]:
        return {"type": "page_served", "kind": "document", "url": url, "shifts": shifts}

    events = [
        {"type": "episode_created"},
        served("http://shop/", {"locator_drift": {"wrapper": "x-old"}}),
        served("http://shop/", {"locator_drift": {"wrapper": "X-K3F9A", "ids": 2}}),
        served("http://shop/other", {"locator_drift": {"wrapper": "x-other"}}),
        {"type": "page_served", "kind": "fragment", "url": "http://shop/", "shifts": {}},
    ]
    assert wrapper_tags_of(events, "http://shop/") == ["x-k3f9a"]
    assert wrapper_tags_of(events, "http://shop/redirected") == ["x-other"]
    assert wrapper_tags_of([served("http://shop/", {"locator_drift": {"ids": 3}})], "x") == []
    assert wrapper_tags_of([served("http://shop/", {})], "http://shop/") == []
    assert wrapper_tags_of([served("http://shop/", None)], "http://shop/") == []
    assert wrapper_tags_of([], "http://shop/") == []
    lists = served("http://shop/", {"locator_drift": {"wrapper": ["x-a", 3, "x-b"]}})
    assert wrapper_tags_of([lists], "http://shop/") == ["x-a", "x-b"]


@pytest.mark.parametrize(
    ("body", "wanted"),
    [
        ({"url": "http://127.0.0.1:9/", "condition": "Src-Exec"}, "popup"),
        ({"url": "http://127.0.0.1:9/", "condition": "Tgt-Exec"}, "popup"),
        ({"url": "file:///etc/passwd"}, "url"),
        ({"url": "http://[::1"}, "is not a URL that can be fetched"),
        ({"url": "http://127.0.0.1:99999/"}, "names port 99999, outside 1-65535"),
        ({"url": "http://127.0.0.1:9/", "seeds": []}, "seeds"),
        ({"url": "http://127.0.0.1:9/", "seeds": [True]}, "seeds"),
        ({"url": "http://127.0.0.1:9/", "baseline_runs": "2"}, "baseline_runs"),
        ({"url": "http://127.0.0.1:9/", "colour": "red"}, "colour"),
        ({"url": "http://127.0.0.1:9/", "perceptual": "weird"}, "perceptual"),
    ],
)
async def test_the_route_validates_its_request(
    api: httpx.AsyncClient, body: dict[str, Any], wanted: str
) -> None:
    response = await api.post("/checks/browser", json=body)
    assert response.status_code == 422, response.text
    assert wanted in response.json()["error"]


async def test_the_route_refuses_cleanly_without_a_proxy() -> None:
    """No proxy listening where the settings say: a clear 503 before any browser starts, and
    no episode left behind."""
    settings = Settings(proxy=f"127.0.0.1:{free_port()}")
    async with in_process(settings, base_url="http://api") as api:
        response = await api.post("/checks/browser", json={"url": "http://127.0.0.1:9/"})
        assert response.status_code == 503, response.text
        assert "proxy is not reachable" in response.json()["error"]
        assert (await api.get("/episodes")).json()["episodes"] == []


async def test_the_route_refuses_upstreams_the_proxy_may_not_reach() -> None:
    settings = Settings(proxy=f"127.0.0.1:{free_port()}", upstream_allow="127.0.0.1")
    async with in_process(settings, base_url="http://api") as api:
        response = await api.post("/checks/browser", json={"url": "http://10.0.0.1/"})
        assert response.status_code == 403, response.text


def test_an_invalid_episode_is_said_as_the_episode_routes_say_it() -> None:
    with pytest.raises(Invalid) as refused:
        _validated({"shifts": ["nope"]})
    assert refused.value.message == "unknown shift 'nope'"
    with pytest.raises(Invalid) as refused:
        _validated({"seed": "x"})
    assert refused.value.message.startswith("seed: ")
