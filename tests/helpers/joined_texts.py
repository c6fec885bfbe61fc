"""Lists of texts read one by one where that reads as the texts joined (a page's inline scripts,
`shifts.jslex.joined_literals`; its styles, `shifts.references.css.joined_css_refs`): the first
ends in what may leave something open, the second starts with what reads otherwise after it,
each pair drawn often enough to meet, then a few texts more."""

from __future__ import annotations

from hypothesis import strategies as st


def texts_left_open(
    pieces: list[str], openers: list[str], starts: list[str], between: str, size: int
) -> st.SearchStrategy[list[str]]:
    """Texts of `pieces` joined by `between` (at most `size` a text), the first ending in an
    opener and the second one of `starts`."""
    text = st.lists(st.sampled_from(pieces), max_size=size).map(between.join)
    return st.builds(
        lambda before, opener, start, more: [between.join([before, opener]), start, *more],
        text,
        st.sampled_from(openers),
        st.sampled_from(starts),
        st.lists(text, max_size=2),
    )
