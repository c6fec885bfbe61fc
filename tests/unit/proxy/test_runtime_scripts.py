from __future__ import annotations

from mitmproxy.test import tutils

from proxy.runtime_scripts import is_current, runtime_script_asked, version_asked
from shifts.runtime import runtime_version


def test_only_a_get_of_a_known_script_under_the_prefix_asks_for_one() -> None:
    assert runtime_script_asked(tutils.treq(path=b"/__ss/r.js?v=1"), "/__ss/") == "r.js"
    assert runtime_script_asked(tutils.treq(path=b"/__ss/i.js"), "/__ss/") == "i.js"
    assert runtime_script_asked(tutils.treq(path=b"/__ss/b"), "/__ss/") is None
    assert runtime_script_asked(tutils.treq(path=b"/r.js"), "/__ss/") is None
    posted = tutils.treq(method=b"POST", path=b"/__ss/r.js")
    assert runtime_script_asked(posted, "/__ss/") is None


def test_the_version_asked_is_the_current_one_only_when_it_is_its_hash() -> None:
    assert version_asked(tutils.treq(path=b"/__ss/r.js?v=abc")) == "abc"
    assert version_asked(tutils.treq(path=b"/__ss/r.js")) is None
    assert is_current("r.js", runtime_version()) and not is_current("r.js", "abc")
