"""Episode binding: which episode does this request belong to?

In order: the episode header ("ID" or "ID:TOKEN"); proxy credentials (user = episode id,
password = token), remembered per client connection because requests inside an HTTPS tunnel
carry none; the listener's default episode, only on listeners that may have one (a desktop
listener, reverse listeners; never the agents' listener, where a default would answer before
Chromium ever sends its credentials). The binding header and credentials never reach the
upstream. Unknown episodes and wrong tokens get a 407, and nothing is forwarded.
"""

from __future__ import annotations

import base64
import binascii
import logging
import weakref
from collections.abc import MutableMapping

from mitmproxy import connection, ctx, http
from pydantic import ValidationError

from proxy import metrics
from proxy.episode import Episode
from proxy.flowstate import state_of
from proxy.options import add_options
from proxy.responses import answer, auth_required, error_response
from proxy.store import EpisodeStore, StoreUnavailable

logger = logging.getLogger(__name__)

PROXY_AUTH = "proxy-authorization"


class BindingRejected(Exception):
    def __init__(self, response: http.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def listener_name(flow: http.HTTPFlow) -> str:
    """Listeners are named by the port they listen on."""
    return str(flow.client_conn.sockname[1])


class EpisodeBinding:
    def __init__(self, store: EpisodeStore) -> None:
        self.store = store
        # Episode id bound to a client connection by the credentials of its CONNECT request.
        self.tunnels: MutableMapping[connection.Client, str] = weakref.WeakKeyDictionary()

    def load(self, loader) -> None:  # type: ignore[no-untyped-def]
        add_options(
            loader,
            "ss_episode_header",
            "ss_require_token",
            "ss_allow_unbound",
            "ss_default_listeners",
        )

    async def http_connect(self, flow: http.HTTPFlow) -> None:
        """An HTTPS (or WebSocket) tunnel: bind the whole client connection now."""
        await self._bind(flow, tunnel=True)

    async def requestheaders(self, flow: http.HTTPFlow) -> None:
        if flow.response is None:
            await self._bind(flow, tunnel=False)

    async def _bind(self, flow: http.HTTPFlow, tunnel: bool) -> None:
        metrics.inc("requests_total")
        await self._resolve_into(flow, tunnel)
        if flow.response is not None:
            metrics.inc("rejected_total")

    async def _resolve_into(self, flow: http.HTTPFlow, tunnel: bool) -> None:
        try:
            episode = await self._resolve(flow, tunnel)
        except BindingRejected as rejected:
            answer(flow, rejected.response)
            return
        except StoreUnavailable as error:
            logger.warning("episode store unavailable: %s", error)
            answer(
                flow,
                error_response(
                    503,
                    "The episode store is unavailable; the request was not forwarded. "
                    "Retry when it is back.",
                ),
            )
            return
        if episode is not None:
            state_of(flow).episode = episode
            if tunnel:
                self.tunnels[flow.client_conn] = episode.id
        elif not ctx.options.ss_allow_unbound:
            answer(
                flow,
                auth_required(
                    "This request is bound to no episode. Send proxy credentials "
                    "(user name = episode id, password = episode token) or the episode header."
                ),
            )

    async def _resolve(self, flow: http.HTTPFlow, tunnel: bool) -> Episode | None:
        headers = flow.request.headers
        header_value = headers.pop(ctx.options.ss_episode_header, None)
        credentials = headers.pop(PROXY_AUTH, None)
        if header_value:
            episode_id, _, token = header_value.strip().partition(":")
            if not token and ctx.options.ss_require_token:
                raise BindingRejected(auth_required("The episode header must be 'ID:TOKEN'."))
            # A bare id is allowed here, but one not found may be a token left out by mistake.
            return await self._load(
                episode_id, token or None, "" if token else " The episode header is 'ID:TOKEN'."
            )
        if credentials:
            episode_id, token = _parse_basic(credentials)
            return await self._load(episode_id, token)
        if not tunnel and flow.client_conn in self.tunnels:
            return await self._load(self.tunnels[flow.client_conn], None)
        listener = listener_name(flow)
        if listener not in ctx.options.ss_default_listeners.split(","):
            return None
        default_id = await self.store.get_listener_default(listener)
        return await self._load(default_id, None) if default_id else None

    async def _load(self, episode_id: str, token: str | None, hint: str = "") -> Episode:
        record = await self.store.get_episode(episode_id)
        if record is None:
            raise BindingRejected(
                auth_required(f"Unknown or expired episode {episode_id!r}.{hint}")
            )
        try:
            episode = Episode.model_validate(record)
        except ValidationError as error:
            logger.error("episode %s has an invalid stored record: %s", episode_id, error)
            raise BindingRejected(
                error_response(
                    503,
                    f"Episode {episode_id!r} is stored in a form this version "
                    "cannot read; the request was not forwarded.",
                )
            ) from None
        if token is not None and not episode.check_token(token):
            raise BindingRejected(auth_required(f"Wrong token for episode {episode_id!r}."))
        return episode


def _parse_basic(value: str) -> tuple[str, str]:
    scheme, _, encoded = value.strip().partition(" ")
    if scheme.lower() != "basic":
        raise BindingRejected(auth_required("Proxy credentials must use the Basic scheme."))
    try:
        user, _, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise BindingRejected(auth_required("Malformed proxy credentials.")) from None
    return user, password
