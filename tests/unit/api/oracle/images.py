"""Hand-made PNGs (every row filter), for the oracle's image comparison."""

from __future__ import annotations

import struct
import zlib
from typing import Any


def png(width: int, height: int, pixel: Any, filter_type: int = 0) -> bytes:
    """An 8-bit RGB PNG whose pixel (x, y) is `pixel(x, y)`, every row filtered with
    `filter_type` (0 none, 1 sub, 2 up, 3 average, 4 Paeth), as encoders do."""
    rows = [bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height)]
    stride, out, previous = width * 3, b"", bytes(width * 3)
    for row in rows:
        filtered = bytearray(stride)
        for i in range(stride):
            left = row[i - 3] if i >= 3 else 0
            up, corner = previous[i], previous[i - 3] if i >= 3 else 0
            if filter_type == 1:
                guess = left
            elif filter_type == 2:
                guess = up
            elif filter_type == 3:
                guess = (left + up) >> 1
            elif filter_type == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                guess = left if pa <= pb and pa <= pc else up if pb <= pc else corner
            else:
                guess = 0
            filtered[i] = (row[i] - guess) & 0xFF
        out += bytes([filter_type]) + bytes(filtered)
        previous = row

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(out))
        + chunk(b"IEND", b"")
    )


def gradient(x: int, y: int) -> tuple[int, int, int]:
    return (x * 7) % 256, (y * 11) % 256, (x * y) % 256


LOGO = png(20, 10, gradient)
