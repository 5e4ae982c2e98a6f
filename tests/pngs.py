"""Tampering with stored PNGs the way a stale or edited baseline would look."""

from __future__ import annotations

import io

from PIL import Image

from pytest_tlgraph.pixels.pngmeta import add_text_chunks, read_text_chunks

__all__ = ["repaint"]


def repaint(png: bytes, pixels: int) -> bytes:
    """``png`` with its first ``pixels`` pixels of the top row painted black, keeping its
    text chunks (the provenance), so only a pixel comparison can tell it apart."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    for x in range(pixels):
        image.putpixel((x, 0), (0, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return add_text_chunks(out.getvalue(), read_text_chunks(png))
