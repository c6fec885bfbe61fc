"""What skillshift knows about one web application: how to recognise it and how to shift it."""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass, field
from re import _constants as re_constants  # type: ignore[attr-defined]
from re import _parser as re_parser  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PopupTheme:
    """CSS values popups use. `inherit` keeps the page's own font."""

    font_family: str = "inherit"
    text: str = "#1f2328"
    background: str = "#ffffff"
    accent: str = "#1f6feb"
    accent_text: str = "#ffffff"
    radius: str = "6px"
    backdrop: str = "rgba(0, 0, 0, 0.5)"


@dataclass(frozen=True)
class SyntheticTarget:
    """A coherent re-skin standing in for a target variant when no second deployment exists.

    It is the same for every episode (not seeded): it plays the role of "the site's next
    version", on top of which perceptual shifts then vary per seed.
    """

    # Section and control names as the "new version" calls them (source label -> target label).
    relabels: dict[str, str] = field(default_factory=dict)
    accent: str = "#6f42c1"
    font_family: str = "Georgia, 'DejaVu Serif', serif"
    # Lists whose items the new version shows in reverse order (navigation moved).
    reorder_selectors: tuple[str, ...] = ("nav ul", "[role=navigation] ul", "[role=menubar]")


DEFAULT_HOOK_ATTRIBUTES = ("data-qa-selector", "data-testid", "data-qa", "data-test", "data-cy")
DEFAULT_NAV_LISTS = (
    "nav ul",
    "nav ol",
    "[role=navigation] ul",
    "[role=menubar]",
    "[role=tablist]",
    "ul.nav",
    "ul.menu",
)


@dataclass(frozen=True)
class SiteProfile:
    """A site profile. Pure data: shifts read it, nothing here touches the network."""

    name: str
    description: str
    # Glob patterns over "host:port" (e.g. "*:8023", "gitlab.*"); "*" matches everything.
    host_patterns: tuple[str, ...] = ()
    # Regular expressions over the first 64 KB of an HTML page that identify the app
    # (generator meta, asset paths, framework globals). They win over host patterns.
    signatures: tuple[str, ...] = ()
    # Source upstream -> target upstream ("http://host:port"), for the contextual shift.
    targets: dict[str, str] = field(default_factory=dict)
    # Visible label -> synonyms. Matched case-sensitively on the whole trimmed text of a
    # control, so entity text (titles, names) is never touched; the episode seed picks one
    # synonym per label, used for every occurrence of that label in the episode.
    relabels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # CSS selectors of task-critical elements (entities) that no shift may change.
    protected_selectors: tuple[str, ...] = ()
    # Test-hook attributes that are safe to rename or drop (nothing but test suites reads them).
    hook_attributes: tuple[str, ...] = DEFAULT_HOOK_ATTRIBUTES
    # Class-name globs that are hooks, not styling, so they are safe to rename (e.g. "qa-*").
    drift_class_patterns: tuple[str, ...] = ()
    # Lists (navigation, menus, tabs) whose items may be reordered.
    nav_lists: tuple[str, ...] = DEFAULT_NAV_LISTS
    # Sidebars that may move to the other side of their container.
    sidebars: tuple[str, ...] = ("aside", "#secondary", ".sidebar", "[role=complementary]")
    # URL path glob patterns where popups may appear; empty means every navigation document.
    popup_paths: tuple[str, ...] = ()
    # How popups look on this site, so they pass for the site's own markup.
    popup_theme: PopupTheme = field(default_factory=lambda: PopupTheme())
    # The target variant when `targets` has no second deployment for an origin.
    synthetic_target: SyntheticTarget = field(default_factory=lambda: SyntheticTarget())

    @functools.cached_property
    def data_attributes_selected(self) -> frozenset[str]:
        """The `data-*` attributes its selectors test, and its hooks: a shift may decide by
        their values (`shifts.document.HtmlDocument.data_attributes_tested`)."""
        selectors = " ".join(
            [
                *self.protected_selectors,
                *self.nav_lists,
                *self.sidebars,
                *self.synthetic_target.reorder_selectors,
            ]
        ).lower()
        hooks = {name.lower() for name in self.hook_attributes}
        return frozenset(re.findall(r"data-[a-z0-9_.:-]+", selectors)) | hooks

    def matches_host(self, hostport: str) -> bool:
        return any(fnmatch.fnmatch(hostport, pattern) for pattern in self.host_patterns)

    @property
    def signature_literals(self) -> tuple[bytes, ...]:
        """For each signature, a run of bytes it cannot match without (b"": any page may)."""
        return tuple(_signature(pattern)[0] for pattern in self.signatures)

    def matches_page(self, head: bytes) -> bool:
        for pattern in self.signatures:
            literal, regex = _signature(pattern)
            if literal in head and regex.search(head):
                return True
        return False


@functools.lru_cache(maxsize=256)
def _signature(pattern: str) -> tuple[bytes, re.Pattern[bytes]]:
    """A signature as (a literal it cannot match without, its regex). Site matching runs on
    every page load of an episode that names no site; `literal in page` (memchr-fast) rules
    out almost every signature before a regex runs."""
    return _required_literal(pattern).encode("latin-1"), re.compile(pattern.encode())


def _required_literal(pattern: str) -> str:
    """The longest run of bytes every match of `pattern` contains ("" if unsure), one
    character per byte (Latin-1), as the bytes regex the page is searched with sees them.

    Read from the regex's own parse tree (Python's `re` parser), so character classes,
    escapes like `\\xNN` or `\\s`, groups, optional parts and inline flags are what they are to
    `re`: only literals in the pattern's top-level sequence count, and a case-insensitive
    pattern has none."""
    try:
        parsed = re_parser.parse(pattern.encode())  # the signature runs on bytes
    except re.error:
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    runs, run = [], ""
    for op, value in parsed:
        if op is re_constants.LITERAL:
            run += chr(value)
        else:
            runs.append(run)
            run = ""
    runs.append(run)
    return max(runs, key=len)
