"""The compiled texts of a page's inline styles and scripts (`shifts.native.inline_texts`)
against their definition, two XPath queries (`inline._inline_texts_read`): the same texts in the
same order on every saved page and on generated documents, or None where the C one declines."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from shifts import native
from shifts.references.inline import _inline_texts, _inline_texts_read
from tests.helpers.fixtures import fixture_pages


def read_alike(root: etree._Element) -> int:
    """Compare the two from `root` and from each element below it (the queries read the whole
    document from any); how many texts they found."""
    assert native.inline_texts is not None, native.why_not
    expected = _inline_texts_read(root)
    for element in [root, *list(root.iter(etree.Element))[::97]]:
        assert native.inline_texts(element) == expected == _inline_texts(element)
    return len(expected[0]) + len(expected[1])


def test_every_saved_page_reads_alike() -> None:
    found = sum(
        read_alike(etree.fromstring(page.read_bytes(), etree.HTMLParser()))
        for page in fixture_pages()
    )
    assert found > 100  # (the saved pages hold inline styles and scripts to compare)


def test_which_scripts_are_read_by_their_type() -> None:
    root = etree.fromstring(
        "<html><head><style>a{}</style><script>1</script><script type=''>2</script>"
        "<script type='text/javascript'>3</script><script type='module'>4</script>"
        "<script type='Module'>5</script><script type='application/json'>6</script>"
        "<script type='text/x-javascript-template'>7</script><script type=' module'>8</script>"
        "</head><body><svg><style>b{}</style><script>9</script></svg><template><style>c{}"
        "</style></template><noscript><style>d{}</style></noscript></body></html>",
        etree.HTMLParser(),
    )
    assert native.inline_texts is not None
    assert (
        native.inline_texts(root)
        == (
            ["a{}", "b{}", "c{}", "d{}"],
            ["1", "3", "4", "7", "9"],
        )
        == _inline_texts_read(root)
    )


def test_text_beside_elements_and_cdata_are_read_as_xpath_reads_them() -> None:
    root = etree.fromstring(
        "<r><style>a<b/>b<![CDATA[c]]><!-- x -->d<style>e</style></style><script type='t'/>"
        "<script>f<?pi?>g</script></r>"
    )
    assert native.inline_texts is not None
    # (lxml's parser makes a CDATA section text, one with the text before it)
    assert native.inline_texts(root) == (["a", "bc", "d", "e"], ["f", "g"])
    assert native.inline_texts(root) == _inline_texts_read(root)
    # A CDATA section kept as one (`strip_cdata=False`) is a text of its own to `text()`.
    root = etree.fromstring(
        "<r><style>a<![CDATA[b]]></style><script><![CDATA[c]]></script></r>",
        etree.XMLParser(strip_cdata=False),
    )
    assert native.inline_texts(root) == (["a", "b"], ["c"]) == _inline_texts_read(root)


def test_what_only_the_python_reads() -> None:
    assert native.inline_texts is not None
    parser = etree.XMLParser(resolve_entities=False)
    # An entity reference (XPath walks it its own way); a type that is no single text; a type
    # written twice (`=` asks each, `contains` the first).
    for markup in (
        '<!DOCTYPE r [<!ENTITY e "x">]><r><style>&e;</style></r>',
        '<!DOCTYPE r [<!ENTITY e "module">]><r><script type="&e;">1</script></r>',
    ):
        root = etree.fromstring(markup, parser)
        assert native.inline_texts(root) is None
        assert _inline_texts(root) == _inline_texts_read(root)
    root = etree.fromstring(
        "<r><script type='x' type='module'>1</script></r>", etree.XMLParser(recover=True)
    )
    assert native.inline_texts(root) is None
    assert _inline_texts(root) == _inline_texts_read(root) == ([], ["1"])
    # A DTD that declares attributes (their defaults, where a parser applies them, are what
    # XPath reads of an element with none of its own).
    root = etree.fromstring(
        '<!DOCTYPE r [<!ATTLIST script type CDATA "x">]><r><script>1</script></r>'
    )
    assert native.inline_texts(root) is None
    assert _inline_texts(root) == _inline_texts_read(root)
    # A namespaced element or attribute is not the one XPath's names test.
    root = etree.fromstring(
        '<r xmlns:x="urn:x"><x:style>1</x:style><script x:type="t">2</script></r>'
    )
    assert native.inline_texts(root) == ([], ["2"]) == _inline_texts_read(root)


TYPES = st.sampled_from(["", " type=''", " type='module'", " type='text/javascript'", " type='x'"])
TEXTS = st.sampled_from(["", "a", "é", "<b>", "</p>", "x&amp;y", "<!-- c -->", "  "])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(
        st.tuples(st.sampled_from(["style", "script", "div", "template"]), TYPES, TEXTS),
        max_size=8,
    )
)
def test_generated_pages_read_alike(blocks: list[tuple[str, str, str]]) -> None:
    body = "".join(f"<{tag}{type_}>{text}</{tag}>" for tag, type_, text in blocks)
    read_alike(etree.fromstring(f"<html><body>{body}</body></html>", etree.HTMLParser()))
