"""A page whose screens come back as JavaScript that inserts their markup, as Redmine's do.

`/issues/2` is an issue page in short. Its script does what rails-ujs does for a
`data-remote` link: fetches the link's URL asking for JavaScript first, and runs the answer.
`/members/new` answers as Redmine's `members/new.js.erb`: its dialog's markup, escaped by Rails'
`escape_javascript` (quotes, backslashes, line ends and `</` escaped; a fresh token in a hidden
input at every request), put into `#ajax-modal`, then the dialog's search box found by its id
(named by nothing but the answer) and filled. The watch link's answers replace every
`.issue-2-watcher` with the other link, as `watchers/_set_watcher.js.erb` does. `/app.css`
colours the dialog's title by its class: a drifted dialog keeps the colour only if its markup's
class is renamed as the stylesheet is.
"""

from __future__ import annotations

import secrets

from tests.helpers.upstream import UpstreamServer

PAGE = """<!DOCTYPE html>
<html><head><title>Issue 2</title><link rel="stylesheet" href="/app.css">
<script src="/js/ujs.js" defer></script></head>
<body><h2>Feature #2: Export</h2>
<p class="contextual"><a class="icon icon-add" data-remote="true" href="/members/new">New member</a>
<a class="issue-2-watcher icon icon-fav-off" data-remote="true" href="/watchers/watch">Watch</a></p>
<div id="ajax-modal" class="modal"></div></body></html>
"""
UJS = """
document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-remote]');
  if (!link) return;
  event.preventDefault();
  const accept = 'text/javascript, application/javascript, application/ecmascript, ' +
    'application/x-ecmascript, */*; q=0.01';
  const headers = {'Accept': accept, 'X-Requested-With': 'XMLHttpRequest'};
  fetch(link.getAttribute('href'), {headers})
    .then((answer) => answer.text())
    .then((code) => {
      const script = document.createElement('script');
      script.text = code;
      document.head.appendChild(script).remove();
    });
});
"""
STYLE = b".modal { display: none } .modal.shown { display: block } .title { color: rgb(0, 128, 0) }"
# What the dialog's note reads, as the browser shows it: the escapes must come back as written.
NOTE = 'Tom\'s "quoted" \\ back\nslash, caf\u00e9 \U0001f600'
# members/new.js.erb, its partial escaped as `escape_javascript` escapes it.
# members/new.js.erb, its partial escaped as `escape_javascript` escapes it (one line of script).
NEW_MEMBER = (
    r"document.querySelector('#ajax-modal').innerHTML = '<h3 class=\'title\'>New member<\/h3>\n"
    r"<form id=\"new_membership\" class=\"new-member\" action=\"/members\" method=\"post\">"
    r"<input type=\"hidden\" name=\"authenticity_token\" value=\"{token}\">\n"
    r"<label for=\"principal_search\">Search for user:<\/label>"
    r"<input id=\"principal_search\" class=\"autocomplete\" name=\"q\">\n"
    r"<pre class=\"member-note\">Tom\'s \"quoted\" \\ back\nslash, café 😀<\/pre>\n"
    r"<button id=\"member-add\" class=\"button-positive\" type=\"button\">Add<\/button>"
    r"<\/form>';" + "\n"
    "document.querySelector('#principal_search').value = 'found';\n"
    "document.querySelector('#ajax-modal').classList.add('shown');\n"
)
WATCH = (
    'document.querySelectorAll(".issue-2-watcher").forEach(function(link){ link.outerHTML = '
    r'"<a class=\"issue-2-watcher icon icon-fav\" data-remote=\"true\" '
    r'href=\"/watchers/unwatch\">Unwatch<\/a>"; });' + "\n"
)
UNWATCH = WATCH.replace("icon-fav", "icon-fav-off").replace("/unwatch", "/watch")
UNWATCH = UNWATCH.replace(">Unwatch<", ">Watch<")


def add_script_screens_app(server: UpstreamServer) -> str:
    """Serve the app on `server`; returns the page's URL."""
    server.extra["/issues/2"] = ("text/html; charset=utf-8", PAGE.encode())
    server.extra["/js/ujs.js"] = ("text/javascript", UJS.encode())
    server.extra["/app.css"] = ("text/css", STYLE)
    server.generated["/members/new"] = (
        "text/javascript; charset=utf-8",
        lambda: NEW_MEMBER.replace("{token}", secrets.token_hex(8)).encode(),
    )
    server.extra["/watchers/watch"] = ("text/javascript; charset=utf-8", WATCH.encode())
    server.extra["/watchers/unwatch"] = ("text/javascript; charset=utf-8", UNWATCH.encode())
    return f"{server.origin}/issues/2"
