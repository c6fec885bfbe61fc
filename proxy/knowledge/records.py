"""What site knowledge is made of: immutable, content-addressed records.

A page is shifted against what its stylesheets and scripts reference (`shifts.references`). The
knowledge that decides it is a `PageRecord`: the page (its URL on the upstream that serves it,
and which assets its markup loads) and every stylesheet and script it was seen to load, each by
the digest of its bytes. What an asset references is a pure function of its bytes and of the
readers' version (`REFS_VERSION`), so it is stored by (version, kind, digest) and shared by every
record that names those bytes. A record's digest is a digest of its canonical JSON: the same
knowledge has the same name in every process, on every machine.

Records belong to a *generation* of an origin's knowledge (`Generation`): a learn run makes a
new one; between learn runs, pages met for the first time are learnt into the current one, and
an entry, once written, never changes. An episode pins the knowledge epoch it was created at,
and every page it loads is shifted against the entry of the generation that epoch selects.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from shifts.references import REFS_VERSION, PageAsset

AssetKind = Literal["css", "js"]
LearntBy = Literal["static", "browser"]


# What `digest_of` makes: anything else names no record (and is never looked up).
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def digest_of(data: object) -> str:
    """`sha256:` and the hex digest of `data`'s canonical JSON."""
    encoded = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def on_upstream(upstream_origin: str, url: str) -> str:
    """A page's or asset's URL on the upstream that serves it (its fragment left out): what
    knowledge is keyed by, whichever origin the browser sees it under."""
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return upstream_origin + (parts.path or "/") + query


