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
# The extended execution set's runtime: a script of its own, so the benchmark's runtime (and
# with its version, every page shifted under the benchmark's sets) stays byte for byte.
INTERRUPTIONS_NAME = "i.js"
BEACON_NAME = "b"
ASSETS = {RUNTIME_NAME: "assets/runtime.js", INTERRUPTIONS_NAME: "assets/interruptions.js"}


_FULL_LINE_COMMENT = re.compile(rb"^\s*//.*\n", re.MULTILINE)
_TRAILING_COMMENT = re.compile(rb"[ \t]+// .*$", re.MULTILINE)
_BLOCK_COMMENT = re.compile(rb"[ \t]*/\* .*? \*/")


@cache
def script_source(name: str) -> bytes:
    """A client script as served (`r.js`, `i.js`): without its comments, which would tell an
    agent what it is for."""
    source = resources.files("shifts").joinpath(ASSETS[name]).read_bytes()
    for comment in (_FULL_LINE_COMMENT, _TRAILING_COMMENT, _BLOCK_COMMENT):
        source = comment.sub(b"", source)
    return source


@cache
def script_version(name: str) -> str:
    return hashlib.sha256(script_source(name)).hexdigest()[:10]


def runtime_source() -> bytes:
    return script_source(RUNTIME_NAME)


def runtime_version() -> str:
    return script_version(RUNTIME_NAME)


def runtime_tag(ctx: ShiftContext, config: dict[str, Any], name: str = RUNTIME_NAME) -> str:
    """A deferred <script> loading a client script from the internal prefix, configured inline.

    The configuration travels in a data attribute (HTML-escaped JSON), so the tag needs no inline
    script and satisfies a CSP with only the nonce added.
    """
    full_config = {"b": ctx.internal_prefix + BEACON_NAME, "k": ctx.beacon_key, **config}
    payload = escape(json.dumps(full_config, separators=(",", ":"), sort_keys=True), quote=True)
    src = f"{ctx.internal_prefix}{name}?v={script_version(name)}"
    return f'<script{ctx.nonce_attr()} src="{src}" data-cfg="{payload}" defer></script>'
