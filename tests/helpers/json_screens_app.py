"""A page whose screens come back as JSON with their markup inside, as phpMyAdmin's do.

`/db` shows a menu; a click on a tab fetches `/ajax/<screen>` (an XHR, `application/json`)
and puts its `message` into `#page_content`, then adds the scripts the answer names that the
page has not loaded, from the page's script directory (as phpMyAdmin's ajax.js does). The
Browse screen names only the page's own script, which binds the screen's Save button by its id
(`#save-row`) and keeps the answer's `draft.raw` (what an editor would save back). The SQL
screen names `sql-screen.js` too, which no page loads before it: it alone looks up
`#sqlqueryform` and `.sql-result`. The Export screen names a script the upstream does not
serve (its 404 teaches nothing). The Report screen is an HTML fragment that carries its own
script (`report-screen.js`, which alone looks up `#refresh` and `.report-out`). The screens'
markup carries a fresh token at every request (a hidden input's value), and the edit link a
class that `/screens.css` colours: a drifted screen keeps the colour only if the markup's
class is renamed as the stylesheet is.
"""

from __future__ import annotations

import json
import secrets

from tests.helpers.upstream import UpstreamServer

PAGE = """<!DOCTYPE html>
<html><head><title>Screens</title><link rel="stylesheet" href="/screens.css">
<script src="/js/screens.js?v=3" defer></script></head>
<body><nav id="menu"><a class="tab" href="/db?screen=browse" data-screen="browse">Browse</a>
<a class="tab tab-sql" href="/db?screen=sql" data-screen="sql">SQL</a>
<a class="tab" href="/db?screen=report" data-part="report">Report</a></nav>
<div id="page_content"><p class="hint">Pick a screen.</p></div></body></html>
"""
SCRIPT = """
const loaded = new Set(['screens.js']);
document.querySelectorAll('#menu a').forEach((tab) => tab.addEventListener('click', (event) => {
  event.preventDefault();
  if (tab.dataset.part) {  // an HTML fragment, its scripts run once it is in (as jQuery's .html())
    fetch('/part/' + tab.dataset.part, {headers: {'X-Requested-With': 'XMLHttpRequest'}})
      .then((answer) => answer.text())
      .then((html) => {
        const content = document.getElementById('page_content');
        content.innerHTML = html;
        content.querySelectorAll('script[src]').forEach((carried) => {
          const script = document.createElement('script');
          script.src = carried.getAttribute('src');
          document.head.appendChild(script);
        });
      });
    return;
  }
  fetch('/ajax/' + tab.dataset.screen, {headers: {'X-Requested-With': 'XMLHttpRequest'}})
    .then((answer) => answer.json())
    .then((answer) => {
      document.getElementById('page_content').innerHTML = answer.message;
      answer.scripts.forEach((name) => {
        if (loaded.has(name)) return;
        loaded.add(name);
        const script = document.createElement('script');
        script.src = '/js/' + name + '?v=3';
        document.head.appendChild(script);
      });
      const save = document.getElementById('save-row');
      if (save) save.addEventListener('click', () => {
        document.getElementById('result').textContent = 'saved row ' + answer.params.row;
      });
      window.draftRaw = answer.draft.raw;
      window.screenShown = answer.params.screen;
    });
}));
"""
REPORT_SCRIPT = """
document.getElementById('refresh').dataset.bound = 'yes';
document.querySelector('.report-out').textContent = 'report ready';
"""
# An HTML fragment that carries the script that looks into it (no page loads it before).
REPORT = (
    '<div class="report-panel"><button id="refresh" class="btn btn-primary" type="button">'
    'Refresh</button><a class="report-link" id="report-csv" href="/report.csv">CSV</a>'
    '<p class="report-out"></p><script src="/js/report-screen.js?v=3"></script></div>'
)
SQL_SCRIPT = """
document.getElementById('sqlqueryform').dataset.bound = 'yes';
document.querySelector('.sql-result').textContent = 'sql ready';
"""
STYLE = b".edit-link { color: rgb(0, 128, 0) } #page_content .hint { font-style: italic }"
TOKEN = '<input type="hidden" name="token" value="{token}">'
SCREENS = {
    "browse": (
        '<div class="table-panel"><table class="data"><tr><td>'
        '<a class="edit-link" id="edit-1" data-testid="edit-row-1" href="/edit/1">Edit</a></td>'
        '<td class="value">Lemon</td></tr></table>'
        f'<form class="row-form">{TOKEN}'
        '<input class="form-control" id="note" name="note" data-testid="note" aria-label="Note">'
        '<button id="save-row" class="btn btn-primary" type="button">Save</button></form>'
        '<p id="result"></p></div>',
        ["screens.js"],
    ),
    "sql": (
        f'<div class="sql-panel"><form id="sqlqueryform" class="query-form">{TOKEN}'
        '<textarea id="sqlquery" class="form-control" name="sql_query" aria-label="Query">'
        '</textarea><button id="go" class="btn btn-primary" type="button">Go</button>'
        '<p class="sql-result"></p></form></div>',
        ["screens.js", "sql-screen.js"],
    ),
    # A screen whose script the upstream does not serve: nothing to learn it from.
    "export": (
        f'<form id="export-form" class="export">{TOKEN}'
        '<button id="export" class="btn" type="button">Export</button></form>',
        ["screens.js", "export-screen.js"],
    ),
}
DRAFT_RAW = '<p class="draft" id="draft-1">A draft <b class="mark">kept</b> as it was</p>'


def screen_answer(screen: str) -> bytes:
    """The JSON answer to `/ajax/<screen>`, with a fresh token in its markup."""
    markup, scripts = SCREENS[screen]
    return json.dumps(
        {
            "success": True,
            "message": markup.format(token=secrets.token_hex(8)),
            "title": f"<title>{screen}</title>",
            "scripts": scripts,
            "params": {"screen": screen, "row": 1},
            "draft": {"raw": DRAFT_RAW},
        }
    ).encode()


def add_json_screens_app(server: UpstreamServer) -> str:
    """Serve the app on `server`; returns the page's URL."""
    server.extra["/db"] = ("text/html; charset=utf-8", PAGE.encode())
    server.extra["/js/screens.js"] = ("text/javascript", SCRIPT.encode())
    server.extra["/js/sql-screen.js"] = ("text/javascript", SQL_SCRIPT.encode())
    server.extra["/js/report-screen.js"] = ("text/javascript", REPORT_SCRIPT.encode())
    server.extra["/part/report"] = ("text/html; charset=utf-8", REPORT.encode())
    # A fragment carrying a script its upstream does not serve: nothing to learn it from.
    broken = REPORT.replace("report-screen.js", "missing.js").encode()
    server.extra["/part/broken"] = ("text/html; charset=utf-8", broken)
    server.extra["/screens.css"] = ("text/css", STYLE)
    for screen in SCREENS:
        server.generated[f"/ajax/{screen}"] = (
            "application/json",
            lambda screen=screen: screen_answer(screen),  # type: ignore[misc]
        )
    return f"{server.origin}/db"
