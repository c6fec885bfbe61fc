from api.analysis.summary import summarise


def test_report_pairs_shown_and_dismissed_per_load() -> None:
    events = [
        {"type": "episode_created", "source": "api"},
        {"type": "page_served", "kind": "document", "changed": True, "load_index": 1},
        {"type": "popup_injected", "kind": "survey"},
        {"type": "popup_shown", "load": 1, "url": "u1", "t": 1000},
        {"type": "blocked_interaction", "load": 1, "url": "u1", "input": "click"},
        {"type": "popup_dismissed", "load": 1, "url": "u1", "t": 2500, "how": "escape"},
        {"type": "page_served", "kind": "fragment", "changed": False},
        {"type": "random_draw", "fired": True},
        {"type": "random_draw", "fired": False},
        {"type": "popup_shown", "load": 2, "url": "u2", "t": 5000},
        {"type": "task_result", "source": "agent", "success": True},
    ]
    report = summarise(events)
    assert report["pages"] == {
        "served": 2,
        "navigations": 1,
        "shifted": 1,
        "skipped": 0,
        "errors": 0,
    }
    popups = report["popups"]
    assert popups["injected_by_kind"] == {"survey": 1}
    assert (popups["shown"], popups["dismissed"], popups["blocked_interactions"]) == (2, 1, 1)
    assert popups["dismissed_by"] == {"escape": 1}
    assert popups["time_to_dismiss_ms"] == {
        "count": 1,
        "median": 1500.0,
        "mean": 1500.0,
        "max": 1500.0,
    }
    assert report["perceptual"] == {
        "pages_drifted": 0,
        "pages_not_drifted": 0,
        "median_share": None,
        "fragments_drifted": 0,
        "fragments_not_drifted": 0,
        "fragments_unshifted": 0,
        "markup_left": {},
        "script_answers": 0,
    }
    assert report["random_draws"] == {"draws": 2, "fired": 1}
    assert report["agent_events"] == {"task_result": 1}
