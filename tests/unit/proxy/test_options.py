"""proxy.options: every addon option declared once, registered from there by the addon that
reads it, on the real addon chain."""

from __future__ import annotations

from pathlib import Path

from mitmproxy.test import taddons

from proxy import build_addons
from proxy.options import OPTIONS
from proxy.recorder import Recorder
from proxy.recording_dir import Recording
from proxy.store import MemoryStore


def test_the_chain_registers_every_option_with_its_declared_default_and_help(
    tmp_path: Path,
) -> None:
    store = MemoryStore()
    addons = [*build_addons(store), Recorder(Recording(str(tmp_path)), store)]
    with taddons.context(*addons) as context:
        registered = {name for name in context.options.keys() if name.startswith("ss_")}  # noqa: SIM118 (no __iter__)
        assert registered == set(OPTIONS)
        for option in OPTIONS.values():
            declared = context.options._options[option.name]
            assert declared.default == option.default, option.name
            assert declared.help == option.help, option.name
            assert declared.choices == (list(option.choices) if option.choices else None)