def url_origin(url: str) -> str:
    """The origin of a URL, lowercased (a `Referer`'s, an asset's), to tell same-origin ones."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def markup_digest(assets: list[PageAsset]) -> str:
    """Which same-origin assets a page's markup loads, in order: two loads of one URL that load
    other code (a signed-in user's admin bar, another set of modules) are two pages to learn."""
    return digest_of([[asset.kind, asset.url] for asset in assets])[7:23]


@dataclass(frozen=True)
class AssetRecord:
    """One stylesheet or script a page loads, as its upstream served it."""

    url: str  # on the upstream that serves it
    kind: AssetKind
    status: int  # what the upstream answered; a non-2xx asset references nothing
    sha256: str | None  # of its decoded bytes (None when it had none to read)
    found_by: str  # "markup", "import" (a stylesheet's), "script" (a literal URL), "browser"

    def refs_key(self, refs_version: int) -> str | None:
        """Where what it references, as read by that version of the readers, is stored (None:
        a non-2xx answer references nothing)."""
        return refs_key(self.kind, self.sha256, refs_version) if self.sha256 else None

    def as_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "kind": self.kind,
            "status": self.status,
            "sha256": self.sha256,
            "found_by": self.found_by,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AssetRecord:
        return cls(
            url=str(data["url"]),
            kind="css" if data["kind"] == "css" else "js",
            status=int(data["status"]),
            sha256=data.get("sha256"),
            found_by=str(data.get("found_by", "markup")),
        )


def refs_key(kind: str, sha256: str, refs_version: int = REFS_VERSION) -> str:
    """A record keeps the readers' version it was learnt with: after an upgrade, pages learnt
    before it are shifted against what the readers of then found in the same bytes (stored,
    never rewritten), and only a new learn reads them anew."""
    return f"{refs_version}/{kind}/{sha256}"


@dataclass(frozen=True)
class PageRecord:
    """The knowledge one page is shifted against."""

    page: str  # its URL on the upstream that serves it, without the fragment
    markup: str  # `markup_digest` of the assets its markup loads
    assets: tuple[AssetRecord, ...]  # sorted by URL
    learnt_by: LearntBy
    refs_version: int = REFS_VERSION

    def as_json(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "markup": self.markup,
            "assets": [asset.as_json() for asset in self.assets],
            "learnt_by": self.learnt_by,
            "refs_version": self.refs_version,
        }

    @property
    def digest(self) -> str:
        return digest_of(self.as_json())

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PageRecord:
        return cls(
            page=str(data["page"]),
            markup=str(data["markup"]),
            assets=tuple(AssetRecord.from_json(asset) for asset in data["assets"]),
            learnt_by="browser" if data.get("learnt_by") == "browser" else "static",
            refs_version=int(data.get("refs_version", REFS_VERSION)),
        )

    def asset(self, url: str) -> AssetRecord | None:
        return next((asset for asset in self.assets if asset.url == url), None)


@dataclass(frozen=True)
class Generation:
    """One generation of an origin's knowledge: number 1 is the one pages are learnt into before
    any learn run; each learn run that finds changes makes the next, visible to episodes
    created at or after its `epoch`."""

    origin: str
    number: int
    epoch: int  # the knowledge epoch it was published at (0 for the first)
    created_at: float
    made_by: str  # "first load" or "learn run"
    deleted_at: int | None = None  # the epoch it was deleted at

    def as_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "number": self.number,
            "epoch": self.epoch,
            "created_at": self.created_at,
            "made_by": self.made_by,
            "deleted_at": self.deleted_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Generation:
        return cls(
            origin=str(data["origin"]),
            number=int(data["number"]),
            epoch=int(data["epoch"]),
            created_at=float(data["created_at"]),
            made_by=str(data["made_by"]),
            deleted_at=None if data.get("deleted_at") is None else int(data["deleted_at"]),
        )


class GenerationDeleted(LookupError):
    """The generation an episode pinned was deleted after the episode was created."""

    def __init__(self, generation: Generation) -> None:
        super().__init__(
            f"knowledge version {generation.number} of {generation.origin} was deleted "
            f"(at epoch {generation.deleted_at}) after this episode pinned it"
        )
        self.generation = generation


def resolve(generations: list[Generation], epoch: int) -> Generation | None:
    """The generation an episode created at `epoch` uses: the latest published at or before
    it. One deleted before the episode was created is skipped (the episode never saw it); one
    deleted after is an error, never a silent fallback to older knowledge."""
    for generation in sorted(generations, key=lambda g: (g.epoch, g.number), reverse=True):
        if generation.epoch > epoch:
            continue
        if generation.deleted_at is None:
            return generation
        if generation.deleted_at > epoch:
            raise GenerationDeleted(generation)
    return None


# An episode's flag per page and record it was shifted against ("page-record <url> <digest>",
# the page's URL on its upstream): its fragments, and the watch, go by the same records.
PAGE_RECORD_FLAG = "page-record "


# Where the scripts an app's JSON screens bring are learnt, on each origin: a path no app
# serves, so no page of the app is ever learnt there (`proxy.page_knowledge.screen_knowledge`).
SCREEN_SCRIPTS_PAGE = "/.skillshift/screen-scripts"


def is_screen_scripts_page(url: str) -> bool:
    return urlsplit(url).path == SCREEN_SCRIPTS_PAGE


def page_record_flag(page: str, digest: str) -> str:
    return f"{PAGE_RECORD_FLAG}{page} {digest}"


def page_records(flags: Iterable[str]) -> dict[str, list[str]]:
    """Page URL -> the record digests an episode's flags say it was shifted against."""
    found: dict[str, list[str]] = {}
    for flag in flags:
        if flag.startswith(PAGE_RECORD_FLAG):
            page, _, digest = flag.removeprefix(PAGE_RECORD_FLAG).rpartition(" ")
            found.setdefault(page, []).append(digest)
    return found


def records_on_origin(by_page: dict[str, list[str]], url: str) -> list[str]:
    """The record digests of an episode's pages (`page_records`) on `url`'s origin, sorted:
    what code running on a route a single-page app's router put in the address bar
    (`history.pushState`: JupyterLab's `/lab/tree/x.ipynb` after `/lab`, WordPress's block
    editor's `post.php?post=N` after `post-new.php`) was shifted against. No load of the
    episode was of that URL; its code runs in a page of the origin the episode did load, and
    the union of their records can only protect more."""
    origin = url_origin(url)
    return sorted({d for page, held in by_page.items() if url_origin(page) == origin for d in held})
