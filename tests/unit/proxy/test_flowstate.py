"""What the addons keep on a flow lives in one typed state under one key."""

from __future__ import annotations

from mitmproxy.test import tflow

from proxy.flowstate import KEY, FlowState, state_of


def test_a_flow_gets_one_empty_state_that_stays() -> None:
    flow = tflow.tflow()
    state = state_of(flow)
    assert state == FlowState() and state.episode is None and not state.own_response
    state.own_response = True
    assert state_of(flow) is state and flow.metadata[KEY] is state


def test_another_addons_value_under_the_key_is_not_taken_for_ours() -> None:
    flow = tflow.tflow()
    flow.metadata[KEY] = {"not": "ours"}
    assert state_of(flow) == FlowState()
