"""The oracle's PNG decoder reads every row filter Chromium writes, and refuses the rest."""

from __future__ import annotations

from api.oracle.compare import images_differ
from api.oracle.png import decode_png
from tests.unit.api.oracle.images import LOGO, gradient, png


def test_png_decoding_every_filter() -> None:
    expected = decode_png(png(20, 10, gradient))
    assert expected is not None and expected[:3] == (20, 10, 3)
    for filter_type in (1, 2, 3, 4):
        assert decode_png(png(20, 10, gradient, filter_type)) == expected
    assert decode_png(b"not a png") is None
    assert images_differ(b"not a png", b"not a png either")
    assert not images_differ(LOGO, LOGO)
    assert images_differ(LOGO, png(10, 20, gradient))
