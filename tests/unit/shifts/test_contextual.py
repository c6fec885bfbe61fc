from shifts import ShiftContext, apply_shifts
from shifts.contextual import route, unroute_url
from shifts.document import HtmlDocument

TARGETS = {"http://127.0.0.1:8080": "http://127.0.0.1:8081"}


def test_route_and_unroute() -> None:
    assert route("http://127.0.0.1:8080", TARGETS) == "http://127.0.0.1:8081"
    assert route("http://127.0.0.1:9999", TARGETS) is None
    assert unroute_url("http://127.0.0.1:8081/a?b", TARGETS) == "http://127.0.0.1:8080/a?b"
    assert unroute_url("http://127.0.0.1:80810/a", TARGETS) == "http://127.0.0.1:80810/a"
    assert unroute_url("/relative", TARGETS) == "/relative"


def test_target_origin_in_body_is_mapped_back_including_escaped_json() -> None:
    raw = (
        b"<a href='http://127.0.0.1:8081/x'>x</a>"
        b'<script>var u="http:\\/\\/127.0.0.1:8081\\/api";</script>'
    )
    ctx = ShiftContext(episode_id="e", seed=0, targets=TARGETS, url="http://127.0.0.1:8080/p")
    out = apply_shifts(["contextual"], HtmlDocument(raw), ctx).to_bytes()
    assert b"8081" not in out
    assert b"http://127.0.0.1:8080/x" in out and b"http:\\/\\/127.0.0.1:8080\\/api" in out
