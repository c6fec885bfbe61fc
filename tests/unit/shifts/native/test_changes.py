"""The compiled change map (`shifts.native.changes`) against its definition
(`locators._changes_read`): the same records, equal and in the same order, for the interactive
elements of every saved page and of generated trees, moved by wrappers and renamed as the drifts
move and rename them, at several lengths of text kept; or None (the Python then reads them all)
only where the C one says it cannot. Its text is `_short_text`'s: the words of every text below
the element (not a comment's nor a PI's) as Python's `str.split` splits them, decoded from
UTF-8 as strictly as Python decodes."""

from __future__ import annotations

import ctypes
import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import native
from shifts.document import CHANGE_MAP_TEXT_CHARS
from shifts.interactive import interactive_elements
from shifts.perceptual.locators import (
    _all_locators,
    _all_names,
    _changes,
    _changes_read,
    _paths,
    _short_text,
)
from tests.helpers.fixtures import fixture_pages
from tests.helpers.generated import fragments

LIMITS = (1, 7, CHANGE_MAP_TEXT_CHARS)


def test_it_is_built_here() -> None:
    # (Else every comparison below would compare the Python with itself.)
    assert native.changes is not None, native.why_not


def drifted(root: etree._Element, salt: str) -> tuple[list[etree._Element], dict, dict]:
    """The page's interactive elements, their locators before, and the names of those a
    "drift" renamed after: a third of them wrapped (their paths and their later siblings'
    change), some ids and classes renamed, some hooks dropped, each by a hash of the element's
    place, as the drifts decide by coins."""
    tree = root.getroottree()
    targets = interactive_elements(root)
    before = dict(zip(targets, _all_locators(tree, targets), strict=True))

    def coin(element: etree._Element, what: str) -> int:
        return hashlib.sha1(f"{salt}{what}{tree.getpath(element)}".encode()).digest()[0] % 3

    touched = []
    for element in targets:
        if coin(element, "id") == 0 and element.get("id"):
            element.set("id", element.get("id", "") + "-x")
        if coin(element, "class") == 0 and element.get("class") is not None:
            element.set("class", "renamed " + element.get("class", ""))
        if coin(element, "hook") == 0:
            for name in [name for name in element.attrib if name.startswith("data-")][:1]:
                del element.attrib[name]
        touched.append(element)
    for element in targets:
        parent = element.getparent()
        if coin(element, "wrap") == 0 and parent is not None:
            wrapper = element.makeelement("x-wrap")
            element.addprevious(wrapper)
            wrapper.append(element)
    after = dict(zip(touched[::2], _all_names(touched[::2]), strict=True))
    return targets, before, after


def recorded_alike(root: etree._Element, salt: str = "") -> int:
    """Compare the two on `root`'s interactive elements after a "drift" (`drifted`), at each
    length of text kept; how many records were compared."""
    assert native.changes is not None
    targets, before, after = drifted(root, salt)
    paths = _paths(root.getroottree(), targets)
    compared = 0
    for limit in LIMITS:
        expected = _changes_read("locator_drift", targets, paths, before, after, limit)
        found = native.changes("locator_drift", targets, paths, before, after, limit)
        assert found == expected
        assert [element for element, _ in found] == [element for element, _ in expected]
        compared += len(found)
    return compared


def test_every_saved_page_records_alike() -> None:
    compared = 0
    for page in fixture_pages():
        compared += recorded_alike(etree.fromstring(page.read_bytes(), etree.HTMLParser()))
    assert compared > 1_000


def test_an_element_whose_locators_are_the_same_has_no_record() -> None:
    root = etree.fromstring(
        '<html><body><a id="a" class="x  y" data-t="1">go <b>now</b></a><button>b</button>'
        "</body></html>",
        etree.HTMLParser(),
    )
    tree = root.getroottree()
    a, button = root.iter("a", "button")
    before = dict(zip([a, button], _all_locators(tree, [a, button]), strict=True))
    paths = ["/html/body/a", "/html/body/button"]
    assert native.changes is not None
    # Neither moved; the names asked again of `a` are its own.
    after = {a: before[a][:3]}
    assert native.changes("s", [a, button], paths, before, after, 80) == []
    # `a` renamed: its record, before and after; `button` moved.
    a.set("id", "b")
    after = dict(zip([a], _all_names([a]), strict=True))
    moved = ["/html/body/a", "/html/body/div/button"]
    assert native.changes("s", [a, button], moved, before, after, 80) == [
        (
            a,
            {
                "shift": "s",
                "tag": "a",
                "text": "go now",
                "before": {
                    "id": "a",
                    "classes": ["x", "y"],
                    "hooks": {"data-t": "1"},
                    "path": "/html/body/a",
                },
                "after": {
                    "id": "b",
                    "classes": ["x", "y"],
                    "hooks": {"data-t": "1"},
                    "path": "/html/body/a",
                },
            },
        ),
        (
            button,
            {
                "shift": "s",
                "tag": "button",
                "text": "b",
                "before": {"id": None, "classes": [], "hooks": {}, "path": "/html/body/button"},
                "after": {"id": None, "classes": [], "hooks": {}, "path": "/html/body/div/button"},
            },
        ),
    ]


