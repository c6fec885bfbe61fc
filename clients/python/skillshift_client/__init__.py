"""Python client of the admin API, for agent code (sync `SkillShift`, async `AsyncSkillShift`).

    from skillshift_client import SkillShift

    with SkillShift() as skillshift, skillshift.episode(condition="Src-Exec", seed=3) as episode:
        context = browser.new_context(**episode.playwright_context_kwargs())
        ...
        skillshift.task_result(episode.id, success=True, steps=7)

It is its own distribution, `skillshift-client` (`pip install ./clients/python`), and needs only
httpx, so an agent's environment (e.g. BrowserGym's, which pins its own Playwright, or the
benchmark harness's) can use it without installing the proxy or any command. The proxy's
distribution ships it too. Every request is described once by a `_Call`; the two clients
only differ in how they send it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

__all__ = [
    "DEFAULT_API_URL",
    "EVENTS_PAGE",
    "AsyncSkillShift",
    "Episode",
    "SkillShift",
    "SkillShiftError",
    "SkillShiftUnreachable",
]

DEFAULT_API_URL = "http://127.0.0.1:8081"
EVENTS_PAGE = 1000  # the API's largest page
T = TypeVar("T")
# Report filters: KEY -> VALUE, or (KEY, VALUE) pairs, a key given twice too; an episode must
# have every one.
TagFilters = dict[str, str] | list[tuple[str, str]]


class SkillShiftError(Exception):
    """The API answered with an error: its status and the message of its one error shape."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message

    @classmethod
    def from_response(cls, response: httpx.Response) -> SkillShiftError:
        """The error an API answer carries (`{"error": ..., "status": ...}`), or what another
        server's answer says, on one line."""
        message = _error_message(response)
        if response.status_code == 401:
            message += " (the client sends SKILLSHIFT_API_TOKEN, or the `token` it was given)"
        return cls(response.status_code, message)


def _error_message(response: httpx.Response) -> str:
    """The message of the API's one error shape; of any other answer (another server at that
    address, a balancer's own error page), its title or first words, shortened: an error is
    told on one line, never a whole HTML page."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and "error" in body:
        return str(body["error"])
    title = re.search(r"<title[^>]*>(.*?)</title>", response.text, re.I | re.S)
    words = " ".join((title.group(1) if title else response.text).split())
    if len(words) > 160:
        words = words[:159] + "…"
    return f"{words or response.reason_phrase} (not the skillshift API's error shape)"


class SkillShiftUnreachable(SkillShiftError):
    """No answer from the API at all (nothing listens there, or it timed out); `status` is 0."""

    def __init__(self, base_url: str, error: httpx.TransportError) -> None:
        reason = str(error) or type(error).__name__
        self.base_url, self.reason = base_url, reason
        super().__init__(
            0,
            f"the skillshift API at {base_url} is unreachable ({reason}): is the service "
            "running, and is SKILLSHIFT_API_URL (or the client's `base_url`) its API address?",
        )


@dataclass(frozen=True)
class Episode:
    """An episode as the API describes it, with the settings that bind a browser to it."""

    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def token(self) -> str:
        return str(self.data["token"])

    @property
    def condition(self) -> str:
        return str(self.data["condition"])

    @property
    def header(self) -> dict[str, str]:
        """`X-SkillShift-Episode: ID:TOKEN`, for HTTP clients that bind by header."""
        return dict(self.data["header"])

    def playwright_proxy(self) -> dict[str, str]:
        """Playwright's `proxy=` setting (for `launch` or `new_context`): server + credentials."""
        return dict(self.data["proxy"])

    def playwright_context_kwargs(self, ignore_https_errors: bool = True) -> dict[str, Any]:
        """`browser.new_context(**kwargs)`: the proxy, and trust for the proxy's HTTPS CA."""
        return {"proxy": self.playwright_proxy(), "ignore_https_errors": ignore_https_errors}

    def browsergym_kwargs(self, executable_path: str | None = None) -> dict[str, Any]:
        """`BrowserEnv(**kwargs)`: `pw_chromium_kwargs` and `pw_context_kwargs` for this episode.

        `executable_path` defaults to the system's Chromium (Debian's `chromium`) when there is
        one, so no browser download is needed.
        """
        chromium = executable_path or shutil.which("chromium") or shutil.which("chromium-browser")
        return {
            "pw_chromium_kwargs": {"executable_path": chromium} if chromium else {},
            "pw_context_kwargs": self.playwright_context_kwargs(),
        }


