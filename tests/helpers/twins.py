"""Two parses of one page with the same elements of each set apart: a compiled function run on
one and its Python definition on the other must leave them alike."""

from __future__ import annotations

import random

from lxml import etree


def protected_twins(
    page: str | bytes, protect: float, seed: int
) -> tuple[list[etree._Element], list[set[etree._Element]]]:
    """The page parsed twice, and for each parse the same share `protect` of its elements (the
    same ones, drawn under `seed`)."""
    trees = [etree.fromstring(page, etree.HTMLParser()) for _ in range(2)]
    chosen = random.Random(seed)
    picks = [chosen.random() < protect for _ in trees[0].iter()]
    protected = [
        {element for element, pick in zip(tree.iter(), picks, strict=True) if pick}
        for tree in trees
    ]
    return trees, protected
