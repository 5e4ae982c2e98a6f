"""PNG metadata helpers that work on the encoded bytes, never on pixels.

A rendered snapshot records where it came from (renderer, version, a hash of the DOT
it was drawn from) in ``tEXt`` chunks. Editing the chunk list directly keeps the
image data byte for byte as the renderer wrote it: re-encoding through Pillow would
change the compressed stream and make every baseline churn.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Iterator, Mapping

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.pngheader import CHUNK_HEADER, PNG_SIGNATURE, read_png_size

__all__ = [
    "PNG_SIGNATURE",
    "add_text_chunks",
    "image_sha256",
    "read_png_size",
    "read_text_chunks",
]

# length (4) + type (4) before the data, CRC (4) after it.
_HEADER = CHUNK_HEADER
_CRC = struct.Struct(">I")


class _Chunk:
    """One chunk as found in the file: its type, data and the raw bytes it spans."""

    __slots__ = ("data", "end", "start", "type")

    def __init__(self, ctype: bytes, data: bytes, start: int, end: int) -> None:
        self.type = ctype
        self.data = data
        self.start = start
        self.end = end


def _chunks(png: bytes, *, until: bytes | None = None) -> Iterator[_Chunk]:
    """Walk the chunks from the signature to ``IEND``, or to (without) the first
    ``until`` chunk; raise ``ValueError`` on any damage on the way."""
    if not png.startswith(PNG_SIGNATURE):
        raise UsageError("not a PNG file (bad signature)")
    pos = len(PNG_SIGNATURE)
    while pos < len(png):
        if pos + _HEADER.size > len(png):
            raise UsageError(f"truncated chunk header at byte {pos}")
        length, ctype = _HEADER.unpack_from(png, pos)
        if ctype == until:
            return
        data_start = pos + _HEADER.size
        end = data_start + length + _CRC.size
        if end > len(png):
            raise UsageError(f"truncated {ctype!r} chunk at byte {pos}")
        data = png[data_start : data_start + length]
        (crc,) = _CRC.unpack_from(png, data_start + length)
        if crc != zlib.crc32(ctype + data):
            raise UsageError(f"CRC mismatch in {ctype!r} chunk at byte {pos}")
        yield _Chunk(ctype, data, pos, end)
        if ctype == b"IEND":
            return
        pos = end


def _encode_chunk(ctype: bytes, data: bytes) -> bytes:
    return _HEADER.pack(len(data), ctype) + data + _CRC.pack(zlib.crc32(ctype + data))


def _text_payload(key: str, value: str) -> bytes:
    """Encode one ``tEXt`` payload, enforcing the PNG rules for keywords and text."""
    try:
        raw_key = key.encode("latin-1")
        raw_value = value.encode("latin-1")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"tEXt chunk {key!r}: keys and values must be Latin-1; encode the value "
            "(e.g. as hex or JSON with ASCII escapes) before storing it"
        ) from exc
    printable = all(32 <= byte <= 126 or byte >= 161 for byte in raw_key)
    spaced = key != key.strip(" ") or "  " in key
    if not 1 <= len(raw_key) <= 79 or not printable or spaced:
        raise UsageError(
            f"invalid tEXt keyword {key!r}: 1 to 79 printable Latin-1 characters, "
            "no leading, trailing or consecutive spaces"
        )
    if b"\x00" in raw_value:
        raise UsageError(f"tEXt chunk {key!r}: the value must not contain NUL")
    return raw_key + b"\x00" + raw_value


def _text_key(data: bytes) -> bytes:
    return data.split(b"\x00", 1)[0]


def add_text_chunks(png: bytes, items: Mapping[str, str]) -> bytes:
    """Return ``png`` with one ``tEXt`` chunk per item, placed right after ``IHDR``.

    Chunks are written sorted by key, so equal inputs give equal bytes. An existing
    ``tEXt`` chunk with one of the keys is dropped first, so adding the same key
    twice replaces it instead of accumulating. Every other byte, the image data
    included, is kept as it was.

    Raises ``ValueError`` when ``png`` is not an intact PNG or an item cannot be
    stored as ``tEXt`` (keywords: 1-79 printable Latin-1 characters, single inner
    spaces only; values: Latin-1 without NUL).
    """
    payloads = [_text_payload(key, items[key]) for key in sorted(items)]
    replaced = {key.encode("latin-1") for key in items}
    chunks = list(_chunks(png))
    if not chunks or chunks[0].type != b"IHDR":
        raise UsageError("not a PNG file (IHDR is not the first chunk)")
    parts = [PNG_SIGNATURE, png[chunks[0].start : chunks[0].end]]
    parts.extend(_encode_chunk(b"tEXt", payload) for payload in payloads)
    for chunk in chunks[1:]:
        if chunk.type == b"tEXt" and _text_key(chunk.data) in replaced:
            continue
        parts.append(png[chunk.start : chunk.end])
    return b"".join(parts)


def read_text_chunks(png: bytes) -> dict[str, str]:
    """Return the ``tEXt`` items stored before the image data.

    Reading stops at the first ``IDAT``: that is where :func:`add_text_chunks` puts
    them, and it spares walking the image data. A key stored twice keeps its first
    value. Never raises on bad input: bytes that are not a PNG, or whose chunks up to
    that point are truncated or fail their CRC, give ``{}``, because metadata from a
    damaged file cannot be trusted and the caller decides what a missing item means.
    """
    found: dict[str, str] = {}
    try:
        for chunk in _chunks(png, until=b"IDAT"):
            if chunk.type == b"tEXt" and b"\x00" in chunk.data:
                key, value = chunk.data.split(b"\x00", 1)
                found.setdefault(key.decode("latin-1"), value.decode("latin-1"))
    except ValueError:
        return {}
    return found


#: The chunks that decide the decoded pixels: header, palette, transparency, data.
_IMAGE_CHUNKS = frozenset({b"IHDR", b"PLTE", b"tRNS", b"IDAT"})


def image_sha256(png: bytes) -> str:
    """A hash of the image itself: the header, palette, transparency and image-data
    chunks, in order (never the ``tEXt`` metadata, so it can be stored there).

    Walks and CRC-checks every chunk; raises ``ValueError`` on a damaged file. Nothing
    is decoded: it costs one pass over the compressed bytes.
    """
    digest = hashlib.sha256()
    ended = False
    for chunk in _chunks(png):
        if chunk.type in _IMAGE_CHUNKS:
            digest.update(_HEADER.pack(len(chunk.data), chunk.type))
            digest.update(chunk.data)
        ended = chunk.type == b"IEND"
    if not ended:
        raise UsageError("truncated PNG: no IEND chunk")
    return digest.hexdigest()
