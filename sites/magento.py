"""Magento (the benchmark runs 1.9 as source and 2.4 as target)."""

from sites.profile import PopupTheme, SiteProfile, SyntheticTarget

MAGENTO = SiteProfile(
    name="magento",
    description="Magento 1.x and 2.x storefront and admin: catalogue, product, cart, checkout.",
    # The benchmark's ports: Magento 1.9 on 80, Magento 2.4 on 7780; WebArena shopping on 7770.
    host_patterns=("*:7770", "*:7780", "magento.*", "*magento*"),
    signatures=(
        r"x-magento-init",
        r"Mage\.Cookies",
        r"data-mage-init",
        r"/static/version\d+/",
        r"/skin/frontend/",
        r"var BLANK_URL",
    ),
    targets={"http://127.0.0.1": "http://127.0.0.1:7780"},
    relabels={
        "Add to Cart": ("Add to Bag", "Add to Basket"),
        "Proceed to Checkout": ("Go to Checkout", "Check out now"),
        "My Cart": ("Shopping Bag", "My Basket"),
        "My Account": ("Account", "Your Account"),
        "Sign In": ("Log In", "Login"),
        "Log In": ("Sign In", "Login"),
        "Register": ("Create Account", "Sign Up"),
        "Create an Account": ("Register", "Sign Up"),
        "Search": ("Find", "Look up"),
        "Add to Wish List": ("Save for Later", "Add to Favourites"),
        "Add to Compare": ("Compare", "Add to Comparison"),
        "Update Shopping Cart": ("Update Bag", "Refresh Basket"),
        "Reviews": ("Customer Reviews", "Ratings"),
        "Details": ("Product Details", "Description"),
        "Menu": ("Categories", "Browse"),
        "Home": ("Start", "Store Home"),
        "Contact Us": ("Get in Touch", "Contact"),
        "Submit": ("Send", "Confirm"),
    },
    protected_selectors=(
        "h1",
        "title",
        ".page-title",
        ".product-name",
        ".product-item-name",
        ".product-item-link",
        ".price",
        ".price-box",
        ".sku",
        ".product-info-main .product.attribute.sku",
        ".cart .item .product-name",
    ),
    popup_theme=PopupTheme(accent="#1979c3", radius="3px"),
    synthetic_target=SyntheticTarget(
        relabels={
            "My Cart": "Mini Cart",
            "My Account": "Customer Area",
            "Search": "Catalog Search",
        },
        accent="#eb5202",
    ),
)