# Every kind of space Python's `str.split` splits at (and one it does not: U+200B), words of
# one to four UTF-8 bytes at the ends of their ranges, runs longer than a text kept.
SPACES = "\t\n\r\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
CONTROL_SPACES = "\x0b\x0c\x1c\x1d\x1e\x1f"  # (which the HTML parser keeps, lxml's API refuses)
WORDS = ["ab", "\x7f\x80\u07ff\u0800\ud7ff\ue000\uffff\U00010000\U0010ffff", "x" * 45, "\u200b"]
TEXT_PART = st.sampled_from(["", " ", SPACES, "word ", "  \n" * 30, *WORDS])


def cut_alike(root: etree._Element, limit: int) -> None:
    before = {root: (None, None, (), "/body/div")}
    assert native.changes is not None
    found = native.changes("s", [root], ["/body/p"], before, {}, limit)
    expected = " ".join("".join(root.itertext()).split())[:limit]
    assert found is not None and found[0][1]["text"] == expected == _short_text(root, limit)


LIMIT = st.sampled_from([1, 2, 5, 80])


@given(
    parts=st.lists(st.one_of(TEXT_PART, st.just(CONTROL_SPACES)), max_size=12),
    kinds=st.lists(st.sampled_from(["<span>", "<!-- c -->", "<?pi x y>", "<b></b>"]), max_size=12),
    limit=LIMIT,
)
def test_generated_texts_are_cut_alike(parts: list[str], kinds: list[str], limit: int) -> None:
    """Texts split among children, comments and PIs (whose own texts are no element's), as the
    HTML parser reads them, at the ends of the texts kept."""
    markup = parts[0] if parts else ""
    for part, kind in zip(parts[1:], kinds, strict=False):
        half = len(part) // 2
        inner = f"{part[:half]}</span>" if kind == "<span>" else ""
        markup += f"{kind}{inner}{part[half:]}"
    page = f"<html><body><div>{markup}</div></body></html>"
    div = etree.fromstring(page, etree.HTMLParser()).find("body/div")
    assert div is not None
    cut_alike(div, limit)


@given(parts=st.lists(TEXT_PART, max_size=8), limit=LIMIT)
def test_cdata_is_text(parts: list[str], limit: int) -> None:
    """CDATA sections (an XML tree's: the HTML parser makes none), as texts and tails."""
    root = etree.Element("div")
    for part in (part.replace("\uffff", "\ufffd") for part in parts):  # (lxml's API refuses it)
        child = etree.SubElement(root, "span")
        child.text = etree.CDATA(part) if part else None
        child.tail = part
    wrapper = etree.Element("body")
    wrapper.append(root)
    cut_alike(root, limit)


TAGS = ["a", "div", "span", "p", "x-wrap", "li", "button", "input"]
NAMES = ["id", "class", "data-testid", "data-qa", "href", "role", "onclick", "tabindex"]
VALUES = ["", "a b", "é", "x&amp;y", "  ", "\u00a0c\u2003d"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragment=fragments(TAGS, NAMES, VALUES, width=5), salt=st.text(max_size=3))
def test_generated_trees_record_alike(fragment: str, salt: str) -> None:
    recorded_alike(
        etree.fromstring(f"<html><body>{fragment}</body></html>", etree.HTMLParser()), salt
    )


