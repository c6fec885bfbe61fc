import gzip
import zlib

import brotli
import pytest
import zstandard

from proxy.codec import UndecodableBody, decode_body

BODY = b"<html>" + b"x" * 5000 + b"</html>"
ENCODERS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstandard.ZstdCompressor().compress,
}


@pytest.mark.parametrize("encoding", sorted(ENCODERS))
def test_round_trip_and_truncation(encoding: str) -> None:
    encoded = ENCODERS[encoding](BODY)
    assert decode_body(encoded, encoding) == BODY
    with pytest.raises(UndecodableBody):
        decode_body(encoded[: len(encoded) // 2], encoding)


def test_raw_deflate_unknown_and_corrupt() -> None:
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert decode_body(raw.compress(BODY) + raw.flush(), "deflate") == BODY
    with pytest.raises(UndecodableBody, match="unsupported"):
        decode_body(BODY, "compress")
    with pytest.raises(UndecodableBody):
        decode_body(b"not gzip at all", "gzip")
