"""skillshift's addons behind one mitmproxy addon.

mitmproxy's addon manager offers every event (each of a flow's hooks, then an `update` after
each) to every loaded addon, through a generator, a `getattr`, a context manager and a
coroutine per addon, whether or not the addon has the hook. The service's ten addons, called
one by one that way, cost every request about as much as relaying it. Loaded as one addon, each
hook costs one dispatch: the chain keeps, per hook, the list of its members' handlers, and calls
them in order with the manager's own rules. An error in one member is logged as mitmproxy logs
an addon error and the next member still runs; `AddonHalt` (and an `OptionsError` while options
load) stops the chain, as it stops mitmproxy's.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

import mitmproxy.addonmanager  # noqa: F401 - registers the load hook
import mitmproxy.proxy.layers  # noqa: F401 - registers the flow hooks
import mitmproxy.proxy.server_hooks  # noqa: F401 - registers the connection hooks
from mitmproxy import exceptions, hooks

logger = logging.getLogger(__name__)

Handler = Callable[..., Any]


class AddonChain:
    """Members in hook order, each hook dispatched once to the handlers that have it."""

    def __init__(self, members: Sequence[object]) -> None:
        self.members = tuple(members)
        for hook in hooks.all_hooks:
            handlers = [
                handler
                for member in self.members
                if callable(handler := getattr(member, hook, None))
            ]
            if handlers:
                setattr(self, hook, _dispatcher(handlers, guarded=hook not in _UNGUARDED))

    def get(self, name: str) -> object | None:
        """A member by its mitmproxy addon name (its `name`, else its class name in lower
        case), as `AddonManager.get` finds addons."""
        return next((m for m in self.members if _addon_name(m) == name), None)


# mitmproxy lets a failing `load` abort the start (it is called outside its error guard):
# so does the chain, instead of serving without a member's options.
_UNGUARDED = frozenset({"load"})


def _addon_name(addon: object) -> str:
    return str(getattr(addon, "name", None) or type(addon).__name__.lower())


def _dispatcher(handlers: list[Handler], guarded: bool) -> Handler:
    if not guarded:

        def dispatch_unguarded(*args: object) -> None:
            for handler in handlers:
                handler(*args)

        return dispatch_unguarded
    # Load, configure and done hooks are called synchronously by mitmproxy: a hook none of
    # whose handlers is a coroutine function stays synchronous.
    if not any(inspect.iscoroutinefunction(handler) for handler in handlers):

        def dispatch(*args: object) -> None:
            for handler in handlers:
                try:
                    handler(*args)
                except (exceptions.AddonHalt, exceptions.OptionsError):
                    raise
                except Exception as error:  # noqa: BLE001 - one member's failure is logged
                    _log(error)

        return dispatch

    async def dispatch_async(*args: object) -> None:
        for handler in handlers:
            try:
                result = handler(*args)
                if result is not None and inspect.isawaitable(result):
                    await result
            except (exceptions.AddonHalt, exceptions.OptionsError):
                raise
            except Exception as error:  # noqa: BLE001 - one member's failure is logged
                _log(error)

    return dispatch_async


def _log(error: Exception) -> None:
    logger.error(f"Addon error: {error}", exc_info=(type(error), error, error.__traceback__))
