"""Contextual shift: the episode sees the site's target variant.

With a second deployment (the episode's or site profile's `targets`), routing happens at
request time (the proxy asks `route`); on the way back, absolute URLs that name the target
origin are rewritten to the source origin, so the browser stays on the task's URLs.

Without one, the site profile's synthetic target applies: a fixed (not seeded) re-skin, stronger
than a perceptual shift and the same for every episode, as a stand-in for "the next version":
sections renamed, navigation order reversed, another accent colour and font. It is an
approximation of a real target version and reported as `variant: synthetic` in events.
"""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import BaseModel

from shifts.base import NoParams, ShiftKind, register
from shifts.document import HtmlDocument
from shifts.perceptual.relabel import relabel_tree
from shifts.perceptual.relayout import reorder, reorderable
from shifts.selectors import protected_in, select
from shifts.shift_context import ShiftContext


def route(origin: str, targets: dict[str, str]) -> str | None:
    """The target origin a request to `origin` goes to, or None if it stays where it is."""
    return targets.get(origin.rstrip("/"))


def unroute_url(url: str, targets: dict[str, str]) -> str:
    """Map an absolute URL on a target origin back to its source origin (for Location headers)."""
    for source, target in targets.items():
        if url == target or url.startswith(target.rstrip("/") + "/"):
            return source.rstrip("/") + url[len(target.rstrip("/")) :]
    return url


def origin_of_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class ContextualShift:
    name: ClassVar[str] = "contextual"
    reads_data_values: ClassVar[bool] = False  # (by the site's selectors: `run_shifts`)
    kind: ClassVar[ShiftKind] = "contextual"
    description: ClassVar[str] = (
        "Serve the site's target variant: route to its second deployment and map its URLs back, "
        "or, without one, apply the site profile's synthetic re-skin."
    )
    Params: ClassVar[type[BaseModel]] = NoParams

    def apply(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        if route(origin_of_url(ctx.url), ctx.targets) is not None:
            return self._map_urls_back(doc, ctx)
        return self._synthetic(doc, ctx)

    def _map_urls_back(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        rewritten = 0
        for source, target in ctx.targets.items():
            source, target = source.rstrip("/"), target.rstrip("/")
            rewritten += doc.replace_bytes(target.encode(), source.encode())
            # The same origin escaped inside inline JSON (e.g. "http:\/\/host:port").
            rewritten += doc.replace_bytes(
                target.replace("/", "\\/").encode(), source.replace("/", "\\/").encode()
            )
        doc.notes[self.name] = {"variant": "deployment", "urls_rewritten": rewritten}
        return doc

    def _synthetic(self, doc: HtmlDocument, ctx: ShiftContext) -> HtmlDocument:
        variant = ctx.site.synthetic_target
        root = doc.tree
        protected = protected_in(doc, ctx.site.protected_selectors)
        renamed = relabel_tree(root, variant.relabels, protected)
        reversed_lists = 0
        for selector in variant.reorder_selectors:
            for lst in select(root, selector):
                items = reorderable(lst, protected)
                if items:
                    reorder(lst, items[::-1])
                    reversed_lists += 1
        if renamed or reversed_lists:
            doc.mark_changed()
        if ctx.is_navigation:
            doc.inject_head(
                f"<style{ctx.nonce_attr()}>"
                f"body,button,input,select,textarea{{font-family:{variant.font_family}!important}}"
                "button,[type=submit]"
                f"{{background-color:{variant.accent}!important;color:#fff!important;"
                f"border-color:{variant.accent}!important}}"
                f"h1,h2,h3{{color:{variant.accent}}}"
                "</style>"
            )
        doc.notes[self.name] = {
            "variant": "synthetic",
            "renamed": renamed,
            "lists_reversed": reversed_lists,
        }
        return doc


register(ContextualShift())