@dataclass(frozen=True)
class _Call(Generic[T]):  # not `_Call[T]`: the client runs on Python 3.10
    """One API request and how to read its answer."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    json: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    ok: tuple[int, ...] = (200, 201, 204)


# An agent event's free field is at most this many characters once encoded as JSON (escapes
# included: a character outside ASCII is 6, one outside the BMP 12).
MAX_FIELD = 2048
# A task result's reason, as the helpers cut it (an exception's message can be pages long).
MAX_REASON = 300


def fit_text(text: str, chars: int) -> str:
    """`text` cut to at most `chars` characters, and shorter still where its JSON encoding
    would be longer than an event's free field may be."""
    text = text[:chars]
    while len(json.dumps(text)) > MAX_FIELD:
        text = text[: len(text) * MAX_FIELD // len(json.dumps(text))]
    return text


def _given(**fields: Any) -> dict[str, Any]:
    """The optional fields that were given (None: left out of the event)."""
    return {name: value for name, value in fields.items() if value is not None}


def _json(response: httpx.Response) -> Any:
    return response.json()


def _episode(response: httpx.Response) -> Episode:
    return Episode(response.json())


def _nothing(response: httpx.Response) -> None:
    return None


def _text(response: httpx.Response) -> str:
    return response.text


def _json_lines(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


# How each format of GET /reports is read: csv as text, per_task's JSON lines as a list.
_REPORT_PARSERS: dict[str, Callable[[httpx.Response], Any]] = {
    "csv": _text,
    "per_task": _json_lines,
}


def _raise_for_error(response: httpx.Response, call: _Call[Any]) -> None:
    if response.status_code not in call.ok:
        raise SkillShiftError.from_response(response)


class _Calls:
    """Every request the clients can make, described once."""

    @staticmethod
    def create_episode(config: dict[str, Any]) -> _Call[Episode]:
        return _Call("POST", "/episodes", _episode, json=config)

    @staticmethod
    def get_episode(episode_id: str) -> _Call[dict[str, Any]]:
        return _Call("GET", f"/episodes/{episode_id}", _json)

    @staticmethod
    def list_episodes(include_internal: bool) -> _Call[list[dict[str, Any]]]:
        params = _internal(include_internal)
        return _Call("GET", "/episodes", lambda r: list(r.json()["episodes"]), params=params)

    @staticmethod
    def patch_episode(episode_id: str, changes: dict[str, Any]) -> _Call[Episode]:
        return _Call("PATCH", f"/episodes/{episode_id}", _episode, json=changes)

    @staticmethod
    def delete_episode(episode_id: str, missing_ok: bool) -> _Call[None]:
        ok = (204, 404) if missing_ok else (204,)
        return _Call("DELETE", f"/episodes/{episode_id}", _nothing, ok=ok)

    @staticmethod
    def action(episode_id: str, name: str) -> _Call[Episode]:
        return _Call("POST", f"/episodes/{episode_id}/{name}", _episode)

    @staticmethod
    def post_event(episode_id: str, event_type: str, fields: dict[str, Any]) -> _Call[Any]:
        body = {**fields, "type": event_type}
        return _Call("POST", f"/episodes/{episode_id}/events", _json, json=body)

    @staticmethod
    def events(episode_id: str, after: str | None, limit: int) -> _Call[dict[str, Any]]:
        params: dict[str, Any] = {"limit": limit} | ({"after": after} if after else {})
        return _Call("GET", f"/episodes/{episode_id}/events", _json, params=params)

    @staticmethod
    def report(episode_id: str) -> _Call[dict[str, Any]]:
        return _Call("GET", f"/episodes/{episode_id}/report", _json)

    @staticmethod
    def reports(
        group_by: list[str], tags: TagFilters, fmt: str, include_internal: bool
    ) -> _Call[Any]:
        pairs = tags.items() if isinstance(tags, dict) else tags
        params = {
            "group_by": ",".join(group_by),
            "tag": [f"{key}={value}" for key, value in pairs],
            "format": fmt,
            **_internal(include_internal),
        }
        return _Call("GET", "/reports", _REPORT_PARSERS.get(fmt, _json), params=params)

    @staticmethod
    def har(episode_id: str) -> _Call[dict[str, Any]]:
        return _Call("GET", f"/episodes/{episode_id}/har", _json)

    @staticmethod
    def import_har(
        document: dict[str, Any], name: str, episode_id: str | None
    ) -> _Call[dict[str, Any]]:
        params = _given(name=name, id=episode_id)
        return _Call("POST", "/episodes/import", _json, json=document, params=params)

    @staticmethod
    def pages(episode_id: str) -> _Call[list[dict[str, Any]]]:
        return _Call("GET", f"/episodes/{episode_id}/pages", lambda r: list(r.json()["pages"]))

    @staticmethod
    def page(episode_id: str, load: int) -> _Call[dict[str, Any]]:
        return _Call("GET", f"/episodes/{episode_id}/pages/{load}", _json)

    @staticmethod
    def listeners() -> _Call[list[dict[str, Any]]]:
        return _Call("GET", "/listeners", lambda r: list(r.json()["listeners"]))

    @staticmethod
    def sites() -> _Call[list[dict[str, Any]]]:
        return _Call("GET", "/sites", lambda r: list(r.json()["sites"]))

    @staticmethod
    def ca() -> _Call[dict[str, Any]]:
        return _Call("GET", "/ca", _json)

    @staticmethod
    def set_listener_default(listener: str, episode_id: str | None) -> _Call[Any]:
        return _Call("PUT", f"/listeners/{listener}", _json, {"default_episode": episode_id})

    @staticmethod
    def knowledge() -> _Call[dict[str, Any]]:
        return _Call("GET", "/knowledge", _json)

    @staticmethod
    def knowledge_version(origin: str, version: int) -> _Call[dict[str, Any]]:
        params = {"origin": origin, "version": version}
        return _Call("GET", "/knowledge/version", _json, params=params)

    @staticmethod
    def knowledge_record(digest: str) -> _Call[dict[str, Any]]:
        return _Call("GET", f"/knowledge/records/{digest}", _json)

    @staticmethod
    def learn(urls: list[str], browser: bool) -> _Call[dict[str, Any]]:
        return _Call("POST", "/knowledge/learn", _json, {"urls": urls, "browser": browser})

    @staticmethod
    def delete_knowledge_version(origin: str, version: int) -> _Call[dict[str, Any]]:
        params = {"origin": origin, "version": version}
        return _Call("DELETE", "/knowledge/version", _json, params=params)


def _internal(include_internal: bool) -> dict[str, Any]:
    """The query that asks for the service's own episodes too (the oracle's, the preview's)."""
    return {"include_internal": "true"} if include_internal else {}


def _client_settings(base_url: str | None, token: str | None, timeout: float) -> dict[str, Any]:
    token = token if token is not None else os.environ.get("SKILLSHIFT_API_TOKEN")
    return {
        "base_url": base_url or os.environ.get("SKILLSHIFT_API_URL", DEFAULT_API_URL),
        "headers": {"Authorization": f"Bearer {token}"} if token else {},
        "timeout": timeout,
        # The API is usually on loopback; an HTTP(S)_PROXY in the agent's environment must not
        # send admin calls through some other proxy (or through skillshift itself).
        "trust_env": False,
    }


class SkillShift:
    """Synchronous client. `base_url` and `token` default to SKILLSHIFT_API_URL/_API_TOKEN."""

    def __init__(
        self, base_url: str | None = None, token: str | None = None, timeout: float = 30.0
    ) -> None:
        self._http = httpx.Client(**_client_settings(base_url, token, timeout))

    def _run(self, call: _Call[T]) -> T:
        try:
            response = self._http.request(
                call.method, call.path, json=call.json, params=call.params
            )
        except httpx.TransportError as error:
            raise SkillShiftUnreachable(str(self._http.base_url), error) from error
        _raise_for_error(response, call)
        return call.parse(response)

    def __enter__(self) -> SkillShift:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @contextmanager
    def episode(self, *, keep: bool = False, **config: Any) -> Iterator[Episode]:
        """Create an episode for the `with` block and delete it afterwards, whatever happens;
        with `keep`, leave it (its events, for `/reports`) until its `ttl_s` runs out."""
        episode = self.create_episode(**config)
        try:
            yield episode
        finally:
            if not keep:
                self.delete_episode(episode.id, missing_ok=True)

    def create_episode(self, **config: Any) -> Episode:
        return self._run(_Calls.create_episode(config))

    def get_episode(self, episode_id: str) -> dict[str, Any]:
        return self._run(_Calls.get_episode(episode_id))

    def list_episodes(self, include_internal: bool = False) -> list[dict[str, Any]]:
        """Live episodes; the service's own (`internal`) only with `include_internal`."""
        return self._run(_Calls.list_episodes(include_internal))

    def patch_episode(self, episode_id: str, **changes: Any) -> Episode:
        return self._run(_Calls.patch_episode(episode_id, changes))

    def delete_episode(self, episode_id: str, missing_ok: bool = False) -> None:
        self._run(_Calls.delete_episode(episode_id, missing_ok))

    def reset(self, episode_id: str) -> Episode:
        return self._run(_Calls.action(episode_id, "reset"))

    def suspend(self, episode_id: str) -> Episode:
        return self._run(_Calls.action(episode_id, "suspend"))

    def resume(self, episode_id: str) -> Episode:
        return self._run(_Calls.action(episode_id, "resume"))

    def post_event(self, episode_id: str, event_type: str, **fields: Any) -> dict[str, Any]:
        return dict(self._run(_Calls.post_event(episode_id, event_type, fields)))

    def skill_call(self, episode_id: str, skill: str, **fields: Any) -> dict[str, Any]:
        return self.post_event(episode_id, "skill_call", skill=skill, **fields)

    def skill_failure(self, episode_id: str, skill: str, **fields: Any) -> dict[str, Any]:
        return self.post_event(episode_id, "skill_failure", skill=skill, **fields)

    def step(self, episode_id: str, action: str | None = None, **fields: Any) -> dict[str, Any]:
        """One step of the agent, e.g. `step(episode.id, "click", target="#buy")`."""
        return self.post_event(episode_id, "step", **_given(action=action), **fields)

    def task_result(
        self, episode_id: str, success: bool, steps: int | None = None, **fields: Any
    ) -> dict[str, Any]:
        return self.post_event(
            episode_id, "task_result", success=success, **_given(steps=steps), **fields
        )

    def events(self, episode_id: str, after: str | None = None, limit: int = 100) -> dict[str, Any]:
        return self._run(_Calls.events(episode_id, after, limit))

    def iter_events(self, episode_id: str) -> Iterator[dict[str, Any]]:
        """Every event of the episode, in order, fetched a page at a time."""
        after = None
        while True:
            page = self.events(episode_id, after=after, limit=EVENTS_PAGE)
            yield from page["events"]
            if len(page["events"]) < EVENTS_PAGE:
                return
            after = page["next"]

    def report(self, episode_id: str) -> dict[str, Any]:
        return self._run(_Calls.report(episode_id))

    def reports(
        self,
        group_by: list[str] | None = None,
        tags: TagFilters | None = None,
        format: str = "json",
        include_internal: bool = False,
    ) -> Any:
        """Diagnostics over episodes (SR, AS, ASC, SFR, attributed failures, popups).

        `format`: `json` (rows per group, a dict), `csv` (str), `benchmark` (the benchmark's
        macro-averaged table by website, condition and overall, a dict; `group_by` is
        ignored) or `per_task` (one record per task attempt, a list of dicts). The service's
        own episodes (`internal`: the oracle's, the preview's) count only with
        `include_internal`. `tags`: only the episodes with every one of these tags.
        """
        call = _Calls.reports(group_by or ["condition"], tags or {}, format, include_internal)
        return self._run(call)

    def har(self, episode_id: str) -> dict[str, Any]:
        """The episode's recording as a HAR 1.2 document (the service needs --record-dir)."""
        return self._run(_Calls.har(episode_id))

    def import_har(
        self, document: dict[str, Any], name: str = "upload.har", episode_id: str | None = None
    ) -> dict[str, Any]:
        """A HAR 1.2 document (this service's export, or Playwright's, DevTools', Firefox's)
        made into an archived episode that `create_episode(replay_of=ID)` replays; the answer
        has its `id`, its `entries` and `pages`, and the entries `skipped`."""
        return self._run(_Calls.import_har(document, name, episode_id))

    def pages(self, episode_id: str) -> list[dict[str, Any]]:
        """The episode's recorded pages: load index, URL, status, what each shift did."""
        return self._run(_Calls.pages(episode_id))

    def page(self, episode_id: str, load: int) -> dict[str, Any]:
        """One recorded page's change map (the elements each shift changed, the popup)."""
        return self._run(_Calls.page(episode_id, load))

    def listeners(self) -> list[dict[str, Any]]:
        """The proxy's listeners: name, kind (`regular`, `desktop`, `reverse`), default episode."""
        return self._run(_Calls.listeners())

    def sites(self) -> list[dict[str, Any]]:
        """The service's site profiles: name, host patterns, targets, protected selectors."""
        return self._run(_Calls.sites())

    def ca(self) -> dict[str, Any]:
        """The CA that signs intercepted HTTPS: its PEM, SPKI hash and browser settings."""
        return self._run(_Calls.ca())

    def set_listener_default(self, listener: str, episode_id: str | None) -> dict[str, Any]:
        return dict(self._run(_Calls.set_listener_default(listener, episode_id)))

    def knowledge(self) -> dict[str, Any]:
        """The knowledge epoch new episodes pin, and every origin's knowledge versions."""
        return self._run(_Calls.knowledge())

    def knowledge_version(self, origin: str, version: int) -> dict[str, Any]:
        """One version of an origin's knowledge: its pages and their records."""
        return self._run(_Calls.knowledge_version(origin, version))

    def knowledge_record(self, digest: str) -> dict[str, Any]:
        """One page record: every stylesheet and script the page was learnt to load."""
        return self._run(_Calls.knowledge_record(digest))

    def learn(self, urls: list[str], browser: bool = True) -> dict[str, Any]:
        """Learn pages afresh; where the app's code changed, a new version is published."""
        return self._run(_Calls.learn(urls, browser))

    def delete_knowledge_version(self, origin: str, version: int) -> dict[str, Any]:
        return self._run(_Calls.delete_knowledge_version(origin, version))


class AsyncSkillShift:
    """Asynchronous client, the same methods as `SkillShift`, awaited."""

    def __init__(
        self, base_url: str | None = None, token: str | None = None, timeout: float = 30.0
    ) -> None:
        self._http = httpx.AsyncClient(**_client_settings(base_url, token, timeout))

    async def _run(self, call: _Call[T]) -> T:
        try:
            response = await self._http.request(
                call.method, call.path, json=call.json, params=call.params
            )
        except httpx.TransportError as error:
            raise SkillShiftUnreachable(str(self._http.base_url), error) from error
        _raise_for_error(response, call)
        return call.parse(response)

    async def __aenter__(self) -> AsyncSkillShift:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    @asynccontextmanager
    async def episode(self, *, keep: bool = False, **config: Any) -> AsyncIterator[Episode]:
        episode = await self.create_episode(**config)
        try:
            yield episode
        finally:
            if not keep:
                await self.delete_episode(episode.id, missing_ok=True)

    async def create_episode(self, **config: Any) -> Episode:
        return await self._run(_Calls.create_episode(config))

    async def get_episode(self, episode_id: str) -> dict[str, Any]:
        return await self._run(_Calls.get_episode(episode_id))

    async def list_episodes(self, include_internal: bool = False) -> list[dict[str, Any]]:
        return await self._run(_Calls.list_episodes(include_internal))

    async def patch_episode(self, episode_id: str, **changes: Any) -> Episode:
        return await self._run(_Calls.patch_episode(episode_id, changes))

    async def delete_episode(self, episode_id: str, missing_ok: bool = False) -> None:
        await self._run(_Calls.delete_episode(episode_id, missing_ok))

    async def reset(self, episode_id: str) -> Episode:
        return await self._run(_Calls.action(episode_id, "reset"))

    async def suspend(self, episode_id: str) -> Episode:
        return await self._run(_Calls.action(episode_id, "suspend"))

    async def resume(self, episode_id: str) -> Episode:
        return await self._run(_Calls.action(episode_id, "resume"))

    async def post_event(self, episode_id: str, event_type: str, **fields: Any) -> dict[str, Any]:
        return dict(await self._run(_Calls.post_event(episode_id, event_type, fields)))

    async def skill_call(self, episode_id: str, skill: str, **fields: Any) -> dict[str, Any]:
        return await self.post_event(episode_id, "skill_call", skill=skill, **fields)

    async def skill_failure(self, episode_id: str, skill: str, **fields: Any) -> dict[str, Any]:
        return await self.post_event(episode_id, "skill_failure", skill=skill, **fields)

    async def step(
        self, episode_id: str, action: str | None = None, **fields: Any
    ) -> dict[str, Any]:
        return await self.post_event(episode_id, "step", **_given(action=action), **fields)

    async def task_result(
        self, episode_id: str, success: bool, steps: int | None = None, **fields: Any
    ) -> dict[str, Any]:
        return await self.post_event(
            episode_id, "task_result", success=success, **_given(steps=steps), **fields
        )

    async def events(
        self, episode_id: str, after: str | None = None, limit: int = 100
    ) -> dict[str, Any]:
        return await self._run(_Calls.events(episode_id, after, limit))

    async def iter_events(self, episode_id: str) -> AsyncIterator[dict[str, Any]]:
        after = None
        while True:
            page = await self.events(episode_id, after=after, limit=EVENTS_PAGE)
            for event in page["events"]:
                yield event
            if len(page["events"]) < EVENTS_PAGE:
                return
            after = page["next"]

    async def report(self, episode_id: str) -> dict[str, Any]:
        return await self._run(_Calls.report(episode_id))

    async def reports(
        self,
        group_by: list[str] | None = None,
        tags: TagFilters | None = None,
        format: str = "json",
        include_internal: bool = False,
    ) -> Any:
        call = _Calls.reports(group_by or ["condition"], tags or {}, format, include_internal)
        return await self._run(call)

    async def har(self, episode_id: str) -> dict[str, Any]:
        return await self._run(_Calls.har(episode_id))

    async def import_har(
        self, document: dict[str, Any], name: str = "upload.har", episode_id: str | None = None
    ) -> dict[str, Any]:
        return await self._run(_Calls.import_har(document, name, episode_id))

    async def pages(self, episode_id: str) -> list[dict[str, Any]]:
        return await self._run(_Calls.pages(episode_id))

    async def page(self, episode_id: str, load: int) -> dict[str, Any]:
        return await self._run(_Calls.page(episode_id, load))

    async def listeners(self) -> list[dict[str, Any]]:
        return await self._run(_Calls.listeners())

    async def sites(self) -> list[dict[str, Any]]:
        return await self._run(_Calls.sites())

    async def ca(self) -> dict[str, Any]:
        return await self._run(_Calls.ca())

    async def set_listener_default(self, listener: str, episode_id: str | None) -> dict[str, Any]:
        return dict(await self._run(_Calls.set_listener_default(listener, episode_id)))

    async def knowledge(self) -> dict[str, Any]:
        return await self._run(_Calls.knowledge())

    async def knowledge_version(self, origin: str, version: int) -> dict[str, Any]:
        return await self._run(_Calls.knowledge_version(origin, version))

    async def knowledge_record(self, digest: str) -> dict[str, Any]:
        return await self._run(_Calls.knowledge_record(digest))

    async def learn(self, urls: list[str], browser: bool = True) -> dict[str, Any]:
        return await self._run(_Calls.learn(urls, browser))

    async def delete_knowledge_version(self, origin: str, version: int) -> dict[str, Any]:
        return await self._run(_Calls.delete_knowledge_version(origin, version))
