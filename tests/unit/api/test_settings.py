"""Every setting of `serve`: one Settings field is one option `--field-name` (api/cli.py builds
them from the fields) and one variable SKILLSHIFT_FIELD_NAME, and both are honoured."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from api.cli import build_parser
from api.settings import ENV_PREFIX, Settings, SettingsError, load_settings

# For every field: a value as an option or a variable carries it, and the value it must give.
EXAMPLES: dict[str, tuple[str, Any]] = {
    "proxy": ("127.0.0.1:18080", ("127.0.0.1", 18080)),
    "desktop_proxy": ("127.0.0.1:18082", ("127.0.0.1", 18082)),
    "api": ("127.0.0.1:18081", ("127.0.0.1", 18081)),
    "redis_url": ("redis://127.0.0.1:6390/1", "redis://127.0.0.1:6390/1"),
    "key_prefix": ("other:", "other:"),
    "reverse": ("http://127.0.0.1:9000@9001", ["http://127.0.0.1:9000@9001"]),
    "allow_unbound": ("true", True),
    "api_token": ("s3cret", "s3cret"),
    "internal_prefix": ("/__x/", "/__x/"),
    "episode_header": ("X-Other-Episode", "X-Other-Episode"),
    "require_token": ("true", True),
    "max_rewrite_bytes": ("1234", 1234),
    "offload_bytes": ("4321", 4321),
    "learn": ("static", "static"),
    "learn_timeout": ("2.5", 2.5),
    "knowledge_dir": ("/srv/knowledge", "/srv/knowledge"),
    "asset_max_bytes": ("65536", 65536),
    "confdir": ("/srv/ca", "/srv/ca"),
    "upstream_ca": ("/srv/lab-ca.pem", "/srv/lab-ca.pem"),
    "record_dir": ("/srv/recordings", "/srv/recordings"),
    "upstream_insecure": ("true", True),
    "upstream_allow": ("127.0.0.1,localhost", "127.0.0.1,localhost"),
    "upstream_timeout": ("7.5", 7.5),
    "targets": ("http://a.test:1=http://b.test:2", (("http://a.test:1", "http://b.test:2"),)),
    "demo": ("true", True),
    "demo_port": ("8190", 8190),
    "log_level": ("debug", "debug"),
}
FIELDS = list(Settings.model_fields)


def variable(name: str) -> str:
    return f"{ENV_PREFIX}{name.upper()}"


def option(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_every_field_has_an_example_here() -> None:
    assert set(EXAMPLES) == set(FIELDS), "a new setting needs its example in this table"


@pytest.mark.parametrize("name", FIELDS)
def test_every_field_is_described(name: str) -> None:
    description = Settings.model_fields[name].description
    assert description and len(description.split()) >= 3, name


@pytest.mark.parametrize("name", FIELDS)
def test_every_variable_is_honoured(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for other in FIELDS:
        monkeypatch.delenv(variable(other), raising=False)
    text, expected = EXAMPLES[name]
    assert getattr(load_settings({}), name) != expected  # the example is not the default
    monkeypatch.setenv(variable(name), text)
    assert getattr(load_settings({}), name) == expected


@pytest.mark.parametrize("name", FIELDS)
def test_every_option_is_parsed_and_wins_over_its_variable(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for other in FIELDS:
        monkeypatch.delenv(variable(other), raising=False)
    text, expected = EXAMPLES[name]
    field = Settings.model_fields[name]
    args = [option(name)] if field.annotation is bool else [option(name), text]
    namespace = vars(build_parser().parse_args(["serve", *args]))
    given = {key: value for key, value in namespace.items() if key in Settings.model_fields}
    assert set(given) == {name}  # options not given are left to the variables and defaults
    if field.annotation is not bool:
        monkeypatch.setenv(variable(name), "nonsense-from-the-environment")
    assert getattr(load_settings(given), name) == expected


def test_help_names_every_option_its_variable_and_its_description() -> None:
    actions = build_parser()._subparsers._group_actions  # type: ignore[union-attr]
    serve = actions[0].choices["serve"]  # type: ignore[index]
    text = re.sub(r"\s+", "", serve.format_help())
    for name in FIELDS:
        description = Settings.model_fields[name].description or ""
        assert option(name) in text and variable(name) in text, name
        assert re.sub(r"\s+", "", description) in text, name


def test_a_bad_variable_is_reported_by_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(variable("upstream_timeout"), "soon")
    with pytest.raises(SettingsError, match="SKILLSHIFT_UPSTREAM_TIMEOUT='soon'"):
        load_settings({})
    with pytest.raises(SettingsError, match="--upstream-timeout='later'"):
        load_settings({"upstream_timeout": "later"})


def test_the_readme_lists_every_option_with_its_variable() -> None:
    """The README's configuration table is the reference: one row per field."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    table = readme.split("## Configuration", 1)[1].split("\n\n", 3)[2]
    rows = {line.split("|")[1].strip(" `") for line in table.splitlines()[2:]}
    assert rows == {"--" + name.replace("_", "-") for name in Settings.model_fields}
    for name in Settings.model_fields:
        assert f"`SKILLSHIFT_{name.upper()}`" in table, name
