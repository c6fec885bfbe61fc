from __future__ import annotations

import codecs

import pytest

from api.analysis.verdicts import markup_problem


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"", "it is empty"),
        (b" \n\t ", "it is empty"),
        (b"hello\n", "it holds no HTML markup"),
        (b'{"a": [1, 2]}', "it holds no HTML markup"),
        (b"%PDF-1.7\n\x00\x01\x02", "it is binary, not an HTML page"),
        (codecs.BOM_UTF16_LE + "plain".encode("utf-16-le"), "it holds no HTML markup"),
    ],
)
def test_a_file_that_is_no_page_says_why(raw: bytes, problem: str) -> None:
    assert markup_problem(raw) == problem


@pytest.mark.parametrize(
    "raw",
    [
        b"<!DOCTYPE html><title>t</title>",
        b"\xef\xbb\xbf<html><body>caf\xc3\xa9</body></html>",
        b"<p>a fragment</p>",
        "<p>caf\xe9</p>".encode("utf-16"),
        "<p>caf\xe9</p>".encode("cp1252"),
    ],
)
def test_a_page_in_any_encoding_may_be_checked(raw: bytes) -> None:
    assert markup_problem(raw) is None
