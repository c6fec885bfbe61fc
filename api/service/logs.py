"""The service's log: one line format, mitmproxy's per-connection log only at debug, and the
TLS handshakes browsers' background requests fail summarised rather than logged one by one.

Chromium sends requests of its own through the proxy (autofill, safe browsing, updates: to
Google hosts, several a page) and refuses the interception certificate for them, since only
the page's context ignores certificate errors; mitmproxy warns about each, and a session's log
becomes mostly those warnings.
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable

from proxy import metrics

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# mitmproxy's words for a client refusing (or dropping) the handshake, naming the host.
HANDSHAKE_FAILED = re.compile(
    r"^Client TLS handshake failed\. .*?(?:certificate for|consistently for) (?P<host>[^\s,(]+)"
)
SUMMARY_WINDOW_S = 60.0
MAX_HOSTS = 1024  # hosts remembered for their summary (the oldest are forgotten first)


class HandshakeSummary(logging.Filter):
    """At most one line per host per `window_s` for failed client TLS handshakes: the first
    failure is logged as mitmproxy words it; those that follow within the window are counted
    (and in /metrics, `tls_handshake_failures_total`), and the first after it says how many
    there were."""

    def __init__(
        self, window_s: float = SUMMARY_WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.window_s = window_s
        self.clock = clock
        # host -> (when its last line was logged, failures not logged since)
        self.hosts: OrderedDict[str, tuple[float, int]] = OrderedDict()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        found = HANDSHAKE_FAILED.match(message)
        if found is None:
            return True
        metrics.inc("tls_handshake_failures_total")
        host, now = found["host"], self.clock()
        logged_at, unlogged = self.hosts.pop(host, (None, 0))
        if logged_at is not None and now - logged_at < self.window_s:
            self.hosts[host] = (logged_at, unlogged + 1)
            return False
        self.hosts[host] = (now, 0)
        while len(self.hosts) > MAX_HOSTS:
            self.hosts.popitem(last=False)
        if logged_at is None:
            note = f"more failures for {host} are counted and logged once a minute"
        else:
            note = f"and {unlogged} more for {host} in the last {now - logged_at:.0f} s"
        record.msg, record.args = f"{message} [{note}]", ()
        return True


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(), format=FORMAT)
    if level != "debug":
        # mitmproxy logs every connection at info; that is debugging detail here.
        logging.getLogger("mitmproxy").setLevel(logging.WARNING)
    logging.getLogger("mitmproxy.proxy.server").addFilter(HandshakeSummary())
