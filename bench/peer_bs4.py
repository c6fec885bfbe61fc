"""The peer a user would write instead of skillshift: a mitmproxy script that relabels buttons
and appends a popup with BeautifulSoup (after mitmproxy's own inject-iframe example).

    mitmdump -s bench/peer_bs4.py
"""

from bs4 import BeautifulSoup
from mitmproxy import http

RELABELS = {"Sign in": "Log in", "Search": "Find", "Submit": "Send"}
POPUP = (
    '<div role="dialog" aria-modal="true" style="position:fixed;inset:0;z-index:99999">'
    "<p>Subscribe to our newsletter</p><button>No thanks</button></div>"
)


def response(flow: http.HTTPFlow) -> None:
    if flow.response is None or "text/html" not in flow.response.headers.get("content-type", ""):
        return
    soup = BeautifulSoup(flow.response.get_text(strict=False) or "", "lxml")
    for control in soup.find_all(["a", "button"]):
        label = control.get_text(strip=True)
        if label in RELABELS and control.string:
            control.string = RELABELS[label]
    if soup.body:
        soup.body.append(BeautifulSoup(POPUP, "html.parser"))
    flow.response.text = str(soup)
