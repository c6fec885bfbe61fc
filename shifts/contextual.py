"""Contextual shift: the episode sees the site's target variant (another deployment).

Routing happens at request time (the proxy asks `route`); on the way back, absolute URLs that
name the target origin are rewritten to the source origin, so the browser stays on the task's
URLs and never learns it was moved.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel

from shifts.base import NoParams, ShiftKind, register
from shifts.context import ShiftContext
from shifts.document import HtmlDocument


def route(origin: str, targets: dict[str, str]) -> str | None:
    """The target origin a request to `origin` goes to, or None if it stays where it is."""
    return targets.get(origin.rstrip("/"))


def unroute_url(url: str, targets: dict[str, str]) -> str:
    """Map an absolute URL on a target origin back to its source origin (for Location headers)."""
    for source, target in targets.items():
        if url == target or url.startswith(target.rstrip("/") + "/"):
            return source.rstrip("/") + url[len(target.rstrip("/")) :]
    return url


class ContextualShift:
    name: ClassVar[str] = "contextual"
    kind: ClassVar[ShiftKind] = "contextual"
    description: ClassVar[str] = (
        "Route the episode to the site's target variant and rewrite the target's absolute URLs "
        "back to the source origin."
    )
    Params: ClassVar[type[BaseModel]] = NoParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        rewritten = 0
        for source, target in ctx.targets.items():
            source, target = source.rstrip("/"), target.rstrip("/")
            rewritten += doc.replace_bytes(target.encode(), source.encode())
            # The same origin escaped inside inline JSON (e.g. "http:\/\/host:port").
            rewritten += doc.replace_bytes(
                target.replace("/", "\\/").encode(), source.replace("/", "\\/").encode()
            )
        if rewritten:
            doc.notes[self.name] = {"urls_rewritten": rewritten}
        return doc


register(ContextualShift())
