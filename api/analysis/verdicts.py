"""What a check concludes, the same for every checker (the static one, the browser oracle, the
CLI): the page is aligned, violations were found, or it could not be checked at all.

"Could not check" is never "aligned": a page that did not load, answered a non-2xx status or
is no HTML page says nothing about the shift, so a mistyped URL cannot pass for an aligned app.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from typing import Any, Literal

Verdict = Literal["aligned", "violations", "unchecked"]
ALIGNED: Verdict = "aligned"
VIOLATIONS: Verdict = "violations"
UNCHECKED: Verdict = "unchecked"
# The CLI's exit status for each: 1 means exactly "violations found", nothing else.
EXIT_STATUS: dict[Verdict, int] = {ALIGNED: 0, VIOLATIONS: 1, UNCHECKED: 2}
# How the CLI says it, in one line.
HEADLINE: dict[Verdict, str] = {
    ALIGNED: "aligned",
    VIOLATIONS: "violations found",
    UNCHECKED: "could not check",
}


class Unchecked(Exception):
    """The page could not be checked; the message says why, in a sentence."""


def of_violations(count: int) -> Verdict:
    return VIOLATIONS if count else ALIGNED


def overall(verdicts: Iterable[Verdict]) -> Verdict:
    """Several checks as one: any that could not be made leaves the whole unchecked (the run is
    incomplete, whatever the others found), else any violation, else aligned."""
    found = set(verdicts)
    if UNCHECKED in found or not found:
        return UNCHECKED
    return VIOLATIONS if VIOLATIONS in found else ALIGNED


def unchecked(reason: str, **fields: Any) -> dict[str, Any]:
    """The answer of a check that could not be made: the labels given, why, no violation."""
    return {**fields, "status": UNCHECKED, "reason": reason, "violations": []}


def status_problem(status: int, reason: str) -> str | None:
    """Why a fetched response is no page to check by its status (not 2xx); None if it may be."""
    if not 200 <= status < 300:
        return f"it answered {status} {reason}".rstrip() + ": a check needs a page that loads"
    return None


_MARKUP = re.compile(r"<[A-Za-z!?/]")
_SNIFFED = 65536  # the start of the file a page's markup must show in


def markup_problem(raw: bytes) -> str | None:
    """Why a file's bytes are no page to check (empty, binary, no markup at all: a text or
    JSON file given by mistake); None when they may be one. A file has no content type to
    tell: its start is looked at, as a browser sniffs (UTF-16 by its byte order mark)."""
    head = raw[:_SNIFFED]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = head.decode("utf-16", "replace")
    elif b"\x00" in head:
        return "it is binary, not an HTML page"
    else:
        text = head.decode("latin-1")  # (the markup's characters are ASCII in any other)
    if not text.strip():
        return "it is empty"
    if not _MARKUP.search(text):
        return "it holds no HTML markup"
    return None
