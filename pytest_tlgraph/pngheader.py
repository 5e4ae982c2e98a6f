"""A PNG's size read from its header: the eight-byte signature and the ``IHDR`` chunk.

It sits below every stage that reads it: the size guard of drawing
(``draw/canvas.py``) and the PNG metadata and pixel comparison
(``pixels/``), so drawing never imports the snapshot rooms.
"""

from __future__ import annotations

import struct
from typing import Final

__all__ = ["CHUNK_HEADER", "PNG_SIGNATURE", "read_png_size"]

#: The eight bytes every PNG file starts with.
PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"

#: A chunk's length (4) + type (4) before its data (its CRC, 4, follows the data).
CHUNK_HEADER: Final = struct.Struct(">I4s")
_IHDR_SIZE: Final = struct.Struct(">II")


def read_png_size(png: bytes) -> tuple[int, int] | None:
    """Return ``(width, height)`` from the ``IHDR`` chunk, or ``None`` if not a PNG.

    Only the header is read, so this is cheap even for a huge or damaged image.
    """
    if not png.startswith(PNG_SIGNATURE) or len(png) < 33:
        return None
    length, ctype = CHUNK_HEADER.unpack_from(png, len(PNG_SIGNATURE))
    if ctype != b"IHDR" or length != 13:
        return None
    width, height = _IHDR_SIZE.unpack_from(png, len(PNG_SIGNATURE) + CHUNK_HEADER.size)
    return int(width), int(height)
