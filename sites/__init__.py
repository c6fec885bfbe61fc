"""Site profiles: host matching, target variants, relabel vocabularies, protected selectors.

To add a site, write a module like sites/wordpress.py holding one SiteProfile and list it in
PROFILES below (or, at run time, put it in PROFILES before the proxy starts).
"""

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
    specific = [profile for profile in PROFILES.values() if profile is not GENERIC]
    head = page[:HEAD_BYTES]
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
