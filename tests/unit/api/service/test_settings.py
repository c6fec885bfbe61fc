"""Every setting of `serve`: one Settings field is one option `--field-name` (api/service/cli.py
builds them from the fields) and one variable SKILLSHIFT_FIELD_NAME, and both are honoured."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import certifi
import pytest

from api.service.cli import build_parser, given_settings
from api.service.server import make_master
from api.service.settings import ENV_PREFIX, Settings, SettingsError, load_settings
from proxy.knowledge import KnowledgeLookup, Learner
from proxy.knowledge.store import FileKnowledge
from proxy.options import OPTIONS
from proxy.recording_dir import Recording
from proxy.store import MemoryStore
from tests.helpers.tls import make_upstream_tls

EXAMPLE_DIR = Path(tempfile.gettempdir()) / "skillshift-settings-example"
RECORDINGS = str(EXAMPLE_DIR / "recordings")
KNOWLEDGE = str(EXAMPLE_DIR / "knowledge")
CONFDIR = str(EXAMPLE_DIR / "ca")
# For every field: a value as an option or a variable carries it, and the value it must give.
EXAMPLES: dict[str, tuple[str, Any]] = {
    "proxy": ("127.0.0.1:18080", ("127.0.0.1", 18080)),
    "desktop_proxy": ("127.0.0.1:18082", ("127.0.0.1", 18082)),
    "advertised_proxy": ("balancer.lab:3128", ("balancer.lab", 3128)),
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
    "collect_after_bytes": ("0", 0),
    "learn": ("static", "static"),
    "learn_timeout": ("2.5", 2.5),
    # Directories the service may create (their parent is writable): checked at start.
    "knowledge_dir": (KNOWLEDGE, KNOWLEDGE),
    "asset_max_bytes": ("65536", 65536),
    "confdir": (CONFDIR, CONFDIR),
    "upstream_ca": (certifi.where(), certifi.where()),  # (a file of PEM certificates)
    "record_dir": (RECORDINGS, RECORDINGS),
    "record_max_bytes": ("1048576", 1048576),
    "import_max_bytes": ("2097152", 2097152),
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
    given = given_settings(build_parser().parse_args(["serve", *args]))
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
    for never in ("inf", "nan"):  # (no upstream would ever time out)
        with pytest.raises(SettingsError, match=f"--upstream-timeout='{never}'"):
            load_settings({"upstream_timeout": never})
    # The root: every path of every app would be the proxy's own.
    with pytest.raises(SettingsError, match="--internal-prefix='/'.*not the root"):
        load_settings({"internal_prefix": "/"})


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("notaurl", "is not a Redis URL (redis://HOST:PORT/DB"),
        ("redis://127.0.0.1:99999/0", "is not a Redis URL: Port out of range"),
        ("http://127.0.0.1:6379/0", "is not a Redis URL (redis://HOST:PORT/DB"),
        ("unix://", "is not a Redis URL (redis://HOST:PORT/DB"),
        ("127.0.0.1:6379", "is not a Redis URL (redis://HOST:PORT/DB"),
        # redis-py used database 0 for any name it could not read as a number.
        ("redis://127.0.0.1:6379/abc", "names database 'abc': a database is a number"),
    ],
)
def test_a_redis_url_redis_cannot_use_is_refused_at_start(url: str, why: str) -> None:
    """Not a traceback from the client library when the store opens."""
    with pytest.raises(
        SettingsError, match=re.escape(f"--redis-url={url!r}: Value error, {url!r} {why}")
    ):
        load_settings({"redis_url": url})
    for good in ("redis://127.0.0.1:6379/0", "rediss://:pw@cache.test:6380", "unix:///r.sock"):
        assert load_settings({"redis_url": good}).redis_url == good
    assert load_settings({"redis_url": "redis:///0"}).redis_url == "redis:///0"  # (localhost)
    # An empty variable, as a template leaves it: the embedded store, as before.
    assert load_settings({"redis_url": ""}).redis_url is None


def test_without_playwright_the_browser_learner_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "playwright", None)  # as if the extra were not installed
    extra = re.escape("pip install 'skillshift-proxy[browser]'")
    with pytest.raises(SettingsError, match=f"--learn='browser': .*{extra}.*static"):
        load_settings({"learn": "browser"})
    with pytest.raises(SettingsError, match="SKILLSHIFT_LEARN='browser'"):
        load_settings({})  # the default: it says which variable (or option) to change
    assert load_settings({"learn": "static"}).learn == "static"


def test_the_docs_list_every_option_with_its_variable() -> None:
    """The configuration page's table is the reference: one row per field."""
    page = (Path(__file__).resolve().parents[4] / "docs" / "configuration.md").read_text()
    table = page.split("# Configuration", 1)[1].split("\n\n", 3)[2]
    rows = {line.split("|")[1].strip(" `") for line in table.splitlines()[2:]}
    assert rows == {"--" + name.replace("_", "-") for name in Settings.model_fields}
    for name in Settings.model_fields:
        assert f"`SKILLSHIFT_{name.upper()}`" in table, name


