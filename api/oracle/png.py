"""A small PNG decoder (8-bit RGB/RGBA, non-interlaced: what Chromium's screenshots are), so
the oracle compares image clips pixel by pixel without an imaging library."""

from __future__ import annotations

import struct
import zlib

MAX_DECODED_PIXELS = 500_000  # larger clips are compared byte for byte (pure-Python decoding)


def decode_png(data: bytes) -> tuple[int, int, int, bytes] | None:
    """(width, height, channels, pixels) of an 8-bit, non-interlaced greyscale/RGB(A) PNG,
    the kind Chromium writes; None for anything else."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    position, header, chunks = 8, b"", []
    while position + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        elif kind == b"IEND":
            break
        position += 12 + length
    if len(header) != 13:
        return None
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or interlace or channels is None or width * height > MAX_DECODED_PIXELS:
        return None
    try:
        raw = zlib.decompress(b"".join(chunks))
    except zlib.error:
        return None
    stride = width * channels
    if len(raw) < height * (stride + 1):
        return None
    pixels = bytearray(height * stride)
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                up = previous[i]
                corner = previous[i - channels] if i >= channels else 0
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                guess = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + guess) & 0xFF
        elif kind != 0:
            return None
        pixels[row * stride : (row + 1) * stride] = line
        previous = line
    return width, height, channels, bytes(pixels)
