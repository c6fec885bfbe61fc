"""A small shop to try skillshift on: a source variant and a re-themed target variant.

`skillshift serve --demo` serves both on loopback and registers a `demo` site profile whose
target maps the source to the target, so all six conditions work out of the box.
"""

from __future__ import annotations

import secrets
from html import escape

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

import sites
from sites import SiteProfile

PRODUCTS = {
    "1": ("Trail Running Shoes", "89.00"),
    "2": ("Waterproof Jacket", "149.00"),
    "3": ("Merino Socks (3 pairs)", "24.00"),
}

THEMES = {
    "source": {"accent": "#1f6feb", "title": "Outdoor Shop", "nav": ("Home", "Products", "Cart")},
    "target": {
        "accent": "#8250df",
        "title": "Outdoor Shop 2.0",
        "nav": ("Start", "Catalog", "Basket"),
    },
}


def _page(theme: str, title: str, body: str, nonce: str) -> str:
    look = THEMES[theme]
    home, products, cart = look["nav"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)} - {look["title"]}</title>
<style nonce="{nonce}">body{{font-family:sans-serif;margin:0}} header{{background:{look["accent"]};
color:#fff;padding:1rem}} header a{{color:#fff;margin-right:1rem}} main{{padding:1rem}}
.product{{border:1px solid #ddd;padding:.8rem;margin:.5rem 0}}</style></head>
<body><header><strong>{look["title"]}</strong> <nav id="main-nav"><a href="/">{home}</a>
<a href="/products">{products}</a><a href="/cart">{cart}</a></nav>
<form id="search" action="/products" method="get">
<input name="q" placeholder="Search" aria-label="Search">
<button type="submit">Search</button></form></header>
<main>{body}</main>
<script nonce="{nonce}">document.body.dataset.ready = "1";</script>
</body></html>"""


def _respond(request: Request, title: str, body: str) -> HTMLResponse:
    theme = request.app.state.theme
    nonce = secrets.token_urlsafe(12)
    csp = (
        f"default-src 'self'; script-src 'nonce-{nonce}' 'strict-dynamic'; "
        f"style-src 'nonce-{nonce}'"
    )
    return HTMLResponse(_page(theme, title, body, nonce), headers={"Content-Security-Policy": csp})


async def home(request: Request) -> HTMLResponse:
    return _respond(
        request,
        "Home",
        "<h1>Welcome</h1><p><a href='/products'>Browse products</a></p>"
        "<p><a href='/login'>Sign in</a></p>",
    )


async def products(request: Request) -> HTMLResponse:
    query = request.query_params.get("q", "").lower()
    items = "".join(
        f"<div class='product'><h2>{escape(name)}</h2><p>${price}</p>"
        f"<form action='/cart' method='post'><input type='hidden' name='product' value='{pid}'>"
        "<button type='submit'>Add to Cart</button></form></div>"
        for pid, (name, price) in PRODUCTS.items()
        if query in name.lower()
    )
    return _respond(request, "Products", f"<h1>Products</h1>{items or '<p>No results.</p>'}")


async def cart(request: Request) -> HTMLResponse | RedirectResponse:
    basket: list[str] = request.app.state.cart
    if request.method == "POST":
        form = await request.form()
        product = str(form.get("product", ""))
        if product in PRODUCTS:
            basket.append(product)
        return RedirectResponse("/cart", status_code=303)
    rows = "".join(f"<li>{escape(PRODUCTS[p][0])}</li>" for p in basket) or "<li>Empty</li>"
    return _respond(request, "Cart", f"<h1>Cart</h1><ul id='cart-items'>{rows}</ul>")


async def login(request: Request) -> HTMLResponse:
    return _respond(
        request,
        "Sign in",
        "<h1>Sign in</h1><form action='/login' method='post'><label for='user'>User</label>"
        "<input id='user' name='user'><button type='submit'>Sign in</button></form>",
    )


async def favicon(_: Request) -> Response:
    return Response(status_code=204)


def demo_app(theme: str) -> Starlette:
    app = Starlette(
        routes=[
            Route("/favicon.ico", favicon),
            Route("/", home),
            Route("/products", products),
            Route("/cart", cart, methods=["GET", "POST"]),
            Route("/login", login, methods=["GET", "POST"]),
        ]
    )
    app.state.theme = theme
    app.state.cart = []
    return app


def register_profile(source_port: int, target_port: int) -> SiteProfile:
    """A `demo` profile: the source port's pages in Tgt conditions come from the target port."""
    profile = SiteProfile(
        name="demo",
        description="The built-in demo shop (skillshift serve --demo).",
        host_patterns=(f"127.0.0.1:{source_port}", f"localhost:{source_port}"),
        targets={
            f"http://127.0.0.1:{source_port}": f"http://127.0.0.1:{target_port}",
            f"http://localhost:{source_port}": f"http://127.0.0.1:{target_port}",
        },
        relabels={**sites.GENERIC.relabels, "Products": ("Shop", "Catalogue"), "Cart": ("Bag",)},
    )
    sites.PROFILES[profile.name] = profile
    return profile
