"""The HAR extension is read the same way everywhere, an entry of another tool included."""

from __future__ import annotations

from proxy.har import EXTENSION, extension, load_of


def test_an_entry_without_the_extension_reads_as_empty() -> None:
    foreign = {"request": {"url": "http://app.test/"}}
    assert extension(foreign) == {} and load_of(foreign) == 0


def test_a_navigation_has_its_load_and_a_subresource_none() -> None:
    page = {EXTENSION: {"navigation": True, "load": 3, "page_load": 3}}
    image = {EXTENSION: {"page_load": 3}}
    assert load_of(page) == 3 and extension(page)["navigation"]
    assert load_of(image) == 0 and extension(image)["page_load"] == 3