def overwrite(element: etree._Element, steps: str, old: str, raw: bytes) -> None:
    """Put `raw` in place of the text `old` (of the same length) of the text node `steps`
    leads to from `element`'s node (`c`: its first child, `n`: the next node), in libxml2's
    tree: bytes no parser would leave there (libxml2 replaces what is not UTF-8), to see that
    the C one declines them where Python's decoder refuses them."""
    assert len(raw) == len(old.encode())
    # (`struct LxmlElement`: the object's head, its document, then its node; `xmlNode`: its
    # children at 24 bytes, the next node at 48, a text node's content at 80: libxml2's layout
    # on 64-bit machines)
    node = ctypes.c_void_p.from_address(id(element) + 16 + 8).value
    for step in steps:
        assert node is not None
        node = ctypes.c_void_p.from_address(node + {"c": 24, "n": 48}[step]).value
    assert node is not None
    content = ctypes.c_void_p.from_address(node + 80).value
    assert content is not None and ctypes.string_at(content) == old.encode()
    ctypes.memmove(content, raw, len(raw))


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="libxml2's 64-bit layout")
@pytest.mark.parametrize(
    "raw",
    [
        b"ab\xffcd",  # (no UTF-8 byte)
        b"ab\xc0\xafd",  # (an overlong "/")
        b"a\xed\xa0\x80d",  # (a surrogate)
        b"\xf4\x90\x80\x80d",  # (past U+10FFFF)
        b"abc\xe2\x82",  # (cut short at the text's end)
        b"\xe2\x28\xa1de",  # (a continuation byte missing)
        b"\xe0\x80\xafde",  # (an overlong "/" of three bytes)
        b"\xf0\x80\x80\xafd",  # (of four)
    ],
)
def test_text_that_is_not_utf8_is_declined(raw: bytes) -> None:
    root = etree.fromstring("<html><body><a>vwxyz</a></body></html>", etree.HTMLParser())
    a = root.find(".//a")
    assert a is not None
    overwrite(a, "c", "vwxyz", raw)
    with pytest.raises(UnicodeDecodeError):
        raw.decode()
    before = {a: (None, None, (), "/html/body/a")}
    assert native.changes is not None
    # Past the characters kept, too: lxml decodes a text whole.
    for limit in (1, 80):
        assert native.changes("s", [a], ["/x"], before, {}, limit) is None  # type: ignore[misc]
    # Its path unchanged: no record, no text read.
    assert native.changes("s", [a], ["/html/body/a"], before, {}, 80) == []  # type: ignore[misc]


def test_what_only_the_python_reads() -> None:
    assert native.changes is not None
    root = etree.fromstring("<r><a>x</a><b/></r>")
    a, b = root
    before = {a: (None, None, (), "/r/a"), b: (None, None, (), "/r/b")}
    moved = ["/q/a", "/q/b"]
    assert native.changes("s", [a, b], moved, before, {}, 9) == _changes_read(
        "s", [a, b], moved, before, {}, 9
    )
    # A namespaced element (its tag `{urn:x}a`), an entity's reference below one.
    namespaced = etree.fromstring('<r xmlns="urn:x"><a>x</a></r>')[0]
    parser = etree.XMLParser(resolve_entities=False)
    with_entity = etree.fromstring('<!DOCTYPE r [<!ENTITY e "v">]><r><a>x&e;y</a></r>', parser)[0]
    for element in (namespaced, with_entity):
        asked = {element: (None, None, (), "/r/a")}
        assert native.changes("s", [element], ["/q"], asked, {}, 9) is None
        assert _changes("s", [element], ["/q"], asked, {})[0][0] is element
    # Locators not as the readers make them, a missing element, lists of two lengths.
    for was, now in (
        ((None, None, ()), None),
        ((None, 3, (), "/r/a"), None),
        ((None, None, [], "/r/a"), None),
        ((None, None, (), "/r/a"), (None, None)),
        ((None, None, (), "/r/a"), [None, None, ()]),
    ):
        after = {} if now is None else {a: now}
        assert native.changes("s", [a], ["/q"], {a: was}, after, 9) is None
    assert native.changes("s", [a, b], ["/q"], before, {}, 9) is None
    assert native.changes("s", [a], ["/q"], {}, {}, 9) is None
    with pytest.raises(KeyError):
        _changes("s", [a], ["/q"], {}, {})
    # A proxy with no node, a comment, no element: the Python's in its own words.
    empty = etree._Element.__new__(etree._Element)
    comment = etree.fromstring("<r><!-- c --></r>")[0]
    parser = etree.XMLParser()  # (an element of a subclass, which may read its text its own way)
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup(element=etree.ElementBase))
    own = etree.fromstring("<r><a/></r>", parser)[0]
    for element in (empty, comment, own, "a"):
        asked = {element: (None, None, (), "/r/a")}
        assert native.changes("s", [element], ["/q"], asked, {}, 9) is None  # type: ignore[list-item]
    # A text kept is at least a character, at most 4,096; a limit that is no int the Python
    # reads only where it cuts a text (none here).
    assert native.changes("s", [a], ["/q"], before, {}, 4096) is not None
    for limit in (-1, 0, 4097, 2**70, 9.0, "9", True):
        assert native.changes("s", [a], ["/q"], before, {}, limit) is None  # type: ignore[arg-type]
    assert _changes_read("s", [a], ["/r/a"], before, {}, "9") == []  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        native.changes("s", [a], ["/q"], before, {})  # type: ignore[call-arg]


