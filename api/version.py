"""The installed distribution's version: the API reports it and shift digests include it."""

from __future__ import annotations

from importlib import metadata


def version() -> str:
    try:
        return metadata.version("skillshift-proxy")
    except metadata.PackageNotFoundError:
        return "0+unknown"
