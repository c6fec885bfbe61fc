"""What the service's work can fail with, said without HTTP.

The episodes' lifecycle, the evidence, the analysis and the oracle raise these; the admin API
answers each with its status in the one error shape (api/errors.py), and a script or the CLI
can catch them as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol


class Failure(Exception):
    """A request the service cannot do; the message says why, for the user."""

    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(Failure):
    status = 404


class Refused(Failure):
    """Not allowed: an upstream outside the allow-list, say."""

    status = 403


class Conflict(Failure):
    """Already exists, or not possible in the current state."""

    status = 409


class Invalid(Failure):
    status = 422


class MissingExtra(Failure):
    """An optional part of the distribution is not installed (Playwright, for the oracle)."""

    status = 501


class Unavailable(Failure):
    """A part the request needs is down: the proxy, Chromium, a store."""

    status = 503


class _Errors(Protocol):
    def errors(self) -> Iterable[Mapping[str, Any]]: ...


def validation_message(error: _Errors) -> str:
    """One line naming each invalid field and why, the same for a request body that FastAPI
    refused and for a model validated in code (both are pydantic's errors)."""
    parts = []
    for item in error.errors():
        location = ".".join(str(part) for part in item.get("loc", ()) if part != "body")
        message = str(item.get("msg", "invalid")).removeprefix("Value error, ")
        if not location and item.get("type") == "value_error":
            # A check of the whole (`unknown shift 'x'`): its message names what it is about.
            parts.append(message)
        else:
            parts.append(f"{location or 'body'}: {message}")
    return "; ".join(parts) or "invalid request"
