from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proxy import json_markup
from proxy.json_markup import (
    is_json_type,
    located_scripts,
    markup_strings,
    named_scripts,
    summed_notes,
    unknown_scripts,
    with_strings_replaced,
)

# phpMyAdmin's answer to an AJAX page change (5.2, trimmed): the screen in `message`, its menu,
# and strings that are no markup to insert (`title` is, but nothing the page inserts as such).
PHPMYADMIN = (
    '{"success":true,"message":"\\n<div class=\\"table-responsive\\"><table class=\\"table\\">'
    '<tr><td><a href=\\"index.php?route=\\/sql\\" class=\\"ajax\\">Browse<\\/a><\\/td><\\/tr>'
    '<\\/table><\\/div>","title":"<title>db \\/ t<\\/title>","menu":"<ul id=\\"topmenu\\">'
    '<li>\\u00e9<\\/li><\\/ul>","scripts":["sql.js"],"selflink":"<div id=\\"selflink\\">'
    '<\\/div>","params":{"db":"shop","table":"<t>"}}'
)


def values(text: str) -> list[tuple[str, str]]:
    return [(found.key, found.value) for found in markup_strings(text)]


def test_the_markup_of_an_answer_is_found_by_its_key_and_its_text() -> None:
    assert values(PHPMYADMIN) == [
        ("message", json.loads(PHPMYADMIN)["message"]),
        ("menu", '<ul id="topmenu"><li>é</li></ul>'),
        ("selflink", '<div id="selflink"></div>'),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Drupal's AJAX commands: an array of objects, the markup an `insert` or `openDialog`
        # puts into the page in `data`; never the field's source `editorGetUntransformedText`
        # hands an editor, which saves it back.
        (
            '[{"command":"settings","settings":{}},{"command":"insert","data":"<div>x</div>"},'
            '{"command":"editorGetUntransformedText","data":"<p class=\\"lead\\">x</p>"},'
            '{"selector":"#m","data":"<div>d</div>","command":"openDialog"}]',
            [("data", "<div>x</div>"), ("data", "<div>d</div>")],
        ),
        # An array's items are its key's (GitLab's `notes` carry `note_html`).
        ('{"html":["<li>a</li>","<li>b</li>"]}', [("html", "<li>a</li>"), ("html", "<li>b</li>")]),
        ('{"notes":[{"note":"a < b","note_html":"<p>a</p>"}]}', [("note_html", "<p>a</p>")]),
        ('{"x":{"html":[["<i>1</i>"],{"html":"<i>2</i>"}]}}', [("html", "<i>1</i>"), ("html", "<i>2</i>")]),  # noqa: E501
        # The escaped `<` of PHP's JSON_HEX_TAG, and markup after whitespace.
        ('{"html":"\\u003Cb\\u003Ex\\u003C/b\\u003E"}', [("html", "<b>x</b>")]),
        # phpMyAdmin's answer that an action failed: its `success` flag after the markup.
        ('{"error":"\\n <!--m--><p>k</p>","success":false}', [("error", "\n <!--m--><p>k</p>")]),
        # Wagtail's ModalWorkflow screens: `html`, and `htmlFragment`, the screen its chooser
        # puts in place of a tab (an image's duplicate, an upload form shown again with its
        # errors); its chosen image's `html` is an editor's preview, never saved.
        (
            '{"step":"duplicate_found","htmlFragment":"<section id=\\"tab-upload\\">d</section>"}',
            [("htmlFragment", '<section id="tab-upload">d</section>')],
        ),
        ('{"step":"browse","html":"<div>b</div>"}', [("html", "<div>b</div>")]),
        # WordPress's REST API: what the block editor saves back is never touched.
        ('{"content":{"raw":"<p>x</p>","rendered":"<p>x</p>"}}', [("rendered", "<p>x</p>")]),
        # ... nor what its admin-ajax hands the classic editor to insert into the post.
        ('{"success":true,"data":"<img class=\\"wp-image-5\\" src=\\"/a.png\\">"}', []),
        # A message of no answer phpMyAdmin's shape (a chat's source beside its `cooked`).
        ('{"message":"<p>hi</p>","cooked":"<p>hi</p>","success":"yes"}', []),
        # A key whose name says markup, but a value that is none; a key that says nothing.
        ('{"message":"Saved <3","html":"< b","body":"<p>x</p>","text":"<p>y</p>"}', []),
        # A value that names a key: a key is no value.
        ('{"<p>x</p>":"html"}', []),
        # No JSON at all (a JSONP callback, a broken answer): nothing.
        ('cb({"html":"<p>x</p>"})', []),
        ('{"html":"<p>x</p>"', []),
        ('"<p>top</p>"', []),
    ],
)  # fmt: skip
def test_what_counts_as_markup(text: str, expected: list[tuple[str, str]]) -> None:
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "left"),
    [
        # phpMyAdmin's `title` (its document title, no screen): left, and counted; so is a
        # value that reads as a tag (`<t>`, a table's name), by the rule markup is found by.
        (PHPMYADMIN, {"title": 1, "table": 1}),
        # What an editor saves back, and markup under a key no rule knows, each string counted.
        ('{"content":{"raw":"<p>x</p>","rendered":"<p>x</p>"}}', {"raw": 1}),
        ('{"success":true,"data":"<img class=\\"wp-image-5\\">"}', {"data": 1}),
        ('{"rows":["<li>a</li>",["<li>b</li>"],"c",{"list":"<p>d</p>"}]}', {"list": 1, "rows": 2}),
        # No markup left: none where no string is markup, nor in a key, nor beside the markup.
        ('{"html":"<p>x</p>","note":"a < b","<p>k</p>":1}', {}),
        ('{"id":3,"name":"a < b"}', {}),
        ('cb({"list":"<p>x</p>"})', {}),
    ],
)  # fmt: skip
def test_markup_no_rule_reads_is_counted_by_its_key(text: str, left: dict[str, int]) -> None:
    answer = json_markup.read_answer(text)
    assert answer.left == left
    assert json_markup.left_keys(answer) == left


