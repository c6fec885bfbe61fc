"""The stylesheets and scripts a page loads and imports."""

from __future__ import annotations

from shifts.references import (
    PageAsset,
    css_imports,
    page_assets,
)


def test_a_page_loads_its_same_origin_stylesheets_scripts_and_modules() -> None:
    raw = (
        b"<html><head><base href='/app/'><link rel='stylesheet' href='s.css?a=1&amp;b=2'>"
        b"<link rel='modulepreload' href='/m.js'><link rel='preload' as='style' href='p.css'>"
        b"<link rel='icon' href='i.png'><script src='https://cdn.other/x.js'></script>"
        b"<script src='main.js'></script><script src='main.js'></script></head></html>"
    )
    assert page_assets(raw, "http://site.test/page") == [
        PageAsset("css", "http://site.test/app/s.css?a=1&b=2"),
        PageAsset("js", "http://site.test/m.js"),
        PageAsset("css", "http://site.test/app/p.css"),
        PageAsset("js", "http://site.test/app/main.js"),
    ]
    assert css_imports(
        "@import url('b.css'); @import 'https://x.other/c.css';", "http://s.t/a/a.css"
    ) == [PageAsset("css", "http://s.t/a/b.css")]
