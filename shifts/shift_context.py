"""Everything a shift may know about the page it transforms. Built by the proxy per response."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shifts.interruptions import Interruption
from shifts.references import AssetRefs
from sites import GENERIC, SiteProfile


@dataclass(frozen=True)
class PopupPlan:
    """The execution shift's decision for one page load: which popup, shown after what delay."""

    kind: str
    delay_ms: int
    regime: str
    # The extended execution set's host, trigger and timings (None: the benchmark's popup).
    interruption: Interruption | None = None


# Where the proxy answers its own endpoints on every origin (`--internal-prefix`): neutral,
# since pages show it to agents.
DEFAULT_INTERNAL_PREFIX = "/__ss/"


@dataclass(frozen=True)
class ShiftContext:
    episode_id: str
    seed: int
    condition: str = "Src"
    regime: str = "once"
    # The execution set: `benchmark` (the benchmark's popups) or `extended` (shifts.interruptions).
    execution: str = "benchmark"
    # Regime parameters (p, min_ms, max_ms) and per-shift parameters, keyed by shift name.
    regime_params: dict[str, Any] = field(default_factory=dict)
    shift_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    site: SiteProfile = GENERIC
    url: str = ""
    # 1-based index of this navigation among the episode's navigations (None for fragments).
    load_index: int | None = None
    # Whether the response is a top-level navigation document (popups go only there).
    is_navigation: bool = True
    # Nonce to put on injected <script>/<style> tags; None when the page has no CSP to satisfy.
    nonce: str | None = None
    # Path prefix of the internal endpoints (runtime script, beacon) on the page's own origin.
    internal_prefix: str = DEFAULT_INTERNAL_PREFIX
    # Key the client runtime must present to the beacon; derived from the episode token.
    beacon_key: str = ""
    # Contextual shift: source origin -> target origin ("scheme://host:port").
    targets: dict[str, str] = field(default_factory=dict)
    popup: PopupPlan | None = None
    # What the page's stylesheets and scripts reference (None: not known, so locator drift
    # renames and restructures nothing).
    assets: AssetRefs | None = None
    # Bumped by an episode reset, so client-side guards of the previous run no longer apply.
    generation: int = 0

    def params_for(self, shift_name: str) -> dict[str, Any]:
        return self.shift_params.get(shift_name, {})

    def nonce_attr(self) -> str:
        return f' nonce="{self.nonce}"' if self.nonce else ""