def test_the_keys_markup_was_left_under_are_bounded_for_the_log() -> None:
    # 30 keys, the ones with more strings last: the log keeps the 20 that left the most.
    answer = json_markup.read_answer(
        json.dumps({f"{i:02}{'k' * 80}": ["<p>x</p>"] * (1 + i // 10) for i in range(30)})
    )
    keys = json_markup.left_keys(answer)
    assert len(answer.left) == 30 and len(keys) == json_markup.MAX_LEFT_KEYS
    assert all(len(key) == 64 for key in keys) and list(keys.values()) == [3] * 10 + [2] * 10
    # Names cut to the same 64 characters: their strings added up, not one of them kept.
    long = "k" * 64
    answer = json_markup.read_answer(json.dumps({long + "1": "<p>", long + "2": "<p>"}))
    assert json_markup.left_keys(answer) == {long: 2}


def test_the_answer_is_written_back_byte_for_byte_but_the_strings_replaced() -> None:
    replaced = [(found, found.value.replace("<", "<x-")) for found in markup_strings(PHPMYADMIN)]
    written = with_strings_replaced(PHPMYADMIN, replaced)
    # What is outside the strings, and the strings left alone, as the upstream wrote them.
    assert written.startswith('{"success":true,"message":"\\n<x-div class=\\"table-responsive')
    assert '"title":"<title>db \\/ t<\\/title>"' in written
    assert written.endswith('"scripts":["sql.js"],' + written[written.index('"selflink"') :])
    assert '"params":{"db":"shop","table":"<t>"}}' in written
    # A string written in ASCII (its `é` escaped) stays so.
    assert '"menu":"<x-ul id=\\"topmenu\\"><x-li>\\u00e9' in written
    decoded, original = json.loads(written), json.loads(PHPMYADMIN)
    assert decoded["menu"] == original["menu"].replace("<", "<x-")
    assert {k: v for k, v in decoded.items() if k not in ("message", "menu", "selflink")} == {
        k: v for k, v in original.items() if k not in ("message", "menu", "selflink")
    }


def test_a_string_written_as_it_is_stays_unescaped() -> None:
    text = '{"html":"<p>é</p>"}'
    (found,) = markup_strings(text)
    assert with_strings_replaced(text, [(found, "<p>è</p>")]) == '{"html":"<p>è</p>"}'


# Any JSON: the strings found are exactly the markup values of the keys the rules name (a model
# of them written another way: on the decoded values, each object with its own keys), and
# replacing them leaves every other value as it was.
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(["<p>x</p>", " <b>y</b>", "plain", "<", '<a href="/">"q"</a>', "é<i>é</i>"])
    | st.sampled_from(["insert", "openDialog", "{[:,]}", '\\"<p>', "\n<br>", "<!-- c -->"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "html",
                    "data",
                    "raw",
                    "message",
                    "menu",
                    "note_html",
                    "content",
                    "success",
                    "command",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(_json, st.booleans())
def test_any_answer_keeps_all_but_its_markup(value: object, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    found = markup_strings(text)
    changed = json.loads(with_strings_replaced(text, [(f, f.value + "<hr>") for f in found]))

    def is_markup(text: str) -> bool:
        stripped = text.lstrip(" \t\r\n")
        after = stripped[1:2]
        return stripped[:1] == "<" and (after == "!" or (after.isascii() and after.isalpha()))

    def names_markup(key: str, siblings: dict[str, object]) -> bool:
        return (
            key.endswith("html")
            or (key in ("message", "menu") and isinstance(siblings.get("success"), bool))
            or (key == "data" and siblings.get("command") in ("insert", "openDialog"))
        )

    def expected(node: object, markup: bool) -> object:
        if isinstance(node, dict):
            return {k: expected(v, names_markup(k, node)) for k, v in node.items()}
        if isinstance(node, list):
            return [expected(item, markup) for item in node]
        if isinstance(node, str) and markup and is_markup(node):
            return node + "<hr>"
        return node

    assert changed == expected(value, False)


def test_json_types() -> None:
    assert is_json_type("application/json") and is_json_type("application/vnd.api+json")
    assert is_json_type("text/json")
    assert not is_json_type("text/html") and not is_json_type(None)
    assert not is_json_type("application/x-ndjson")  # a stream of answers, not one


def test_notes_of_several_strings_are_summed_and_the_share_recomputed() -> None:
    complete = {"assets": "complete"}
    notes = summed_notes(
        [
            {"locator_drift": {"interactive": 4, "locators_changed": 1, "share": 0.25, **complete}},
            {"locator_drift": {"interactive": 0, "locators_changed": 0, "share": 0.0, **complete}},
            {"locator_drift": {"interactive": 4, "locators_changed": 3, "share": 0.75, "hooks": 2}},
        ]
    )
    assert notes == {
        "locator_drift": {
            "interactive": 8,
            "locators_changed": 4,
            "share": 0.5,
            "assets": "complete",
            "hooks": 2,
        }
    }
    assert summed_notes([]) == {}


def test_an_answer_too_deep_for_the_parser_is_no_markup() -> None:
    """Nested past Python's recursion limit (a browser reads it): served as it came, not a 502
    for a `RecursionError` out of the parse."""
    assert markup_strings('{"a":' * 3000 + '"x < y"' + "}" * 3000) == []
    assert markup_strings("[" * 3000 + '{"html":"<p>x</p>"}' + "]" * 3000) == []


def test_an_answer_with_no_markup_where_it_is_looked_for_is_not_walked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A few MB of API data with a `<` in some description took seconds to walk token by
    token, on the event loop: one parse says there is nothing to walk for."""

    class Unwalked:
        def finditer(self, text: str) -> None:
            raise AssertionError("walked")

    monkeypatch.setattr(json_markup, "_TOKEN", Unwalked())
    rows = [{"id": n, "description": "a < b", "html": None, "data": [1, "x"]} for n in range(50)]
    assert markup_strings(json.dumps(rows)) == []


def test_the_scripts_an_answer_names() -> None:
    """phpMyAdmin's `scripts` (names under its `js/dist/`, in an answer of its shape), Drupal's
    `add_js` (URLs with a version query, kept: the URL its page loads); not a string that only
    mentions a script, nor JSON data (a file listing's names, a label), nor a URL whose query
    ends in `.js`."""
    answer = json.dumps(
        {
            "success": True,
            "scripts": [{"name": "sql.js", "fire": 1}, {"name": "table/change.js"}, "x.js?v=1"],
            "commands": [{"command": "add_js", "data": [{"src": "/core/misc/ajax.js?v=10.1"}]}],
            "other": ["see x.js", "rows.json", "old.js", "https://cdn.test/lib.js", "Node.js"],
            "files": [{"name": "config.js"}],
            "links": {"scripts": ["index.php?route=/logout&a.js"]},
        }
    )
    assert named_scripts(answer) == [
        "sql.js",
        "table/change.js",
        "x.js?v=1",
        "/core/misc/ajax.js?v=10.1",
    ]
    # Only an answer of phpMyAdmin's shape names its `scripts`.
    assert named_scripts(json.dumps({"scripts": ["sql.js"], "html": "<p>x</p>"})) == []
    assert named_scripts(json.dumps({"success": True, "scripts": ["/i.php?x=a.js"]})) == []


@pytest.mark.parametrize(
    ("name", "known"),
    [
        ("sql.js", True),  # a name under the page's script directory
        ("dist/sql.js", True),
        ("table/change.js", False),  # (only `/js/dist/table.js` is known)
        ("ql.js", False),  # a path ends at a `/`
        ("/js/dist/sql.js", True),
        ("/sql.js", False),  # from the root: that path only
        ("http://app.test/js/dist/sql.js", True),
        ("http://cdn.test/js/dist/sql.js", False),  # another origin's
    ],
)
def test_a_named_script_is_known_by_its_path(name: str, known: bool) -> None:
    urls = ["http://app.test/js/dist/sql.js?v=5.2", "http://app.test/js/dist/table.js?v=5.2"]
    assert unknown_scripts([name], urls) == ([] if known else [name])


def test_an_unknown_script_is_placed_by_the_known_ones_named_beside_it() -> None:
    """phpMyAdmin's ajax.js loads a name under `vendor/` from `js/` and any other from
    `js/dist/`, with the version query: each is placed under the base the known names of its
    directory are under, else that of the nearest directory above it that has one."""
    known = [
        "http://h.test/js/vendor/jquery/jquery.min.js?v=5.2.1",
        "http://h.test/js/dist/ajax.js?v=5.2.1",
    ]
    named = ["vendor/jquery/jquery.min.js", "ajax.js", "sql.js", "table/change.js"]
    unknown = ["vendor/jquery/jquery.uitablefilter.js", "sql.js", "table/change.js"]
    assert located_scripts(unknown, [*named, unknown[0]], known) == [
        "http://h.test/js/vendor/jquery/jquery.uitablefilter.js?v=5.2.1",
        "http://h.test/js/dist/sql.js?v=5.2.1",
        "http://h.test/js/dist/table/change.js?v=5.2.1",
    ]
    # From the root: the origin's; a URL: itself; nothing known named beside it: not placed.
    elsewhere = ["/core/a.js", "http://h.test/b.js"]
    assert located_scripts(elsewhere, elsewhere, known) == [
        "http://h.test/core/a.js",
        "http://h.test/b.js",
    ]
    assert located_scripts(["sql.js"], ["sql.js"], known) == []


def test_a_named_script_is_known_where_the_names_beside_it_place_it() -> None:
    """phpMyAdmin's SQL screens name `sql.js` (its `js/dist/sql.js`) beside `ajax.js`, and
    its pages load CodeMirror's `js/vendor/codemirror/mode/sql/sql.js`: another script of
    that name, elsewhere. `sql.js` is unknown (and so learnt at `js/dist/`), not known by
    CodeMirror's; a name nothing known is named beside is still known by its path."""
    known = [
        "http://h.test/js/vendor/jquery/jquery.min.js?v=5.2.1",
        "http://h.test/js/dist/ajax.js?v=5.2.1",
        "http://h.test/js/vendor/codemirror/mode/sql/sql.js?v=5.2.1",
    ]
    named = ["vendor/jquery/jquery.min.js", "ajax.js", "sql.js"]
    unknown = unknown_scripts(named, known)
    assert unknown == ["sql.js"]
    assert located_scripts(unknown, named, known) == ["http://h.test/js/dist/sql.js?v=5.2.1"]
    # Once learnt where it was placed, it is known.
    assert unknown_scripts(named, [*known, "http://h.test/js/dist/sql.js?v=5.2.1"]) == []
    # Named alone: by its path, as before.
    assert unknown_scripts(["sql.js"], known) == []
