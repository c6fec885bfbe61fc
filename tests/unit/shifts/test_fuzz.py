"""Fuzzing the rewrite pipeline: whatever bytes arrive, every condition gives a defined outcome
(bytes out, no exception) and an aligned page."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.episode import EpisodeConfig, new_episode
from proxy.page_shift import shift_offline
from shifts.alignment import check_alignment
from shifts.conditions import CONDITIONS

# Structural tags (html, head, body) in the middle of content make libxml2's parse unstable
# under re-serialization, which says nothing about the shifts; they are left out here.
TAGS = ["a", "button", "form", "input", "nav", "ul", "li", "aside", "div", "span", "label",
        "script", "style", "h1", "title", "meta", "svg", "p", "select"]  # fmt: skip
ATTRIBUTES = [
    "id",
    "class",
    "href",
    "name",
    "type",
    "value",
    "for",
    "aria-label",
    "title",
    "data-testid",
    "role",
    "placeholder",
    "charset",
    "action",
    "method",
    "http-equiv",
    "checked",  # (a boolean the page is written again with its value)
    "data-\x01x",  # (a name XML forbids)
]
TEXT = st.sampled_from(
    [
        "Sign in",
        "Search",
        "Log In",
        "Home",
        "x",
        "",
        " ",
        "é",
        "\x00",
        "\x01",  # (kept by libxml2's HTML parser, refused by lxml's setters)
        "<",
        "&",
        "Add to Cart",
        "qa-x",
        "#top",
        "js-a",
        "\u202e",
        "🙂",
    ]
)


@st.composite
def markup(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.integers(0, 5))
        if kind == 0 or depth > 4:
            parts.append(draw(TEXT))
        elif kind == 1:
            parts.append(f"<{draw(st.sampled_from(TAGS))}>")  # an element never closed
        else:
            tag = draw(st.sampled_from(TAGS))
            attrs = "".join(
                f' {draw(st.sampled_from(ATTRIBUTES))}="{draw(TEXT)}"'
                for _ in range(draw(st.integers(0, 3)))
            )
            close = draw(st.booleans())
            inner = draw(markup(depth + 1))
            parts.append(f"<{tag}{attrs}>{inner}" + (f"</{tag}>" if close else ""))
    return "".join(parts)


MARKUP = st.one_of(
    markup().map(lambda s: s.encode("utf-8", "surrogatepass")),
    markup().map(lambda s: ("<!DOCTYPE html><html><head></head><body>" + s).encode("utf-8")),
)
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))
CONDITION = st.sampled_from(list(CONDITIONS))


def shifted(page: bytes, condition: str, seed: int):  # type: ignore[no-untyped-def]
    episode = new_episode(EpisodeConfig(condition=condition, seed=seed), "fuzz")
    ctx, doc = shift_offline(episode, "http://fuzz.test/", page)
    out = doc.to_bytes()
    assert isinstance(out, bytes)
    if not doc.changed:
        assert out == page
    return ctx, out


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=MARKUP, condition=CONDITION, seed=st.integers(0, 5))
def test_malformed_markup_stays_aligned(page: bytes, condition: str, seed: int) -> None:
    ctx, out = shifted(page, condition, seed)
    assert check_alignment(page, out, ctx.site) == []


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(page=st.binary(max_size=400), condition=CONDITION, seed=st.integers(0, 5))
def test_any_bytes_give_a_defined_outcome(page: bytes, condition: str, seed: int) -> None:
    shifted(page, condition, seed)
