"""Generated markup for the tests that compare a compiled shift with its Python definition."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

VOID = frozenset({"input"})  # (written without an end tag, and holding nothing)
BETWEEN = ["", "text", "<!-- c -->", "<?pi x?>"]  # what comes after each element


@st.composite
def fragments(
    draw: st.DrawFn,
    tags: Sequence[str],
    names: Sequence[str],
    values: Sequence[str],
    width: int = 4,
    depth: int = 0,
) -> str:
    """A fragment of up to `width` elements a level, three levels deep, of these tags, each with
    up to four of these attributes (each with one of these values, or bare), with text, a comment
    or a processing instruction after each."""
    parts = []
    for _ in range(draw(st.integers(0, width if depth < 3 else 0))):
        tag = draw(st.sampled_from(tags))
        attributes = "".join(
            f' {name}="{draw(st.sampled_from(values))}"' if draw(st.booleans()) else f" {name}"
            for name in draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
        )
        if tag in VOID:
            parts.append(f"<{tag}{attributes}>")
        else:
            inner = draw(fragments(tags, names, values, width, depth + 1))
            parts.append(f"<{tag}{attributes}>{inner}</{tag}>")
        parts.append(draw(st.sampled_from(BETWEEN)))
    return "".join(parts)