def test_every_setting_an_addon_reads_is_its_option_declared_once() -> None:
    """`proxy.options` declares each addon option once; the setting that carries it has its
    default and help, and no other setting names it."""
    carried = [option for option in OPTIONS.values() if option.setting is not None]
    assert len({option.setting for option in carried}) == len(carried)
    for option in carried:
        field = Settings.model_fields[str(option.setting)]
        assert field.default == option.default, option.name
        assert field.description == option.help, option.name


async def test_a_process_gives_each_addon_option_its_setting(tmp_path: Path) -> None:
    """The mitmproxy options of a process's addons are its settings (`--record-max-bytes`
    included, which had no flag), not the addons' defaults."""
    given = {
        name: EXAMPLES[name][0]
        for name in ("episode_header", "max_rewrite_bytes", "learn_timeout", "record_max_bytes")
    }
    settings = load_settings({**given, "record_dir": str(tmp_path), "confdir": str(tmp_path)})
    knowledge = KnowledgeLookup(FileKnowledge(tmp_path / "knowledge"), Learner())
    master = make_master(settings, MemoryStore(), Recording(str(tmp_path)), knowledge)
    for option in OPTIONS.values():
        if option.setting is not None:
            assert getattr(master.options, option.name) == getattr(settings, option.setting)
    assert master.options.ss_record_max_bytes == 1048576
    assert master.options.ss_episode_header == "X-Other-Episode"


def test_a_record_directory_that_cannot_be_used_is_refused_at_start(tmp_path: Path) -> None:
    a_file = tmp_path / "recordings.txt"
    a_file.write_text("not a directory")
    for directory in (a_file, a_file / "under"):
        with pytest.raises(SettingsError, match=f"{a_file} is not a directory"):
            load_settings({"record_dir": str(directory)})
    # Missing is fine: the service creates it, with its parents.
    missing = tmp_path / "new" / "recordings"
    assert load_settings({"record_dir": str(missing)}).record_dir == str(missing)


def test_a_knowledge_directory_that_cannot_be_used_is_refused_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named by its option or variable (it was a traceback when the store opened), and the
    confdir when the knowledge would be kept under it; with Redis the knowledge is there."""
    a_file = tmp_path / "afile"
    a_file.write_text("not a directory")
    not_one = re.escape(f"{a_file} is not a directory: cannot keep site knowledge in")
    with pytest.raises(SettingsError, match=f"--knowledge-dir='{a_file}/under': .*{not_one}"):
        load_settings({"knowledge_dir": str(a_file / "under")})
    with pytest.raises(SettingsError, match=f"--confdir='{a_file}': .*{not_one}"):
        load_settings({"confdir": str(a_file)})
    monkeypatch.setenv(variable("knowledge_dir"), str(a_file))
    with pytest.raises(SettingsError, match=f"SKILLSHIFT_KNOWLEDGE_DIR='{a_file}': .*{not_one}"):
        load_settings({})
    on_redis = load_settings({"redis_url": "redis://127.0.0.1:6390/1"})
    assert on_redis.knowledge_dir == str(a_file)  # (unused: the knowledge is in Redis)
    # The CA lives in the confdir, with Redis too.
    with pytest.raises(SettingsError, match=f"{a_file} is not a directory: cannot keep the"):
        load_settings({"redis_url": "redis://127.0.0.1:6390/1", "confdir": str(a_file)})
    monkeypatch.delenv(variable("knowledge_dir"))
    missing = tmp_path / "new" / "knowledge"
    assert load_settings({"knowledge_dir": str(missing)}).knowledge_path == missing


def test_an_upstream_ca_that_cannot_be_loaded_is_refused_at_start(tmp_path: Path) -> None:
    """Missing, a directory, or no certificate in it: every HTTPS request was a 502."""
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    for path, why in [
        ("/nonexistent.pem", "cannot read /nonexistent.pem: No such file or directory"),
        (str(tmp_path), f"cannot read {tmp_path}: Is a directory"),
        (str(junk), f"{junk} holds no PEM certificate: NO_CERTIFICATE_OR_CRL_FOUND"),
    ]:
        with pytest.raises(
            SettingsError, match=re.escape(f"--upstream-ca='{path}': ") + ".*" + re.escape(why)
        ):
            load_settings({"upstream_ca": path})
    ca, _, _ = make_upstream_tls(tmp_path)
    assert load_settings({"upstream_ca": str(ca)}).upstream_ca == str(ca)
    assert load_settings({"upstream_ca": ""}).upstream_ca is None  # (an empty variable)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in any directory")
def test_a_record_directory_not_writable_is_refused_at_start(tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(SettingsError, match="is not writable"):
            load_settings({"record_dir": str(tmp_path / "recordings")})
    finally:
        tmp_path.chmod(0o700)


@pytest.mark.parametrize(
    "spec",
    [
        "http://127.0.0.1:9000@99999",
        "http://127.0.0.1:9000@127.0.0.1:0",
        "http://127.0.0.1:99999@9001",
        "http://u@x",
    ],
)
def test_a_reverse_listener_on_no_port_is_refused_at_start(spec: str) -> None:
    """Not a proxy that never listens: mitmproxy refuses the port as it sets up its servers,
    all of them, while the API starts and answers as if it were serving."""
    with pytest.raises(SettingsError, match=re.escape(f"--reverse=[{spec!r}]: Value error")):
        load_settings({"reverse": [spec]})
    assert load_settings({"reverse": ["http://127.0.0.1:9000@65535"]}).reverse
