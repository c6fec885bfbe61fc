"""The addon chain behind mitmproxy's real addon manager: members in order, each hook once,
one member's error logged without stopping the others, AddonHalt stopping them."""

from __future__ import annotations

import inspect
import logging

import pytest
from mitmproxy import exceptions, http
from mitmproxy.test import taddons

from proxy import build_addons
from proxy.chain import AddonChain
from proxy.store import MemoryStore
from tests.unit.proxy.conftest import request_flow, run_request


class Member:
    def __init__(self, name: str, calls: list[str], fails: type[BaseException] | None = None):
        self.label, self.calls, self.fails = name, calls, fails

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        loader.add_option(f"member_{self.label}", int, 7, "An option a member declares.")

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        self.calls.append(f"{self.label}:requestheaders")
        if self.fails is not None:
            raise self.fails("member failed")


class AsyncMember(Member):
    async def request(self, flow: http.HTTPFlow) -> None:  # type: ignore[override]
        self.calls.append(f"{self.label}:request")


async def test_members_run_in_order_and_async_handlers_are_awaited() -> None:
    calls: list[str] = []
    chain = AddonChain([Member("a", calls), AsyncMember("b", calls), Member("c", calls)])
    with taddons.context(chain) as context:
        assert context.options.member_a == 7 and context.options.member_c == 7  # load ran
        await run_request(context.master.addons, request_flow())
    assert calls == ["a:requestheaders", "b:requestheaders", "c:requestheaders", "b:request"]


async def test_a_failing_member_is_logged_and_the_next_still_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[str] = []
    chain = AddonChain([Member("a", calls, fails=ValueError), Member("b", calls)])
    with taddons.context(chain) as context, caplog.at_level(logging.ERROR):
        await run_request(context.master.addons, request_flow())
    assert calls == ["a:requestheaders", "b:requestheaders"]
    assert any("Addon error: member failed" in r.getMessage() for r in caplog.records)


async def test_addon_halt_stops_the_members_after_it() -> None:
    calls: list[str] = []
    chain = AddonChain([Member("a", calls, fails=exceptions.AddonHalt), Member("b", calls)])
    with taddons.context(chain) as context:
        await run_request(context.master.addons, request_flow())
    assert calls == ["a:requestheaders"]


class FailsToLoad:
    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        raise TypeError("a bad option declaration")


def test_a_member_that_fails_to_load_stops_the_start_as_in_mitmproxy() -> None:
    with pytest.raises(TypeError, match="bad option"), taddons.context(AddonChain([FailsToLoad()])):
        pass


class Named(Member):
    name = "custom-name"


def test_members_are_found_by_their_mitmproxy_name() -> None:
    chain = AddonChain([Member("a", []), Named("b", [])])
    assert chain.get("member") is chain.members[0]
    assert chain.get("custom-name") is chain.members[1] and chain.get("named") is None


def test_only_hooks_some_member_has_are_offered_and_sync_ones_stay_sync() -> None:
    chain = AddonChain([Member("a", []), AsyncMember("b", [])])
    assert not hasattr(chain, "response") and not hasattr(chain, "update")
    assert not inspect.iscoroutinefunction(chain.requestheaders)  # type: ignore[attr-defined]
    assert inspect.iscoroutinefunction(chain.request)  # type: ignore[attr-defined]
    assert chain.get("asyncmember") is chain.members[1] and chain.get("absent") is None


def test_the_service_is_one_addon_holding_every_member_in_hook_order() -> None:
    (chain,) = build_addons(MemoryStore())
    assert isinstance(chain, AddonChain)
    names = [type(member).__name__ for member in chain.members]
    assert names == [
        "EpisodeBinding",
        "InternalEndpoints",
        "ReplayResponder",
        "ContextualRouting",
        "UpstreamGuard",
        "PageRewriter",
        "KnowledgeWatch",
        "UpstreamTimeout",
        "UpstreamErrors",
        "BodyCollector",
    ]
