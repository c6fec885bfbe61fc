"""The profile used when no specific site matches: reasonable defaults for any web app."""

from sites.profile import SiteProfile

GENERIC = SiteProfile(
    name="generic",
    description="Any web site: common control labels, no protected selectors beyond forms.",
    host_patterns=("*",),
    relabels={
        "Sign in": "Log in",
        "Log in": "Sign in",
        "Search": "Find",
        "Submit": "Send",
        "Save": "Save changes",
        "Cancel": "Dismiss",
        "Add to Cart": "Add to Bag",
        "Next": "Continue",
    },
)