def test_an_error_in_a_comparison_is_raised() -> None:
    class Unequal(str):
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("asked")

        __hash__ = str.__hash__

    root = etree.fromstring("<r><a/></r>")
    a = root[0]
    before = {a: (Unequal("i"), None, (), "/r/a")}
    assert native.changes is not None
    with pytest.raises(RuntimeError, match="asked"):
        native.changes("s", [a], ["/r/a"], before, {a: ("j", None, ())}, 9)
    with pytest.raises(RuntimeError, match="asked"):
        _changes_read("s", [a], ["/r/a"], before, {a: ("j", None, ())}, 9)


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="libxml2's 64-bit layout")
def test_text_is_read_as_far_as_the_python_reads_it() -> None:
    """As far as the Python decodes a text, the C checks it, no less far: a leaf's text whole
    (lxml's `text`, every adjacent text and CDATA node), a container's parts until one of the
    Python's checks finds enough words (here the third part, past the characters kept)."""
    assert native.changes is not None
    page = "<r><a>a          <b/>bc<b/>XYZ</a><p>abcd<![CDATA[xy]]></p><i>" + "x" * 90
    root = etree.fromstring(page + "<b/>XYZ</i></r>", etree.XMLParser(strip_cdata=False))
    a, p, i = root
    overwrite(a, "cnnnn", "XYZ", b"\xffYZ")  # (a's third part)
    overwrite(p, "cn", "xy", b"\xff\xfe")  # (p's CDATA after its text)
    overwrite(i, "cnn", "XYZ", b"\xffYZ")  # (i's second part, which the Python never reads)
    for element in (a, p):
        before = {element: (None, None, (), "/r/x")}
        with pytest.raises(UnicodeDecodeError):
            _changes_read("s", [element], ["/q"], before, {}, 4)
        assert native.changes("s", [element], ["/q"], before, {}, 4) is None
    before = {i: (None, None, (), "/r/i")}
    assert native.changes("s", [i], ["/q"], before, {}, 80) == _changes_read(
        "s", [i], ["/q"], before, {}, 80
    )


def test_a_look_up_that_empties_the_locators_frees_nothing_in_use() -> None:
    """An object's code run by a look-up (a key of `after` whose hash is the element's) that
    takes the element's locators out of `before`: they are held meanwhile."""
    root = etree.fromstring("<r><a>x</a></r>")
    a = root[0]
    before = {a: tuple([None, None, (), "/r/a", *([0] * 30)])}  # (no tuple kept for reuse)

    class SameHash:
        def __hash__(self) -> int:
            return hash(a)

        def __eq__(self, other: object) -> bool:
            before.clear()
            return False

    assert native.changes is not None
    found = native.changes("s", [a], ["/q"], before, {SameHash(): 1}, 9)
    assert found is not None and found[0][1]["before"]["path"] == "/r/a"


def test_names_none_and_hooks_repeated_are_read_as_the_python_reads_them() -> None:
    root = etree.fromstring("<r><a>x</a></r>")
    a = root[0]
    before = {a: ("i", None, (("data-h", "1"), ("data-h", "2")), "/r/a")}
    assert native.changes is not None
    for after in ({a: None}, {a: ("j", "c", ())}):
        found = native.changes("s", [a], ["/r/a"], before, after, 9)  # type: ignore[arg-type]
        assert found == _changes_read("s", [a], ["/r/a"], before, after, 9)  # type: ignore[arg-type]
    (_, change), *_ = native.changes("s", [a], ["/q"], before, {}, 9) or []
    assert change["before"]["hooks"] == {"data-h": "2"}  # (as `dict` takes them: the last)


def test_a_path_is_compared_as_python_compares_it() -> None:
    """`!=`, not identity: a path that is not equal to itself differs."""
    root = etree.fromstring("<r><a>x</a></r>")
    a = root[0]
    odd = float("nan")
    before = {a: (None, None, (), odd)}
    assert native.changes is not None
    found = native.changes("s", [a], [odd], before, {}, 9)  # type: ignore[list-item]
    assert found == _changes_read("s", [a], [odd], before, {}, 9) != []  # type: ignore[list-item]


