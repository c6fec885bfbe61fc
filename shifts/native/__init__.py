"""Compiled parts of the shifts: per-element work a first load does thousands of times.

Each is the C twin of a Python function that stays the definition: the C one returns None where
it would have to guess, and the caller then asks the Python one, so a page is shifted the same
with or without it (the tests compare the two on every saved page and on generated ones).

- `signature.c`: a wrap candidate's signature (`locators._signature`), which its coin reads,
  and the candidates of a page with their coins (`locators._wrap_candidates_read`; the coin,
  `rng.chance`'s, in `coin.h`); the seeded coins and tokens themselves (`rng._coin_read`,
  `rng._token_read`), which a first load under a new seed draws for every name it renames, and
  groups of coins seeded side by side (`rng._coins_read`; a wrap candidate's too);
- `walks.c`: walks that test every element of a page (`interactive.interactive_elements`,
  `selectors.with_any_attributes`, the elements of a protected class
  (`selectors._with_a_class_of`), the links the serializer keeps (`document._links_to_keep`),
  the handlers and data values `references.inline` reads, the distinct words of an attribute's
  values (`locators._attribute_words_read`: the class names a first load decides at once),
  the classes `locators._set_drifted` sets (through lxml once per value, which checks it, then
  through libxml2's own function: `module.h`'s `libxml2_function` finds it in lxml's module),
  the hooks `locators._drop_attributes` drops, the texts of the inline styles and scripts
  `references.inline` reads);
- `words.c`: how often each of a page's ids occurs in it as a word (`locators._counted_words`);
- `locators.c`: what a skill could locate each interactive element by, its names and path
  (`locators._locators`, `tree.getpath`), before the drifts and after them, and the change
  map's records of those that differ (`locators._changes_read`);
- `wrappers.c`: a wrapper put in an element's place (`locators._place_wrapper_read`), without
  lxml's walk of the moved subtree, and the first pass of the wrap decisions
  (`locators._wrap_chosen`: `wrap_if_safe` of each element the coins chose);
- `markup.c`: the end tags of a page that may close nothing (`parsing._end_tags`), found past
  its comments, raw text and tags; where tags of some names start (`document._tag_starts`) and
  which attribute names the page writes with a value (`document._assigned_names`); whether a
  word is in a page in any case (`csp.contains_folded_read`, without the page lowered);
  whether a page holds any of some words (`sites.holds_any_read`, in one pass), or one word
  (`volatile.contains_read`, by `memmem`);
- `values.c`: a frozen document's state taken out of the cyclic collector's sight
  (`untrack`), which has no Python twin: without it the collector walks the same objects, and
  nothing else differs.

Each source is built on first import with the machine's C compiler, against this Python and the
installed lxml (whose element struct, C API and libxml2 headers it uses), into `build/` beside
it under a key of all of them (and the headers beside it: `tree.h`, `module.h`) and the
compiler's command: a change to any builds anew, and processes that build at once each write
their own file and rename it into place (readable by every user: an image builds as root and
serves as another). Old builds are left where they are (another Python's venv may use them).
`scripts/bootstrap` builds them ahead. Without a compiler the Python functions do the work,
slower, and `why_not` says why.

    python -m shifts.native    builds them if needed, and says where or why not
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import lxml
from lxml import etree

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
# Each module (its `PyInit_<name>`) and its source.
SOURCES = {
    "_signature": "signature.c",
    "_walks": "walks.c",
    "_words": "words.c",
    "_locators": "locators.c",
    "_markup": "markup.c",
    "_wrappers": "wrappers.c",
    "_values": "values.c",
    "_compounds": "compounds.c",
}


FLAGS = ("-O2", "-shared", "-fPIC", "-Wall")
BUILD_SECONDS = 120  # (a compiler that takes longer is taken for hung: the Python runs)


def _compiler() -> list[str]:
    return shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")


def _key(source: Path) -> str:
    """What a built module depends on: its source and the headers beside it, this Python, the
    installed lxml, the compiler's command and flags."""
    material = b"\0".join(
        (
            source.read_bytes(),
            *(header.read_bytes() for header in sorted(HERE.glob("*.h"))),
            sys.version.encode(),
            repr(etree.LXML_VERSION).encode(),
            str(Path(lxml.__file__).resolve()).encode(),
            repr((_compiler(), FLAGS)).encode(),
        )
    )
    return hashlib.sha256(material).hexdigest()[:16]


