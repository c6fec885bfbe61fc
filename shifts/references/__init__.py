"""What a page's stylesheets and scripts depend on, so locator drift renames only what nothing
references and restructures only where no selector cares about structure.

A page's CSS selects elements by ids, classes, attributes and tags, and some of its selectors
depend on structure (`nav > a`, `li + li`, `:first-child`); its JavaScript looks elements up by
strings (`getElementById("root")`, `querySelector(".menu > li")`, `classList.contains("open")`,
`"btn-" + kind`). Renaming what either uses, or wrapping an element a structural selector
matches, breaks the app with no error. This package reads stylesheets (`css`) and scripts (`js`)
into `AssetRefs` (`model`): pure data, merged per page, from text; the knowledge store keeps it
per asset (`serial`). `discovery` finds a page's assets, `inline` reads its inline code.

JavaScript is read conservatively: every identifier-like word anywhere in a script counts as a
reference (strings, code and comments alike), which over-approximates what the script can look
up, and words ending in `-` or `_` count as prefixes (`"is-" + state`). Selector strings in
scripts count like CSS selectors, structure included.
"""

from shifts.references.css import MAX_VARIANTS, css_refs
from shifts.references.discovery import PageAsset, css_imports, page_assets, script_imports
from shifts.references.inline import inline_refs
from shifts.references.js import js_refs
from shifts.references.model import (
    EMPTY,
    UNKNOWN,
    AssetRefs,
    Keys,
    PageRefs,
    StructuralRule,
    merge_refs,
)
from shifts.references.serial import REFS_VERSION, refs_from_json, refs_to_json

__all__ = [
    "EMPTY",
    "MAX_VARIANTS",
    "REFS_VERSION",
    "UNKNOWN",
    "AssetRefs",
    "Keys",
    "PageAsset",
    "PageRefs",
    "StructuralRule",
    "css_imports",
    "css_refs",
    "inline_refs",
    "js_refs",
    "merge_refs",
    "page_assets",
    "refs_from_json",
    "refs_to_json",
    "script_imports",
]
