"""The profile used when no specific site matches: reasonable defaults for any web app."""

from sites.profile import SiteProfile, SyntheticTarget

GENERIC = SiteProfile(
    name="generic",
    description="Any web site: common control labels, forms and headings kept as they are.",
    host_patterns=("*",),
    relabels={
        "Sign in": ("Log in", "Sign on"),
        "Log in": ("Sign in", "Login"),
        "Log In": ("Sign In", "Login"),
        "Sign In": ("Log In", "Login"),
        "Search": ("Find", "Look up"),
        "Submit": ("Send", "Confirm"),
        "Save": ("Save changes", "Store"),
        "Cancel": ("Dismiss", "Discard"),
        "Add to Cart": ("Add to Bag", "Add to Basket"),
        "Next": ("Continue", "Forward"),
        "Home": ("Start", "Main page"),
        "Menu": ("Navigation", "Browse"),
        "Register": ("Sign up", "Create account"),
        "Contact": ("Get in touch", "Contact us"),
        "About": ("About us", "Who we are"),
        "Help": ("Support", "Assistance"),
    },
    protected_selectors=("h1", "title"),
    drift_class_patterns=("qa-*", "test-*", "e2e-*"),
    synthetic_target=SyntheticTarget(
        relabels={"Home": "Overview", "Search": "Explore", "Menu": "Sections"},
    ),
)