def built_path(name: str) -> Path:
    """Where the module `name` is built, under its key."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return HERE / "build" / _key(HERE / SOURCES[name]) / f"{name}{suffix}"


def build(source: Path, path: Path) -> None:
    """Compile `source` into `path` (written aside, then renamed: atomic for other readers).
    Raises OSError, or CalledProcessError with the compiler's output."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # (lxml's own headers, and libxml2's that it ships: its element struct is read in C.)
    includes = [sysconfig.get_paths()["include"], *lxml.get_include()]  # type: ignore[attr-defined]
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, suffix=".so.part")
    os.close(descriptor)
    try:
        subprocess.run(
            [
                *_compiler(),
                *FLAGS,
                *(f"-I{directory}" for directory in includes),
                str(source),
                "-o",
                temporary,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=BUILD_SECONDS,
        )
        # Readable by every user: the image builds as root and serves as another (a temporary
        # file is its owner's alone, and the linker keeps its mode).
        os.chmod(temporary, 0o755)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _load(name: str) -> tuple[ModuleType | None, str | None]:
    """The built module `name` (built first if need be), or None and why not."""
    try:
        path = built_path(name)
        if not path.exists():
            build(HERE / SOURCES[name], path)
        try:
            return _imported(name, path), None
        except ImportError:  # (a build that does not load, a damaged file: built once again)
            build(HERE / SOURCES[name], path)
            return _imported(name, path), None
    except subprocess.CalledProcessError as error:
        output = (error.stderr or error.stdout).strip()[-2000:]
        return None, f"{SOURCES[name]}: the C compiler failed: {output}"
    except subprocess.TimeoutExpired:
        return None, f"{SOURCES[name]}: the C compiler took more than {BUILD_SECONDS} s"
    except (OSError, ImportError) as error:
        return None, f"{SOURCES[name]}: {type(error).__name__}: {error}"


def _imported(name: str, path: Path) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(f"{__name__}.{name}", str(path))
    spec = importlib.util.spec_from_file_location(loader.name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


_loaded = {name: _load(name) for name in SOURCES}
_modules = {name: module for name, (module, _) in _loaded.items() if module is not None}
why_not = "; ".join(why for _, why in _loaded.values() if why) or None
if why_not:
    log.warning("skillshift: compiled shifts unavailable, the Python ones run (%s)", why_not)


def _function(module: str, name: str) -> Any:
    """The built module's function (typed where it is declared, below), or None."""
    return getattr(_modules[module], name) if module in _modules else None


def either[R](compiled: Callable[..., R | None] | None, read: Callable[..., R], *args: object) -> R:
    """`compiled(*args)`, the C twin, where it is built and answers; else `read(*args)`, the
    Python function that is its definition (it reads what the C one declines)."""
    if compiled is not None and (found := compiled(*args)) is not None:
        return found
    return read(*args)


# Each None where its module was not built. What they return is the Python function's result,
# or None where only the Python one reads it: callers ask them through `either`.
# `signature(element, keyed=None)`: `locators._signature(element, keyed)`.
signature: Callable[..., str | None] | None = _function("_signature", "signature")
# `coin(text)`: `rng._coin_read(text)`; `token(text, length)`: `rng._token_read(text, length)`
coin: Callable[[bytes], float | None] | None = _function("_signature", "coin")
# `coins(prefix, texts)`: `rng._coins_read(prefix, texts)`
coins: Callable[[bytes, list[str]], list[float] | None] | None = _function("_signature", "coins")
token: Callable[[bytes, int], str | None] | None = _function("_signature", "token")
# `tokens(prefix, texts, length)`: `rng._tokens_read(prefix, texts, length)`
tokens: Callable[[bytes, list[str], int], list[str] | None] | None = _function(
    "_signature", "tokens"
)
# `wrap_candidates(body, wrappable, fixed_parents, protected, keyed, read, prefix, memo, below)`:
# `locators._wrap_candidates_read(body, seed, protected, keyed, below)`, its coins drawn in C
wrap_candidates: Callable[..., list[Any] | None] | None = _function("_signature", "wrap_candidates")
interactive_elements: Callable[[etree._Element], list[etree._Element] | None] | None = _function(
    "_walks", "interactive_elements"
)
handlers_and_data_values: Callable[[etree._Element], tuple[list[str], list[str]] | None] | None = (
    _function("_walks", "handlers_and_data_values")
)
# `with_a_class_of(root, names)`: `selectors._with_a_class_of`
with_a_class_of: Callable[..., list[etree._Element] | None] | None = _function(
    "_walks", "with_a_class_of"
)
# `links_to_keep(root)`: `document._links_to_keep`
links_to_keep: Callable[[etree._Element], list[tuple[etree._Element, str, str]] | None] | None = (
    _function("_walks", "links_to_keep")
)
# `attribute_words(root, name, protected)`: `locators._attribute_words_read`
attribute_words: Callable[..., list[str] | None] | None = _function("_walks", "attribute_words")
# `set_drifted(root, name, protected, drifted, among)`: `locators._set_drifted`
set_drifted: Callable[..., tuple[list[etree._Element], int] | None] | None = _function(
    "_walks", "set_drifted"
)
# `inline_texts(root)`: `references.inline._inline_texts`
inline_texts: Callable[[etree._Element], tuple[list[str], list[str]] | None] | None = _function(
    "_walks", "inline_texts"
)
# `drop_attributes(root, names, protected)`: `locators._drop_attributes`
drop_attributes: Callable[..., tuple[list[etree._Element], int] | None] | None = _function(
    "_walks", "drop_attributes"
)
# `with_any_attributes(root, *name_sets)`
with_any_attributes: Callable[..., tuple[list[etree._Element], ...] | None] | None = _function(
    "_walks", "with_any_attributes"
)
# `count_words(page, names)`: `locators._counted_words`, as a dict (it never declines)
count_words: Callable[[bytes, frozenset[bytes]], dict[bytes, int]] | None = _function(
    "_words", "count_words"
)
# `locators(elements)`: `[locators._locators(tree, e) for e in elements]`
locators: Callable[[list[etree._Element]], list[tuple[object, ...]] | None] | None = _function(
    "_locators", "locators"
)
# `names(elements)`: `[locators._names(e) for e in elements]`
names: Callable[[list[etree._Element]], list[tuple[object, ...]] | None] | None = _function(
    "_locators", "names"
)
# `place_wrapper(element, tag)`: `locators._place_wrapper_read(element, tag)`
place_wrapper: Callable[[etree._Element, str], etree._Element | None] | None = _function(
    "_wrappers", "place_wrapper"
)
# `wrap_chosen(chosen, tag, fixed_parents, foreign, names, widget, structure, steps, place)`:
# `locators._wrap`'s first pass (`locators._wrap_chosen`)
wrap_chosen: Callable[..., list[etree._Element] | None] | None = _function(
    "_wrappers", "wrap_chosen"
)
# `tag_starts(page, names)`: `document._tag_starts`
tag_starts: Callable[[bytes, tuple[bytes, ...]], list[int] | None] | None = _function(
    "_markup", "tag_starts"
)
# `assigned_names(page, names)`: `document._assigned_names`
assigned_names: Callable[[bytes, tuple[bytes, ...]], list[bytes] | None] | None = _function(
    "_markup", "assigned_names"
)
# `end_tags(page)`: `parsing._end_tags(page)` (it never declines)
end_tags: Callable[[bytes], list[tuple[int, int, str]]] | None = _function("_markup", "end_tags")
# `strays_likely(page)`: `parsing._strays_likely_read(page)` (it never declines)
strays_likely: Callable[[bytes], bool] | None = _function("_markup", "strays_likely")
# `contains_folded(page, word)`: `proxy.csp.contains_folded_read` (it never declines)
contains_folded: Callable[[bytes, bytes], bool] | None = _function("_markup", "contains_folded")
# `contains(page, word)`: `volatile.contains_read` (None: either is no bytes)
contains: Callable[[bytes, bytes], bool | None] | None = _function("_markup", "contains")
# `holds_any(page, words)`: `sites.holds_any_read` (None: the page or a word is no bytes)
holds_any: Callable[[bytes, tuple[bytes, ...]], bool | None] | None = _function(
    "_markup", "holds_any"
)
# `untrack(value)`: the containers of a value never changed again, out of the cyclic
# collector's sight (`document.HtmlDocument.freeze`); how many
untrack: Callable[[object], int] | None = _function("_values", "untrack")
# `paths(elements)`: `[tree.getpath(e) for e in elements]`
paths: Callable[[list[etree._Element]], list[str] | None] | None = _function("_locators", "paths")
# `matches(element, keys)`: `references.model._matches_read(element, keys)`
matches: Callable[[etree._Element, object], bool | None] | None = _function("_compounds", "matches")
# `structure_index(groups, by_tag, by_attribute, by_class, by_id, rest)`: a
# `references.model._StructureIndex` for `structure_matters`; `structure_state(index)`: a page's
# answers under it (`KeptMatches`'s), none yet; `structure_matters(state, element)`:
# `bool(index.matching(element, kept, first=True))`; `structure_children_changed(state,
# parent)`: `KeptMatches.children_changed(parent)`
structure_index: Callable[..., object] | None = _function("_compounds", "structure_index")
structure_state: Callable[[object], object] | None = _function("_compounds", "structure_state")
structure_matters: Callable[[object, etree._Element], bool | None] | None = _function(
    "_compounds", "structure_matters"
)
structure_children_changed: Callable[[object, etree._Element], None] | None = _function(
    "_compounds", "structure_children_changed"
)
# `changes(shift, elements, paths, before, after, limit)`: `locators._changes_read`
changes: Callable[..., list[tuple[etree._Element, dict[str, object]]] | None] | None = _function(
    "_locators", "changes"
)


def main() -> None:
    """Say where the compiled shifts are, or why they are not (exit 1)."""
    if why_not:
        raise SystemExit(f"compiled shifts unavailable: {why_not}")
    for module in _modules.values():
        sys.stdout.write(f"compiled shifts: {module.__file__}\n")
