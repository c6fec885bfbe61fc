"""Site profiles: host matching, target variants, relabel vocabularies, protected selectors.

To add a site, write a module like sites/wordpress.py holding one SiteProfile and list it in
PROFILES below (or, at run time, put it in PROFILES before the proxy starts).
"""

import functools
from collections.abc import Callable

from sites.generic import GENERIC
from sites.gitlab import GITLAB
from sites.magento import MAGENTO
from sites.profile import PopupTheme, SiteProfile, SyntheticTarget
from sites.wordpress import WORDPRESS

PROFILES: dict[str, SiteProfile] = {
    profile.name: profile for profile in (GITLAB, MAGENTO, WORDPRESS, GENERIC)
}
HEAD_BYTES = 65536


def get_profile(name: str) -> SiteProfile:
    """The profile called `name`; KeyError if there is none."""
    return PROFILES[name]


# Whether a page holds any of some words: `holds_any_read`, or a twin that answers the same.
HoldsAny = Callable[[bytes, tuple[bytes, ...]], bool]


def holds_any_read(page: bytes, words: tuple[bytes, ...]) -> bool:
    """Whether the page holds any of the words: a scan of it per word (`shifts.native.holds_any`
    is its twin in one pass, which the proxy passes to `match_profile`)."""
    return any(word in page for word in words)


def match_profile(
    hostport: str, page: bytes = b"", holds_any: HoldsAny = holds_any_read
) -> SiteProfile:
    """The profile for a page: by its signatures first, then by host, else the generic one.
    `holds_any` (`holds_any_read` or its twin) rules a page out of every signature at once:
    one that holds none of the runs of bytes they cannot match without."""
    current = _Profiles(tuple(PROFILES.values()))
    return _match_head(hostport, page[:HEAD_BYTES], current, holds_any)


class _Profiles:
    """The profiles in force, as part of a cache key (PROFILES may change before a start):
    the same profile objects, in the same order. Holding them, not their ids, so an id is
    never reused by another profile while a key remembers it."""

    def __init__(self, profiles: tuple[SiteProfile, ...]) -> None:
        self.profiles = profiles

    def __hash__(self) -> int:
        return hash(tuple(map(id, self.profiles)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Profiles) or len(self.profiles) != len(other.profiles):
            return False
        return all(a is b for a, b in zip(self.profiles, other.profiles, strict=True))


@functools.lru_cache(maxsize=16)
def _signature_literals(current: _Profiles) -> tuple[bytes, ...]:
    """Every run of bytes a specific profile's signature cannot match without, once each."""
    literals = (p.signature_literals for p in current.profiles if p is not GENERIC)
    return tuple(dict.fromkeys(literal for each in literals for literal in each))


@functools.lru_cache(maxsize=64)
def _match_head(hostport: str, head: bytes, current: _Profiles, holds_any: HoldsAny) -> SiteProfile:
    # A page that names no site is matched on every load: failing a site's signatures means
    # scanning the whole head once per signature (0.3 ms for a WordPress page, after GitLab's
    # and Magento's). The same page head (a reload, the same start page in every episode of a
    # task) is matched once; hashing the head costs a twentieth of that. A page with a fresh
    # nonce in its head is new at every load, and most pages of no known site hold none of
    # the signatures' literals: one pass over the head says so (an empty literal, a
    # signature that may match anything, is in every head).
    specific = [profile for profile in current.profiles if profile is not GENERIC]
    if head and holds_any(head, _signature_literals(current)):
        for profile in specific:
            if profile.matches_page(head):
                return profile
    for profile in specific:
        if profile.matches_host(hostport):
            return profile
    return GENERIC


__all__ = [
    "GENERIC",
    "PROFILES",
    "PopupTheme",
    "SiteProfile",
    "SyntheticTarget",
    "get_profile",
    "match_profile",
]
