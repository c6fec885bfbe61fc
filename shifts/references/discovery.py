"""The stylesheets and scripts a page loads (markup), and those they import or name in turn."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urljoin, urlsplit

# ---- what a page loads --------------------------------------------------------------------

_ASSET_TAG = re.compile(rb"<(script|link)\b([^>]*)>", re.IGNORECASE)


_ATTR = re.compile(rb"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")


_BASE = re.compile(rb"""<base\b[^>]*\bhref\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)


STYLESHEET_RELS = {"stylesheet"}


SCRIPT_RELS = {"modulepreload", "preload", "prefetch"}


@dataclass(frozen=True)
class PageAsset:
    kind: Literal["css", "js"]
    url: str


def page_assets(raw: bytes, page_url: str) -> list[PageAsset]:
    """The same-origin stylesheets and scripts the page's markup loads, in order."""
    base = _BASE.search(raw[:65536])
    base_url = (
        urljoin(page_url, html.unescape(base.group(1).decode("latin-1"))) if base else page_url
    )
    origin = _origin(page_url)
    found: list[PageAsset] = []
    for tag in _ASSET_TAG.finditer(raw):
        attributes = {
            name.lower().decode("latin-1"): html.unescape((a or b or c).decode("latin-1"))
            for name, a, b, c in _ATTR.findall(tag.group(2))
        }
        name = tag.group(1).lower()
        if name == b"script" and attributes.get("src"):
            asset = PageAsset("js", urljoin(base_url, attributes["src"]))
        elif name == b"link" and attributes.get("href"):
            rels = set(attributes.get("rel", "").lower().split())
            kind = attributes.get("as", "").lower()
            if rels & STYLESHEET_RELS or (rels & SCRIPT_RELS and kind == "style"):
                asset = PageAsset("css", urljoin(base_url, attributes["href"]))
            elif "modulepreload" in rels or (rels & SCRIPT_RELS and kind == "script"):
                asset = PageAsset("js", urljoin(base_url, attributes["href"]))
            else:
                continue
        else:
            continue
        if _origin(asset.url) == origin and asset not in found:
            found.append(asset)
    return found


_CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*["']?([^"')\s;]+)""", re.IGNORECASE)


def css_imports(text: str, css_url: str) -> list[PageAsset]:
    """Same-origin stylesheets a stylesheet @imports."""
    origin = _origin(css_url)
    found = [PageAsset("css", urljoin(css_url, url)) for url in _CSS_IMPORT.findall(text)]
    return [asset for asset in found if _origin(asset.url) == origin]


# A script's literal URLs of more code and styles: `import("./chunk-3f2a.js")`, `import x from
# "/app/vendor.js"`, Vite's preload lists (`"assets/About-1b2c.js"`), a stylesheet it injects.
_SCRIPT_ASSET = re.compile(
    r"""["'`]((?:\.{0,2}/|https?://)?[\w@~.$%+-]+(?:/[\w@~.$%+-]+)*\.(m?js|css))"""
    r"""(\?[^"'`\s]{0,200})?["'`]"""
)


MAX_SCRIPT_ASSETS = 256


def script_imports(text: str, script_url: str) -> list[PageAsset]:
    """Same-origin scripts and stylesheets a script names by literal URL (code-split chunks it
    may load later), in order. A relative name is resolved against the script's URL and, when
    it is not explicitly relative (`assets/x.js`, as bundlers list them against the base), the
    site's root too: a guess that does not exist is a 404 the caller ignores."""
    origin = _origin(script_url)
    found: list[PageAsset] = []
    for match in _SCRIPT_ASSET.finditer(text):
        name, extension, query = match.group(1), match.group(2), match.group(3) or ""
        kind: Literal["css", "js"] = "css" if extension == "css" else "js"
        urls = [urljoin(script_url, name + query)]
        if not name.startswith(("./", "../", "/", "http://", "https://")):
            urls.append(urljoin(origin + "/", name + query))
        for url in urls:
            asset = PageAsset(kind, url.split("#")[0])
            if _origin(asset.url) == origin and asset not in found:
                found.append(asset)
        if len(found) >= MAX_SCRIPT_ASSETS:
            break
    return found


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
