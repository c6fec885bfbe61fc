"""A page whose scripts load more code later, the ways real apps do, for knowledge tests.

- `/entry.js` (in the markup) names `./chunk-a1.js` by literal URL and imports it when the
  button is clicked (a code-split chunk: only the static pass can know it before the click);
- at start-up it builds `/modules/late.js` from pieces and loads it (a module loader: only the
  browser pass sees it); it also POSTs to `/track` and loads an image from `other` (a learn
  must send neither);
- the chunk looks up `.late-target`, which only the chunk names; the late module reads `#panel`;
- `/app.css` @imports `/base.css`, whose `.panel > button` is structural.

On a page shifted without knowing the chunk, the chunk's lookup breaks on most seeds.
"""

from __future__ import annotations

from tests.helpers.upstream import UpstreamServer

PAGE = """<!DOCTYPE html>
<html><head><title>Chunks</title><link rel="stylesheet" href="/app.css">
<script type="module" src="/entry.js"></script></head>
<body><main>
<div id="panel" class="panel"><button id="load-more" class="load-btn">Load more</button>
<p id="status" class="late-target">waiting</p><span class="badge">new</span></div>
<ul class="items">{items}</ul>
</main></body></html>
"""
ITEMS = "".join(
    f'<li class="item item-{n}"><a class="item-link" id="item-{n}" href="/item/{n}">Item {n}</a>'
    f'<span class="price tag-{n % 3}">{n}.00</span></li>'
    for n in range(12)
)
ENTRY = """
document.getElementById('load-more').addEventListener('click', () => import('./chunk-a1.js'));
const late = document.createElement('script');
late.src = '/mod' + 'ules/' + ['la', 'te'].join('') + '.js';
document.head.appendChild(late);
fetch('/track', {method: 'POST', body: 'seen'}).catch(() => {});
const pixel = new Image(); pixel.src = '%(other)s/pixel.png';
"""
CHUNK = """
const target = document.querySelector('.late-target');
if (target) { target.textContent = 'chunk ran'; target.dataset.ran = 'yes'; }
window.chunkFound = Boolean(target);
"""
LATE = "document.getElementById('panel').dataset.late = 'yes'; window.lateFound = true;"


def add_chunked_app(server: UpstreamServer, other_origin: str = "http://127.0.0.1:9") -> str:
    """Serve the app on `server`; returns the page's URL."""
    js = "text/javascript"
    server.extra["/app"] = ("text/html; charset=utf-8", PAGE.format(items=ITEMS).encode())
    server.extra["/entry.js"] = (js, (ENTRY % {"other": other_origin}).encode())
    server.extra["/chunk-a1.js"] = (js, CHUNK.encode())
    server.extra["/modules/late.js"] = (js, LATE.encode())
    server.extra["/app.css"] = ("text/css", b'@import "/base.css"; .badge { color: green }')
    server.extra["/base.css"] = ("text/css", b".panel > button { color: red }")
    return f"{server.origin}/app"
