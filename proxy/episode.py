"""An episode: one agent run under one condition, and the configuration the proxy applies."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
import secrets
import time
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    StrictBool,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

import sites
from shifts import get_shift, shifts_for, validate_params
from shifts.base import UnknownShift
from shifts.conditions import ExecutionSet, PerceptualSet, canonical_condition
from shifts.execution import PopupParams, RegimeParams
from shifts.runtime import INTERRUPTIONS_NAME, runtime_version, script_version

Condition = Literal["Src", "Src-Perc", "Src-Exec", "Tgt", "Tgt-Perc", "Tgt-Exec"]
Regime = Literal["once", "multiple", "random"]
EPISODE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
# The validation context of an episode as a client asks for it (a change to a stored one): the
# rules of what may be asked apply, not only those of what may be stored.
ASKED: dict[str, bool] = {"asked": True}


def _not_only_dots(episode_id: str) -> str:
    # An id names a recording directory too: never "." or "..".
    if not episode_id.strip("."):
        raise ValueError("an episode id is not made of dots only")
    return episode_id


EpisodeId = Annotated[
    str, StringConstraints(pattern=EPISODE_ID.pattern), AfterValidator(_not_only_dots)
]
ORIGIN = re.compile(r"^https?://[^/\s]+$")
# An origin as the API accepts it (a trailing slash is dropped). The schema states the pattern;
# the validator of `targets` checks it, with a message that says what an origin is.
Origin = Annotated[str, WithJsonSchema({"type": "string", "pattern": r"^https?://[^/\s]+/?$"})]
# Strict: JSON `true` is not the seed 1.
Seed = Annotated[int, Field(ge=0, le=2**63 - 1, strict=True)]
DEFAULT_TTL_S = 24 * 3600
RecordWhat = Literal["off", "pages", "all"]
# A `replay_ignore` key: a path prefix, or an absolute URL's prefix; never a query or fragment.
IGNORE_PREFIX = re.compile(r"^(/|https?://[^/\s?#]+(/|$))[^\s?#]{0,2048}$")
MAX_IGNORE_PREFIXES = 64
MAX_IGNORED_FIELDS = 64


def _record_choice(value: object) -> object:
    """`record: true|false` as the short spelling of the default (`all`) / `off`."""
    if value is True:
        return "all"
    if value is False:
        return "off"
    return value


class EpisodeConfig(BaseModel):
    """What a user chooses for an episode (the body of POST /episodes, all fields optional)."""

    model_config = {"extra": "forbid"}

    condition: Condition = Field(
        "Src",
        description="One of the benchmark's six conditions (its own spelling, e.g. "
        "`src-perc`, is accepted too)",
    )
    perceptual: PerceptualSet = Field(
        "benchmark",
        description="The perceptual shift of -Perc conditions: `benchmark` (the benchmark's "
        "definition: locator drift on the same objects; placement and labels stay) or "
        "`extended` (also relabel, restyle and relayout, which go beyond the benchmark)",
    )
    execution: ExecutionSet = Field(
        "benchmark",
        description="The execution shift of -Exec conditions: `benchmark` (the benchmark's "
        "popups, shown on load) or `extended` (also toasts, click-absorbing overlays and "
        "consent banners that push the page; the browser's own alert, confirm and "
        "beforeunload dialogs; hosted in shadow roots or iframes; shown after a delay, on the "
        "first interaction, on scroll or on exit intent: `shift_params.popup` narrows them)",
    )
    regime: Regime = Field("once", description="Execution regime for -Exec conditions")
    regime_params: RegimeParams = Field(default_factory=RegimeParams)
    seed: Seed = Field(0, description="Seeds every random choice")
    site: str | None = Field(None, description="Site profile name; default: matched by host")
    shifts: list[str] | None = Field(
        None, description="Explicit shift list, overriding the condition's"
    )
    shift_params: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per-shift parameters, keyed by shift name"
    )
    targets: dict[Origin, Origin] = Field(
        default_factory=dict,
        description="Contextual shift: source origin -> target origin (http://host:port)",
    )
    ttl_s: int = Field(
        DEFAULT_TTL_S, ge=10, le=30 * 24 * 3600, strict=True, description="Lifetime in seconds"
    )
    tags: dict[str, str] = Field(default_factory=dict, description="Free labels for reports")
    internal: StrictBool = Field(
        False,
        description="An episode made for the service's own use (the browser oracle's, the "
        "preview's, a calibration run), not a task attempt: left out of GET /episodes and "
        "GET /reports (every format) unless they are asked with include_internal=true",
    )
    record: Annotated[RecordWhat, BeforeValidator(_record_choice)] = Field(
        "all",
        description="What the service records of this episode when it runs with a record "
        "directory: `all` (true) every response, enough to replay a page as the agent saw it "
        "(bodies are stored once by hash); `pages` the pages (and redirects to them) only, a "
        "smaller recording whose replays lack the pages' stylesheets, scripts and data; `off` "
        "(false) nothing",
    )
    replay_of: EpisodeId | None = Field(
        None,
        description="Make this a replay episode: answer every request from that episode's "
        "recording, never from the upstream (no shift is applied: the recording holds the "
        "shifted pages)",
    )
    from_load: int | None = Field(
        None,
        ge=1,
        strict=True,
        description="With `replay_of`: the recorded navigation the replay starts at",
    )
    replay_ignore: dict[str, list[str]] = Field(
        default_factory=dict,
        description="With `replay_of`: per path prefix (`/login`) or URL prefix "
        "(`http://host/login`), the query and body fields (form fields, a JSON body's top-level "
        "keys) a request is matched without, such as CSRF tokens a page makes anew",
    )
    replay_deterministic: StrictBool = Field(
        True,
        description="With `replay_of`: give replayed documents the clock of their recording and "
        "randomness seeded by the episode's seed and the load (`Date`, `Math.random`, "
        "`crypto.getRandomValues`); false serves the recorded bytes as they are",
    )
    knowledge: int | None = Field(
        None,
        ge=0,
        strict=True,
        description="The site knowledge epoch the episode's pages are shifted against "
        "(`GET /knowledge`): by default the current one when the episode is created; give an "
        "earlier episode's to shift pages exactly as it did",
    )

    @field_validator("condition", mode="before")
    @classmethod
    def _benchmark_spelling(cls, condition: object) -> object:
        if isinstance(condition, str):
            try:
                return canonical_condition(condition)
            except KeyError:
                return condition  # the Literal's own error lists the conditions
        return condition

    @field_validator("site")
    @classmethod
    def _known_site(cls, site: str | None) -> str | None:
        if site is not None and site not in sites.PROFILES:
            raise ValueError(f"unknown site {site!r}; known: {sorted(sites.PROFILES)}")
        return site

    @field_validator("shifts")
    @classmethod
    def _each_shift_once(cls, shifts: list[str] | None, info: ValidationInfo) -> list[str] | None:
        # A shift given twice would run twice on every page (elements wrapped twice, classes
        # renamed twice, its style injected twice), which no condition means. Asked of what is
        # asked for (a new episode, a change: `ASKED`), not of an `Episode` read back from the
        # store: one an earlier version stored goes on as it began, rather than be unreadable.
        if cls is not EpisodeConfig and not (info.context or {}).get("asked"):
            return shifts
        given = shifts or []
        repeated = [name for index, name in enumerate(given) if name in given[:index]]
        if repeated:
            raise ValueError(f"shift {repeated[0]!r} is given more than once")
        return shifts

    @field_validator("targets")
    @classmethod
    def _origins(cls, targets: dict[str, str]) -> dict[str, str]:
        for origin in (*targets, *targets.values()):
            if not ORIGIN.match(origin.rstrip("/")):
                raise ValueError(f"{origin!r} is not an origin like http://host:port")
        return {source.rstrip("/"): target.rstrip("/") for source, target in targets.items()}

    @field_validator("replay_ignore")
    @classmethod
    def _ignore_rules(cls, rules: dict[str, list[str]]) -> dict[str, list[str]]:
        if len(rules) > MAX_IGNORE_PREFIXES:
            raise ValueError(f"at most {MAX_IGNORE_PREFIXES} prefixes")
        for prefix, names in rules.items():
            if not IGNORE_PREFIX.match(prefix):
                raise ValueError(
                    f"{prefix!r} is neither a path prefix (/login) nor a URL prefix "
                    "(http://host/login), without query or fragment"
                )
            if not 1 <= len(names) <= MAX_IGNORED_FIELDS:
                raise ValueError(f"{prefix!r}: give 1 to {MAX_IGNORED_FIELDS} field names")
            if not all(0 < len(name) <= 256 for name in names):
                raise ValueError(f"{prefix!r}: a field name has 1 to 256 characters")
        return rules

    @model_validator(mode="after")
    def _consistent(self) -> EpisodeConfig:
        if self.replay_of is None:
            # Each replay setting at its default, or the episode is refused.
            for name, at_default in (
                ("from_load", self.from_load is None),
                ("replay_ignore", not self.replay_ignore),
                ("replay_deterministic", self.replay_deterministic),
            ):
                if not at_default:
                    raise ValueError(f"{name} is a replay setting: give replay_of too")
        names = self.shift_names()
        for name in names:
            try:
                get_shift(name)
            except UnknownShift:
                raise ValueError(f"unknown shift {name!r}") from None
        for name, params in self.shift_params.items():
            if name not in names:
                raise ValueError(f"shift_params for {name!r}, which this episode does not apply")
            self.shift_params[name] = validate_params(name, params)
        if self.execution == "benchmark" and "popup" in self.shift_params:
            extended = PopupParams.model_validate(self.shift_params["popup"]).extended_only()
            if extended:
                raise ValueError(
                    f"shift_params.popup {extended} belong to the extended execution set: "
                    'give "execution": "extended" too'
                )
        return self

    def shift_names(self) -> list[str]:
        if self.shifts is not None:
            return list(self.shifts)
        return list(shifts_for(self.condition, self.perceptual))

    def shift_digest(self, service_version: str) -> str:
        """A digest of everything that decides this episode's shifts: the service and runtime
        versions, condition, perceptual set, shifts, regime and its parameters, seed, shift
        parameters, targets and the site profiles it may use (its own, or every profile when
        pages are matched by host), and the site knowledge epoch its pages are shifted against.
        Two runs with one digest were shifted alike."""
        profiles = [self.site] if self.site else sorted(sites.PROFILES)
        decided = {
            "service": service_version,
            "runtime": runtime_version(),
            **self.model_dump(
                mode="json",
                include={
                    "condition",
                    "perceptual",
                    "regime",
                    "regime_params",
                    "seed",
                    "shift_params",
                    "knowledge",
                },
            ),  # fmt: skip
            "shifts": self.shift_names(),
            "targets": self.all_targets(),
            # Only when asked for, so the benchmark's set keeps the digests it always had.
            **(
                {"execution": "extended", "interruptions": script_version(INTERRUPTIONS_NAME)}
                if self.execution == "extended"
                else {}
            ),
            "profiles": [repr(sites.PROFILES[name]) for name in profiles],
        }
        encoded = json.dumps(decided, sort_keys=True, separators=(",", ":")).encode()
        return "sha256:" + hashlib.sha256(encoded).hexdigest()

    def all_targets(self) -> dict[str, str]:
        profile_targets = sites.PROFILES[self.site].targets if self.site else {}
        return {**profile_targets, **self.targets}


class Episode(EpisodeConfig):
    """A stored episode: the configuration plus identity, secret and lifecycle."""

    model_config = {"extra": "ignore"}

    id: str
    token: str
    created_at: float
    expires_at: int
    suspended: bool = False
    generation: int = 0
    # The changes made to it (PATCH, reset, suspend, resume), in the order they took effect:
    # what orders two records of one run, which two replicas may archive in either order.
    revision: int = 0
    # A replay episode's pages carry the recorded episode's beacon key: its runtime reports
    # with that one.
    replayed_beacon_key: str | None = None

    @property
    def beacon_key(self) -> str:
        """What the page's runtime presents to the beacon: derived from the token, not it."""
        return beacon_key_of(self.id, self.token)

    def check_token(self, token: str) -> bool:
        return hmac.compare_digest(self.token.encode(), token.encode())

    def check_beacon_key(self, key: str) -> bool:
        return hmac.compare_digest(self.beacon_key.encode(), key.encode()) or bool(
            self.replayed_beacon_key
            and hmac.compare_digest(self.replayed_beacon_key.encode(), key.encode())
        )

    def nonce_for(self, url: str) -> str:
        """A CSP nonce for injected tags: stable per episode and URL, secret without the token."""
        digest = hmac.new(self.token.encode(), b"nonce:" + url.encode(), hashlib.sha256)
        return digest.hexdigest()[:22]


@functools.lru_cache(maxsize=1024)
def beacon_key_of(episode_id: str, token: str) -> str:
    # Memoized: every page load of an episode asks it (its runtime presents it), and an HMAC
    # costs more than the rest of what a load's context is built of.
    digest = hmac.new(token.encode(), b"beacon:" + episode_id.encode(), hashlib.sha256)
    return digest.hexdigest()[:24]


def new_episode(
    config: EpisodeConfig, episode_id: str | None = None, **server_fields: Any
) -> Episode:
    """A new episode of `config`; `server_fields` are the ones the service sets itself."""
    now = time.time()
    return Episode(
        **config.model_dump(),
        **server_fields,
        id=episode_id or secrets.token_hex(8),
        token=secrets.token_urlsafe(18),
        created_at=now,
        expires_at=int(now) + config.ttl_s,
    )
