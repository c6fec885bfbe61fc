"""What holds a page's interactive elements still under locator drift.

    .venv/bin/python -m tools.drift_holds URL [URL...] [--static] [--seeds 5]
        [--header "Cookie: sessionid=..."]...

Learns each page as the service would on its first load (its stylesheets and scripts, and,
unless --static, what it loads in a headless Chromium), then prints the share of interactive
elements whose locator the benchmark's drift changes for each seed, and for each element that
keeps its locator what holds it: its id and classes that a stylesheet or script references,
and, for the element and each ancestor up to `<body>`, why no wrapper may go there (a parent
whose children HTML fixes, a structural rule of the page's CSS or scripts that matches it, a
`:has()` that looks inside, a script that holds it or its parent). A low share is the app's
own code referencing what an agent could locate by; this shows which code. A page behind a
login is fetched and learnt with the headers given (`--header`: a logged-in browser's cookie),
as the service learns it with the agent's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from urllib.parse import urlsplit

import httpx
from lxml import etree

from proxy.episode import EpisodeConfig, new_episode
from proxy.knowledge.learner import Learner, LearnRequest
from proxy.page_shift import shift_offline
from shifts import interactive
from shifts.document import HtmlDocument
from shifts.perceptual import locators
from shifts.references import AssetRefs, Keys, PageRefs, inline_refs, merge_refs


def keys_text(keys: Keys | None) -> str:
    if keys is None:
        return ""
    tag, classes, element_id, attributes = keys
    text = (tag or "") + "".join(f".{name}" for name in sorted(classes))
    text += f"#{element_id}" if element_id else ""
    text += "".join(
        f"[{name}{op}{value!r}]" if op else f"[{name}]" for name, op, value in sorted(attributes)
    )
    return text or "*"


def rules_matching(refs: PageRefs, element: etree._Element) -> list[str]:
    """The structural rules that make `element`'s place matter, as selector-like text."""
    found = []
    for rule in refs.structural_rules_of(element):
        context = f"{keys_text(rule.parent)} > " if rule.parent else ""
        context = f"{keys_text(rule.ancestor)} " if rule.ancestor else context
        sibling = f" (beside {keys_text(rule.sibling)})" if rule.sibling else ""
        found.append(f"{rule.kind}: {context}{keys_text(rule.keys)}{sibling}")
    return found


def why_not_wrapped(refs: PageRefs, element: etree._Element) -> str:
    parent = element.getparent()
    if parent is None:
        return "the root"
    if element.tag not in locators.WRAPPABLE:
        return "not a tag the drift wraps"
    if parent.tag in locators.FIXED_PARENTS:
        return f"its parent <{parent.tag}> has children HTML fixes"
    if refs.looks_inside(element):
        return "a :has() looks inside it"
    refusal = locators.wrap_refusal(element, parent, locators.WrapQuestions.of(refs, once=False))
    if refusal is None:
        return "free (the seeded coin left it)"
    holding = element if refusal.endswith("matches it") else None
    if refusal.endswith("a sibling"):
        holding = next(
            node for node in parent if node is not element and refs.structure_matters(node)
        )
    if holding is not None:
        rules = rules_matching(refs, holding)
        refusal += ": " + "; ".join(rules[:3]) + (f" (+{len(rules) - 3})" if len(rules) > 3 else "")
        if holding is not element:
            refusal += f" ({describe(holding)[:30]})"
    return refusal


def describe(element: etree._Element) -> str:
    classes = (element.get("class") or "").split()
    text = " ".join("".join(str(t) for t in element.itertext()).split())[:30]
    return (
        f"<{element.tag}"
        + (f" #{element.get('id')}" if element.get("id") else "")
        + (f" .{'.'.join(classes[:2])}" if classes else "")
        + f"> {text!r}"
    )


def out(line: str) -> None:
    sys.stdout.write(line + "\n")


def report(url: str, raw: bytes, assets: AssetRefs, seeds: int) -> None:
    shares = []
    for seed in range(seeds):
        episode = new_episode(EpisodeConfig(condition="Src-Perc", seed=seed))
        _, doc = shift_offline(episode, url, raw, assets=assets)
        notes = doc.notes["locator_drift"]
        assert isinstance(notes, dict)
        shares.append(notes.get("share"))
    out(f"{url}\n  share of interactive elements drifted, seeds 0-{seeds - 1}: {shares}")
    root = HtmlDocument(raw).tree
    refs = PageRefs(assets, inline_refs(root))
    read_as_data = locators.ids_read_as_data(root, refs)
    for element in interactive.interactive_elements(root):
        names = [element.get("id") or "", *(element.get("class") or "").split()]
        held = [name for name in names if name and refs.references(name)]
        out(f"  {describe(element)}")
        if held:
            out(f"    names referenced: {', '.join(held)}")
        if element.get("id") and element in read_as_data:
            out(
                "    id kept: the page's scripts read ids as data, and may find it or what it holds"
            )
        node: etree._Element | None = element
        while node is not None and node.tag != "body":
            out(f"    {describe(node)[:60]:60}  {why_not_wrapped(refs, node)}")
            node = node.getparent()


def header(text: str) -> tuple[str, str]:
    """A `--header` value, `Name: value`."""
    name, colon, value = text.partition(":")
    if not colon or not name.strip() or name.strip() != name or " " in name:
        raise argparse.ArgumentTypeError(f"expected 'Name: value', got {text!r}")
    return name, value.strip()


async def learn(
    url: str, static: bool, headers: dict[str, str] | None = None
) -> tuple[bytes, AssetRefs]:
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    headers = headers or {}
    async with httpx.AsyncClient() as client:
        raw = (await client.get(url, headers=headers)).content
    learner = Learner(mode="static" if static else "browser")
    try:
        request = LearnRequest(url, origin, raw, headers=headers, browser=not static)
        learned = await learner.learn(request)
    finally:
        await learner.close()
    return raw, merge_refs(learned.refs.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--static", action="store_true", help="no browser pass")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--header",
        type=header,
        action="append",
        default=[],
        help="a request header for the page and what it loads, 'Name: value' (repeatable; "
        "a logged-in session's Cookie)",
    )
    args = parser.parse_args(argv)
    for url in args.urls:
        raw, assets = asyncio.run(learn(url, args.static, dict(args.header)))
        report(url, raw, assets, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
