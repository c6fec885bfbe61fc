"""Which shift made a skill fail: read from the page the agent was on when it failed.

A `skill_failure` may say what the skill looked for (`target`): a CSS selector (`css=` optional),
an XPath (`xpath=`, or starting with `/` or `(`), `role=button[name="Save"]`, or `text=...`.
In order:

- perceptual: the target matched, on the page before its shifts, an element the page's change
  map changed and no longer finds it after them (or finds nothing at all after them), or it
  names a label an extended shift relabelled; a target that still finds its element (by role
  and name, say, which the benchmark's drift keeps) was not defeated by the shift;
- execution: a popup was up on that page (shown and not yet dismissed) or swallowed an
  interaction there, when the failure came;
- contextual: under a Tgt condition, the target is absent from the page served and present on
  the same URL recorded under a source condition (an episode of the same task, by `uid` tag,
  else of the same site);
- else unattributed, with the reason.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from cssselect import SelectorError
from lxml import etree
from lxml.cssselect import CSSSelector

from proxy.episode import Episode
from proxy.har import changes_of, extension
from proxy.recording_dir import Recording, page_at
from shifts import HtmlDocument

ROLE = re.compile(r"""^role=(?P<role>[a-z]+)(?:\[name=(?P<q>["']?)(?P<name>.*?)(?P=q)\])?$""")
ROLE_ELEMENTS = {
    "button": "//button | //input[@type='submit' or @type='button' or @type='reset']"
    " | //*[@role='button']",
    "link": "//a[@href] | //*[@role='link']",
    "textbox": "//textarea | //input[not(@type) or @type='text' or @type='search' or "
    "@type='email' or @type='password' or @type='url' or @type='tel'] | //*[@role='textbox']",
    "checkbox": "//input[@type='checkbox'] | //*[@role='checkbox']",
    "combobox": "//select | //*[@role='combobox']",
    "heading": "//h1 | //h2 | //h3 | //h4 | //h5 | //h6 | //*[@role='heading']",
}
MAX_SOURCE_EPISODES = 200  # how many source-condition recordings a contextual lookup reads


def _text(element: etree._Element) -> str:
    return " ".join("".join(str(t) for t in element.itertext()).split())


def _name(element: etree._Element) -> str:
    """An accessible name, roughly: aria-label, else text, else value, title, placeholder."""
    for attribute in ("aria-label",):
        if element.get(attribute):
            return str(element.get(attribute)).strip()
    text = _text(element)
    return text or str(
        element.get("value") or element.get("title") or element.get("placeholder") or ""
    )


def find(root: etree._Element, target: str) -> list[etree._Element] | None:
    """The elements `target` matches under `root`; None when it cannot be read as a target."""
    target = target.strip()
    role = ROLE.match(target)
    try:
        if role:
            found = etree.XPath(ROLE_ELEMENTS.get(role["role"], f"//*[@role='{role['role']}']"))
            matched = found(root)
            candidates = (
                [e for e in matched if isinstance(e, etree._Element)]
                if isinstance(matched, list)
                else []
            )
            wanted = role["name"]
            return [e for e in candidates if wanted is None or wanted in _name(e)]
        if target.startswith("text="):
            wanted = target[5:].strip().strip("\"'")
            return [
                e
                for e in root.iter()
                if isinstance(e.tag, str)
                and wanted in _text(e)
                and not any(wanted in _text(child) for child in e if isinstance(child.tag, str))
            ]
        if target.startswith("xpath=") or target.startswith(("/", "(")):
            expression = target[6:] if target.startswith("xpath=") else target
            result = root.xpath(expression)
        else:
            expression = target[4:] if target.startswith("css=") else target
            result = CSSSelector(expression)(root)
    except (SelectorError, etree.XPathError, ValueError):
        return None
    if not isinstance(result, list):
        return None
    return [e for e in result if isinstance(e, etree._Element)]


async def _tree(body: bytes) -> etree._Element:
    # Parsing a big page takes milliseconds: off the event loop the proxy shares.
    return await asyncio.to_thread(lambda: HtmlDocument(body).tree)


async def attribute(
    episode: Episode,
    failure: dict[str, Any],
    events: list[dict[str, Any]],
    recording: Recording | None,
) -> dict[str, Any]:
    """The failure's attribution: {"shift": ..., "load": ..., "why": ...}."""
    pages = [e for e in events if e.get("type") == "page_served" and e.get("load_index")]
    if not pages:
        return {"shift": "unattributed", "why": "no page was served before the failure"}
    load = int(pages[-1]["load_index"])
    target = failure.get("target")
    entry = page_at(await recording.entries(episode.id), load) if recording else None
    if target and entry is not None and recording is not None:
        perceptual = await _perceptual(recording, entry, str(target))
        if perceptual:
            return {"shift": "perceptual", "load": load, "why": perceptual}
    popup = _popup_up(events, load, pages[-1])
    if popup:
        return {"shift": "execution", "load": load, "why": popup}
    if (
        target
        and entry is not None
        and recording is not None
        and episode.condition.startswith("Tgt")
    ):
        contextual = await _contextual(recording, episode, entry, str(target))
        if contextual:
            return {"shift": "contextual", "load": load, "why": contextual}
    if not target:
        why = "no popup was up, and the failure names no target"
    elif entry is None:
        why = "no popup was up, and the page is not recorded (no --record-dir, or record off)"
    else:
        why = "the target is untouched by this page's shifts, and no popup was up"
    return {"shift": "unattributed", "load": load, "why": why}


async def _perceptual(recording: Recording, entry: dict[str, Any], target: str) -> str | None:
    extra = extension(entry)
    changes = changes_of(entry)
    for old, new in (changes.get("labels") or {}).items():
        if old and old in target:
            return f"the target names the label {old!r}, relabelled {new!r} on this page"
    if "source" not in extra or "body" not in extra:
        return None  # the page went out as the upstream sent it (or was not kept whole)
    before = await _tree(await recording.body(extra["source"]))
    matched = find(before, target)
    if not matched:
        return None
    after = await _tree(await recording.body(extra["body"]))
    still_found = {after.getroottree().getpath(e) for e in find(after, target) or []}
    if not still_found:
        return "the target matched the page before its shifts and matches nothing after them"
    # It still finds something: a shift defeated it only if an element it found before, and
    # whose locators the shift changed, is no longer among what it finds.
    tree = before.getroottree()
    changed = {c["before"]["path"]: c for c in changes.get("elements", [])}
    for element in matched:
        change = changed.get(tree.getpath(element))
        if change is not None and change["after"]["path"] not in still_found:
            return (
                f"the target matched <{change['tag']}> at {change['before']['path']} before "
                f"the shift, and no longer finds it (now {change['after']})"
            )
    return None


def _popup_up(events: list[dict[str, Any]], load: int, page: dict[str, Any]) -> str | None:
    since_page = events[events.index(page) :]
    on_page = [e for e in since_page if e.get("source") == "client" and e.get("load") == load]
    shown = sum(e["type"] == "popup_shown" for e in on_page)
    dismissed = sum(e["type"] == "popup_dismissed" for e in on_page)
    if shown > dismissed:
        kind = next(e.get("kind") for e in reversed(on_page) if e["type"] == "popup_shown")
        return f"a {kind} popup was up on load {load} (shown {shown}, dismissed {dismissed})"
    blocked = [e for e in on_page if e["type"] == "blocked_interaction"]
    if blocked:
        return f"a popup swallowed {len(blocked)} interaction(s) on load {load}"
    return None


async def _contextual(
    recording: Recording, episode: Episode, entry: dict[str, Any], target: str
) -> str | None:
    if "body" not in extension(entry):
        return None
    served = await _tree(await recording.body(extension(entry)["body"]))
    if find(served, target):
        return None
    url = entry["request"]["url"]
    uid = episode.tags.get("uid")
    for other_id in (await recording.episode_ids())[-MAX_SOURCE_EPISODES:]:
        other = await recording.episode(other_id)
        if other is None or other_id == episode.id or other.get("replay_of"):
            continue
        if not str(other.get("condition", "")).startswith("Src"):
            continue
        same_task = (
            other.get("tags", {}).get("uid") == uid
            if uid
            else (
                (other.get("site") or other.get("tags", {}).get("site"))
                == (episode.site or episode.tags.get("site"))
            )
        )
        if not same_task:
            continue
        for recorded in await recording.entries(other_id):
            extra = extension(recorded)
            if recorded["request"]["url"] != url or not extra.get("load"):
                continue
            source_page = extra.get("source") or extra.get("body")
            if source_page and find(await _tree(await recording.body(source_page)), target):
                return (
                    f"the target is on {url} in the source variant (episode {other_id}) "
                    "and not on the target variant served"
                )
    return None
