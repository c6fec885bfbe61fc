"""Strict body decoding: a truncated or corrupt body is an error, not a shorter page.

mitmproxy's own decoders are lenient (a cut gzip stream decodes to the part that arrived), which
would let a truncated page be shifted and served as if whole.
"""

from __future__ import annotations

import zlib

import brotli
import zstandard


class UndecodableBody(ValueError):
    pass


def _zlib(data: bytes, wbits: int) -> bytes:
    decoder = zlib.decompressobj(wbits)
    out = decoder.decompress(data) + decoder.flush()
    if not decoder.eof:
        raise UndecodableBody("the compressed stream ends early (truncated body)")
    return out


def decode_body(data: bytes, encoding: str) -> bytes:
    """The decoded body; UndecodableBody if it is truncated, corrupt or in an unknown coding."""
    try:
        if encoding in ("identity", ""):
            return data
        if encoding == "gzip":
            return _zlib(data, 16 + zlib.MAX_WBITS)
        if encoding == "deflate":
            try:
                return _zlib(data, zlib.MAX_WBITS)
            except zlib.error:  # servers disagree on whether "deflate" has a zlib header
                return _zlib(data, -zlib.MAX_WBITS)
        if encoding == "br":
            return bytes(brotli.decompress(data))
        if encoding == "zstd":
            decoder = zstandard.ZstdDecompressor().decompressobj()
            out = decoder.decompress(data)
            if not decoder.eof:
                raise UndecodableBody("the compressed stream ends early (truncated body)")
            return bytes(out)
    except (zlib.error, brotli.error, zstandard.ZstdError) as error:
        raise UndecodableBody(f"corrupt {encoding} body: {error}") from error
    raise UndecodableBody(f"unsupported content-encoding {encoding!r}")
