"""Site profiles: host matching, target variants, relabel vocabularies, protected selectors."""

from sites.generic import GENERIC
from sites.profile import PopupTheme, SiteProfile

PROFILES: dict[str, SiteProfile] = {profile.name: profile for profile in (GENERIC,)}


def get_profile(name: str) -> SiteProfile:
    """The profile called `name`; KeyError if there is none."""
    return PROFILES[name]


def match_profile(hostport: str) -> SiteProfile:
    """The first specific profile whose host patterns match, else the generic one."""
    for profile in PROFILES.values():
        if profile is not GENERIC and profile.matches_host(hostport):
            return profile
    return GENERIC


__all__ = ["GENERIC", "PROFILES", "PopupTheme", "SiteProfile", "get_profile", "match_profile"]
