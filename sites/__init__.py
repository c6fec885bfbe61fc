"""Site profiles: host matching, target variants, relabel vocabularies, protected selectors.

To add a site, write a module like sites/wordpress.py holding one SiteProfile and list it in
PROFILES below (or, at run time, put it in PROFILES before the proxy starts).
"""

import functools

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


def match_profile(hostport: str, page: bytes = b"") -> SiteProfile:
    """The profile for a page: by its signatures first, then by host, else the generic one."""
    return _match_head(hostport, page[:HEAD_BYTES], _Profiles(tuple(PROFILES.values())))


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


@functools.lru_cache(maxsize=64)
def _match_head(hostport: str, head: bytes, current: _Profiles) -> SiteProfile:
    # A page that names no site is matched on every load: failing a site's signatures means
    # scanning the whole head once per signature (0.3 ms for a WordPress page, after GitLab's
    # and Magento's). The same page head (a reload, the same start page in every episode of a
    # task) is matched once; hashing the head costs a twentieth of that.
    specific = [profile for profile in current.profiles if profile is not GENERIC]
    if head:
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