def test_a_tag_set_on_an_element_is_the_one_recorded() -> None:
    """lxml reads the tag its proxy keeps (`element.tag = b"a"` keeps the bytes)."""
    root = etree.fromstring("<r><a>x</a><b>y</b></r>")
    a, b = root
    a.tag = b"a"  # type: ignore[assignment]
    b.tag = "{}b"
    before = {a: (None, None, (), "/r/a"), b: (None, None, (), "/r/b")}
    assert native.changes is not None
    found = native.changes("s", [a, b], ["/q", "/q"], before, {}, 9)
    assert found == _changes_read("s", [a, b], ["/q", "/q"], before, {}, 9)
    assert [change["tag"] for _, change in found or []] == [b"a", "{}b"]


def test_records_are_out_of_the_collectors_sight_unless_they_hold_a_container() -> None:
    """A record of strings is walked by no collection (nor by `native.untrack` at the freeze);
    one whose locators hold a container stays in sight, and the caller's containers are left
    as they are."""
    import gc

    root = etree.fromstring('<r><a class="x y" data-t="1">x</a></r>')
    a = root[0]
    before = {a: ("i", "x y", (("data-t", "1"),), "/r/a")}
    assert native.changes is not None
    (_, change), *_ = native.changes("s", [a], ["/q"], before, {a: ("j", "x", ())}, 9) or []
    for value in (change, change["before"], change["after"], change["before"]["classes"]):
        assert not gc.is_tracked(value)
    assert change == _changes_read("s", [a], ["/q"], before, {a: ("j", "x", ())}, 9)[0][1]
    held: list[object] = []
    for odd in ((held, "x", (), "/r/a"), ("i", "x", (("data-t", held),), "/r/a")):
        (_, change), *_ = native.changes("s", [a], ["/q"], {a: odd}, {}, 9) or []
        assert gc.is_tracked(change) and gc.is_tracked(change["before"])
        assert gc.is_tracked(held)


def test_a_record_after_shares_what_is_the_same_before() -> None:
    """An element's record after holds the classes list and the hooks dict of its record
    before where its names hold the same (a first load's thousands of records differ in a path
    and a dropped hook): classes alike as strings, hooks only as the same tuple (no object's
    own code is run where the Python compares nothing)."""
    root = etree.fromstring('<r><a class="x y" data-t="1">x</a></r>')
    a = root[0]
    hooks = (("data-t", "1"),)
    before = {a: ("i", "x y", hooks, "/r/a")}
    assert native.changes is not None
    cases = [
        ({}, True, True),  # moved only
        ({a: ("j", "x" + " y", hooks)}, True, True),  # an id renamed (classes read anew)
        ({a: ("i", "x y", ())}, True, False),  # a hook dropped
        ({a: ("i", "x z", tuple([("data-t", "1")]))}, False, False),  # hooks read anew
    ]
    for after, classes_shared, hooks_shared in cases:
        (_, change), *_ = native.changes("s", [a], ["/q"], before, after, 9) or []
        assert change == _changes_read("s", [a], ["/q"], before, after, 9)[0][1]
        was, now = change["before"], change["after"]
        assert (now["classes"] is was["classes"]) == classes_shared
        assert (now["hooks"] is was["hooks"]) == hooks_shared
        assert now is not was


def test_hooks_the_python_reads_differently_each_time_are_read_twice() -> None:
    """The record after shares the hooks dict only where reading the hooks again makes the
    same dict and runs no object's code: not a pair that is an iterator (read once, the second
    dict is refused), nor a key of a str subclass (its hash is its own code)."""

    class Key(str):
        __hash__ = str.__hash__

    root = etree.fromstring("<r><a/></r>")
    a = root[0]
    assert native.changes is not None
    for make in (lambda: iter(("k", "v")), lambda: (Key("k"), "v")):
        before = {a: ("i", "x", (make(),), "/r/a")}
        expected = None
        try:
            expected = _changes_read("s", [a], ["/q"], before, {}, 9)
        except ValueError as error:
            with pytest.raises(ValueError, match=str(error)):
                native.changes("s", [a], ["/q"], {a: ("i", "x", (make(),), "/r/a")}, {}, 9)
            continue
        (_, change), *_ = native.changes("s", [a], ["/q"], before, {}, 9) or []
        assert [change] == [record for _, record in expected]
        assert change["after"]["hooks"] is not change["before"]["hooks"]
