"""HTML pages the test upstream serves."""

from __future__ import annotations


def page(title: str = "Shop", extra_head: str = "", body: str = "", size: int = 0) -> str:
    filler = ""
    if size:
        row = "<p class='row'>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n"
        filler = row * max(0, size // len(row))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{title}</title>{extra_head}</head>\n<body>"
        '<nav><a href="/">Home</a> <a href="/login">Sign in</a></nav>'
        '<form action="/search" method="get"><input name="q" placeholder="Search">'
        '<button type="submit">Search</button></form>'
        f'<h1 id="title">{title}</h1>{body}{filler}</body></html>'
    )


# An episode that only relabels, with a fixed synonym, so tests can assert exact bytes.
RELABEL_ONLY: dict[str, object] = {
    "condition": "Src-Perc",
    "shifts": ["relabel"],
    "shift_params": {"relabel": {"vocabulary": {"Sign in": ["Log in"]}}},
}
