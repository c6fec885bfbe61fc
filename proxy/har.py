"""The records a recording is made of, typed: the page record the page rewriter hands the
recorder (`PageRecord`), and the `_skillshift` extension of each HAR 1.2 entry (`HarExtension`),
which replay, evidence and attribution read back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, cast

from proxy.guard import THROUGH_PROXY_HEADER

if TYPE_CHECKING:
    from proxy.knowledge import PageKnowledge
    from shifts import ShiftContext

# HAR lets tools add fields whose names start with an underscore.
EXTENSION = "_skillshift"
# What a recording never holds: the credentials that bind a browser to its episode (an
# imported HAR's too: one recorded through the proxy may carry them), and the mark the proxy
# puts on what it forwards (the browser never sent it).
SECRET_HEADERS = frozenset(
    {"proxy-authorization", "authorization", "x-skillshift-episode", THROUGH_PROXY_HEADER}
)


class _Popup(TypedDict):
    kind: str
    load: int | None
    delay_ms: int
    regime: str


class PopupPlaced(_Popup, total=False):
    # The extended execution set's placement (shifts.interruptions).
    host: str
    trigger: str
    after: int
    lasts_ms: int


class PageChanges(TypedDict, total=False):
    """A page's change map: each element a shift changed with its locators before and after,
    the labels relabelled, the popup placed."""

    elements: list[dict[str, Any]]
    labels: dict[str, str]
    popup: PopupPlaced


class PageRecord(TypedDict):
    """What the rewriter keeps of a page it served, for the recorder."""

    load: int | None  # its load index (None: a fragment, no navigation)
    shifts: dict[str, Any]  # each shift's notes
    changes: PageChanges
    source: bytes | None  # the upstream's page it was shifted from; None: served as it came
    knowledge: NotRequired[dict[str, Any]]  # the knowledge version it was shifted against


class HarExtension(TypedDict, total=False):
    """The `_skillshift` object of a HAR entry."""

    run: str  # the episode's run (its creation and reset generation): replays read one run
    page_load: int | None  # the navigation this exchange belongs to
    navigation: bool  # the exchange is a navigation (a page load)
    load: int | None  # the navigation's load index
    shifts: dict[str, Any]
    changes: PageChanges
    incomplete: bool  # the exchange broke off after the response head
    body_omitted: str  # why the body is not kept
    body: str  # the sha256 of the body as served, in the recording's bodies/
    source: str  # the sha256 of the upstream's page it was shifted from
    # The request body's canonical form (proxy/request_body.py), which replay matches on;
    # absent from entries recorded before it was kept (those match any body).
    request_body: str


class ShiftedMarkup(Protocol):
    """What the shifts left of a page (`shifts.HtmlDocument`), or of the markup strings of a
    JSON answer together (`proxy.json_markup.ShiftedAnswer`): all a page record reads."""

    notes: dict[str, Any]
    changes: list[dict[str, Any]]
    runtime: dict[str, Any]


def extension(entry: Mapping[str, Any]) -> HarExtension:
    """The entry's `_skillshift` object ({} for an entry of another tool)."""
    return cast(HarExtension, entry.get(EXTENSION, {}))


def changes_of(entry: Mapping[str, Any]) -> PageChanges:
    """A recorded page's change map; empty for a page no shift ran on here (an entry of a HAR
    another tool wrote, imported, has none)."""
    return extension(entry).get("changes") or {}


def load_of(entry: Mapping[str, Any]) -> int:
    """The load index of a recorded navigation (0 for any other exchange)."""
    return extension(entry).get("load") or 0


def page_record(
    context: ShiftContext,
    doc: ShiftedMarkup,
    source: bytes | None,
    knowledge: PageKnowledge | None = None,
) -> PageRecord:
    """A page's load index, what each shift did, its change map (elements with their
    locators before and after, the labels relabelled, the popup placed), the upstream's page
    it was shifted from (None when it went out unchanged) and the knowledge it was shifted
    against."""
    rules = doc.runtime.get("r")
    labels = rules.get("labels") if isinstance(rules, dict) else None
    popup = context.popup
    changes: PageChanges = {"elements": doc.changes}
    if labels:
        changes["labels"] = labels
    if popup is not None:
        changes["popup"] = {
            "kind": popup.kind,
            "load": context.load_index,
            "delay_ms": popup.delay_ms,
            "regime": popup.regime,
        }
        if popup.interruption is not None:
            changes["popup"].update(popup.interruption.placement())  # type: ignore[typeddict-item]  # the keys above
    record: PageRecord = {
        "load": context.load_index,
        "shifts": doc.notes,
        "changes": changes,
        "source": source,
    }
    if knowledge:
        record["knowledge"] = knowledge.note()
    return record
