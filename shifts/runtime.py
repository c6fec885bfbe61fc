"""The client runtime: the script injected into shifted pages, and the tag that loads it."""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from html import escape
from importlib import resources
from typing import Any

from shifts.shift_context import ShiftContext

RUNTIME_NAME = "r.js"
BEACON_NAME = "b"


_FULL_LINE_COMMENT = re.compile(rb"^\s*//.*\n", re.MULTILINE)
_TRAILING_COMMENT = re.compile(rb"[ \t]+// .*$", re.MULTILINE)
_BLOCK_COMMENT = re.compile(rb"[ \t]*/\* .*? \*/")


@cache
def runtime_source() -> bytes:
    """The runtime as served: without its comments, which would tell an agent what it is for."""
    source = resources.files("shifts").joinpath("assets/runtime.js").read_bytes()
    for comment in (_FULL_LINE_COMMENT, _TRAILING_COMMENT, _BLOCK_COMMENT):
        source = comment.sub(b"", source)
    return source


@cache
def runtime_version() -> str:
    return hashlib.sha256(runtime_source()).hexdigest()[:10]


def runtime_tag(ctx: ShiftContext, config: dict[str, Any]) -> str:
    """A deferred <script> loading the runtime from the internal prefix, configured inline.

    The configuration travels in a data attribute (HTML-escaped JSON), so the tag needs no inline
    script and satisfies a CSP with only the nonce added.
    """
    full_config = {"b": ctx.internal_prefix + BEACON_NAME, "k": ctx.beacon_key, **config}
    payload = escape(json.dumps(full_config, separators=(",", ":"), sort_keys=True), quote=True)
    src = f"{ctx.internal_prefix}{RUNTIME_NAME}?v={runtime_version()}"
    return f'<script{ctx.nonce_attr()} src="{src}" data-cfg="{payload}" defer></script>'
