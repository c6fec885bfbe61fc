"""What skillshift knows about one web application: how to recognise it and how to shift it."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field


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
class SiteProfile:
    """A site profile. Pure data: shifts read it, nothing here touches the network."""

    name: str
    description: str
    # Glob patterns over "host:port" (e.g. "*:8023", "gitlab.*"); "*" matches everything.
    host_patterns: tuple[str, ...] = ()
    # Source upstream -> target upstream ("http://host:port"), for the contextual shift.
    targets: dict[str, str] = field(default_factory=dict)
    # Visible label -> replacement, used by relabeling shifts. Keys are matched case-sensitively
    # on the whole trimmed text of a control, so entity text (titles, names) is never touched.
    relabels: dict[str, str] = field(default_factory=dict)
    # CSS selectors of task-critical elements that no shift may change.
    protected_selectors: tuple[str, ...] = ()
    # URL path glob patterns where popups may appear; empty means every navigation document.
    popup_paths: tuple[str, ...] = ()
    # How popups look on this site, so they pass for the site's own markup.
    popup_theme: PopupTheme = field(default_factory=lambda: PopupTheme())

    def matches_host(self, hostport: str) -> bool:
        return any(fnmatch.fnmatch(hostport, pattern) for pattern in self.host_patterns)
