"""The selectors a script answer runs against its page, widened to what locator drift named.

Rails' `remote: true` links and forms (rails-ujs, jquery_ujs) and jQuery's `dataType: "script"`
ask for JavaScript that the page runs as it arrives: Redmine's "Quote" answers
`$('#issue_private_notes').prop('checked', true)` for a private note, its watch links
`$(".issue-2-watcher").replaceWith(...)`, its relation form `$('#relation_delay').val('')`.
That code is fetched on a click (often a POST, with the user's session) and is no asset a learner
can read, so the names only it uses are free to the drift: renamed on the page, the answer finds
nothing and says nothing (the reply to a private note was saved public).

So, in such an answer, each selector literal handed to jQuery or to `querySelector(All)` has every
id and class it names widened to the name or its drifted token (`#x` is `:is(#x,#t)`, `.c` is
`:is(.c,.t)`): whichever the page holds, the one it was served or the markup the answer itself
inserted as it came, the selector finds it, with no record of what the page's drift renamed (a
name's token is the episode seed's, `shifts.perceptual.locators.drifted_id`/`drifted_class`). A
literal read as anything else (markup, text, a selector with a pseudo-class or an escape, which
jQuery's own engine may read, not the browser's) is left as it came, and so is every other byte.
"""

from __future__ import annotations

import re

from proxy.classify import JS_TYPES
from shifts.perceptual.locators import drifted_class, drifted_id

# A call that reads its first argument as a selector, and that argument as a string literal.
_CALL = re.compile(
    r"""(?<![\w$.])(?:\$|jQuery)\(\s*(?P<q1>['"])(?P<s1>[^'"\\\n]*)(?P=q1)\s*[,)]"""
    r"""|\.(?:find|closest|children|parents|parentsUntil|siblings|next|nextAll|prev|prevAll|"""
    r"""filter|not|is|has|querySelector|querySelectorAll)\(\s*(?P<q2>['"])(?P<s2>[^'"\\\n]*)(?P=q2)\s*[,)]"""
)
# What a plain CSS selector is made of (no pseudo-classes, escapes or markup).
_SELECTOR = re.compile(r"""^[\w\s#.\-,>+~*\[\]="'^$|]+$""")
_NAME = re.compile(r"([#.])(-?[A-Za-z_][\w-]*)")


def is_script_type(mime: str | None) -> bool:
    return mime is not None and mime in JS_TYPES


def asks_for_script(accept: str, from_jquery: bool = False) -> bool:
    """Whether a request's `Accept` says the page will run a JavaScript answer: a JavaScript
    type first among the ranges of the highest quality (rails-ujs' `text/javascript, ...,
    */*; q=0.01`, jquery_ujs' `*/*;q=0.5, text/javascript, ...`, jQuery's `dataType:
    "script"`), or, from jQuery (`X-Requested-With`), `*/*` alone: with no `dataType` it runs
    what comes back as JavaScript (Redmine's `updateIssueFrom`, whose answer replaces the issue
    form). A fetch that reads code as text (an editor, a viewer) asks for `*/*` with no
    `X-Requested-With`, or for its own type first, and gets its bytes as they came."""
    ranges: list[tuple[float, str]] = []
    for item in accept.split(","):
        mime, *parameters = [part.strip().lower() for part in item.split(";")]
        quality = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if mime:
            ranges.append((quality, mime))
    if not ranges:
        return False
    if [mime for _, mime in ranges] == ["*/*"]:
        return from_jquery
    best = max(quality for quality, _ in ranges)
    first = next(mime for quality, mime in ranges if quality == best)
    return best > 0 and first in JS_TYPES


def widen_selector(selector: str, seed: int) -> str:
    """`selector` with each id and class outside an attribute's brackets widened to it or its
    drifted token; as it was if it is no plain CSS selector."""
    if not _SELECTOR.match(selector) or not selector.strip():
        return selector
    out: list[str] = []
    depth = 0
    position = 0
    for index, char in enumerate(selector):
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif char in "#." and depth == 0 and index >= position:
            found = _NAME.match(selector, index)
            if found is None:
                continue
            sign, name = found.group(1), found.group(2)
            token = drifted_id(seed, name) if sign == "#" else drifted_class(seed, name)
            out.append(selector[position:index])
            out.append(f":is({sign}{name},{sign}{token})")
            position = found.end()
    out.append(selector[position:])
    return "".join(out)


def widen(script: str, seed: int) -> tuple[str, int]:
    """The script with its selector literals widened, and how many were."""
    widened = 0

    def replaced(found: re.Match[str]) -> str:
        nonlocal widened
        group = "s1" if found.group("s1") is not None else "s2"
        selector = found.group(group)
        new = widen_selector(selector, seed)
        if new == selector:
            return found.group(0)
        widened += 1
        start, end = found.span(group)
        base = found.start()
        text = found.group(0)
        return text[: start - base] + new + text[end - base :]

    return _CALL.sub(replaced, script), widened
