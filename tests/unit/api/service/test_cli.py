"""The command line's options that come before or after the command."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from api.service.cli import build_parser, given_settings, main
from api.service.commands import DEFAULT_API_URL, with_api_defaults


def parsed(*argv: str) -> argparse.Namespace:
    return with_api_defaults(build_parser().parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        ("--api-url", "http://api:1", "report"),
        ("report", "--api-url", "http://api:1"),
        ("--api-url", "http://api:1", "episodes", "list"),
        ("episodes", "list", "--api-url", "http://api:1"),
        ("--api-url", "http://api:1", "check", "--browser", "http://app/"),
        ("--api-url", "http://api:1", "calibrate", "--wordpress-env", "env"),
        ("calibrate", "--wordpress-env", "env", "--api-url", "http://api:1"),
        ("--api-url", "http://api:1", "replay", "e1"),
        ("--api-url", "http://api:1", "episodes", "export", "e1"),
        ("--api-url", "http://api:1", "knowledge", "list"),
    ],
)
def test_the_api_options_may_come_before_or_after_the_command(
    argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLSHIFT_API_URL", "http://from-the-environment:2")
    assert parsed(*argv).api_url == "http://api:1"
    tokened = parsed("--api-token", "t0", *argv)
    assert (tokened.api_url, tokened.api_token) == ("http://api:1", "t0")


def test_the_api_options_not_given_come_from_their_variables_or_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SKILLSHIFT_API_URL", raising=False)
    monkeypatch.delenv("SKILLSHIFT_API_TOKEN", raising=False)
    assert (parsed("report").api_url, parsed("report").api_token) == (DEFAULT_API_URL, None)
    monkeypatch.setenv("SKILLSHIFT_API_URL", "http://env:3")
    monkeypatch.setenv("SKILLSHIFT_API_TOKEN", "secret")
    assert (parsed("report").api_url, parsed("report").api_token) == ("http://env:3", "secret")
    # Given after the command, the command's own wins over one given before it.
    assert parsed("--api-url", "http://a:1", "report", "--api-url", "http://b:2").api_url == (
        "http://b:2"
    )


def test_serve_takes_a_token_before_it_and_refuses_an_api_url(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert given_settings(build_parser().parse_args(["serve"])) == {}
    before = build_parser().parse_args(["--api-token", "t1", "serve"])
    assert given_settings(before) == {"api_token": "t1"}
    with pytest.raises(SystemExit) as exited:
        main(["--api-url", "http://api:1", "serve"])
    assert exited.value.code == 2
    assert "serve's own API listens on --api HOST:PORT" in capsys.readouterr().err


@pytest.mark.parametrize("tag", ["nokey", "=value"])
def test_a_tag_that_is_not_key_value_is_a_usage_error(
    tag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["report", "--tag", tag])
    assert exited.value.code == 2
    assert f"argument --tag: {tag!r} is not KEY=VALUE" in capsys.readouterr().err
    assert parsed("report", "--tag", "run=a=b", "--tag", "empty=").tag == [
        ("run", "a=b"),
        ("empty", ""),
    ]


@pytest.mark.parametrize(
    ("count", "why"),
    [("0", "0 is not 1 or more"), ("-2", "-2 is not 1 or more"), ("two", "'two' is not a whole")],
)
@pytest.mark.parametrize(
    "argv", [["check", "page.html", "--seeds"], ["calibrate", "--wordpress-env", "e", "--runs"]]
)
def test_a_count_of_seeds_or_runs_is_one_or_more(
    argv: list[str], count: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*argv, count])
    assert exited.value.code == 2
    assert why in capsys.readouterr().err


def test_an_unknown_site_is_one_line_before_the_page_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.html"
    page.write_text("<p>a page</p>")
    assert main(["check", str(page), "--site", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "skillshift-proxy: check: site: unknown site 'nosuch'; known: "
        "['generic', 'gitlab', 'magento', 'wordpress']\n"
    )


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """`skillshift-proxy episodes list | head -1`: the pipe closed under the command is no
    error of the user's to be told about (and no traceback as Python exits)."""
    import subprocess
    import sys

    command = Path(sys.executable).parent / "skillshift-proxy"
    process = subprocess.Popen(
        [command, "ca", "--confdir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # (`head` has gone before the command wrote: every write fails)
    errors = process.stderr.read()
    assert process.wait() == 141 and errors == b""
