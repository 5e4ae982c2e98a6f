"""Where a stored PNG came from: the ``tEXt`` provenance every snapshot PNG records
(renderer with version, the hash of the DOT it was drawn from, the hash of its own
image data), the snapshot render that writes it, and what it lets a run decide (the
skip-render shortcut, a renderer mismatch, an intact file)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.pixels.pngmeta import (
    add_text_chunks,
    image_sha256,
    read_text_chunks,
)
from pytest_tlgraph.snapshots.versions import (
    VERSIONS_KEY,
    decode_versions,
    encode_versions,
    running_versions,
)

__all__ = [
    "DOT_HEADER",
    "DPI",
    "IMAGE_KEY",
    "RENDERER_KEY",
    "SHA_KEY",
    "Provenance",
    "dot_sha256",
    "intact",
    "render_snapshot_png",
    "renderer_mismatch",
    "reusable",
]

#: Every canonical drawing starts so (``dot.emit``).
DOT_HEADER: Final = "digraph tlgraph {"
#: ``tEXt`` keys recorded in every stored PNG.
RENDERER_KEY: Final = "tlgraph-renderer"
SHA_KEY: Final = "tlgraph-dot-sha256"
#: A hash of the PNG's own image chunks (``pngmeta.image_sha256``): a replaced or edited
#: image no longer matches it, so the skip-render shortcut cannot trust it.
IMAGE_KEY: Final = "tlgraph-image-sha256"
#: Snapshots are always rendered at this explicit dpi (graphviz-pure's implicit default
#: anti-aliases differently).
DPI: Final = 96


def dot_sha256(dot: str) -> str:
    """The content hash a PNG records of the DOT it was drawn from."""
    return hashlib.sha256(dot.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a stored PNG came from: renderer with version, the DOT's hash, the hash
    of its own image data recorded when it was rendered, and the versions of
    pytest-tlgraph, torch and the model library that drew it (``versions``, empty for
    a PNG written before 0.4)."""

    renderer: str | None
    dot_sha256: str | None
    image_sha256: str | None = None
    versions: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, png: bytes) -> Provenance:
        """Read it from the PNG's ``tEXt`` chunks (``None`` fields when absent)."""
        chunks = read_text_chunks(png)
        versions = tuple(decode_versions(chunks.get(VERSIONS_KEY)).items())
        return cls(chunks.get(RENDERER_KEY), chunks.get(SHA_KEY), chunks.get(IMAGE_KEY), versions)

    def source(self) -> tuple[str | None, str | None]:
        """What the PNG was drawn from: renderer with version, and the DOT's hash."""
        return self.renderer, self.dot_sha256

    @property
    def family(self) -> str | None:
        """The renderer without its version: ``graphviz-pure`` or ``dot``."""
        return self.renderer.rsplit(" ", 1)[0] if self.renderer else None


def render_snapshot_png(dot: str, renderer: str) -> bytes:
    """Render ``dot`` at the fixed snapshot dpi and record its provenance in the PNG
    (the renderer, the DOT's hash, the image's hash, the versions that drew it)."""
    from pytest_tlgraph.render import render_png, renderer_version

    png = render_png(dot, renderer=renderer, dpi=DPI)
    items = {RENDERER_KEY: renderer_version(renderer), SHA_KEY: dot_sha256(dot)}
    items[VERSIONS_KEY] = encode_versions(running_versions())
    items[IMAGE_KEY] = image_sha256(png)
    return add_text_chunks(png, items)


def intact(png: bytes, provenance: Provenance | None = None) -> bool:
    """True when ``png`` is undamaged and its image data is the data it was rendered
    with (its recorded image hash matches): not replaced, edited or truncated.
    ``provenance``: the PNG's own, when already read."""
    recorded = (provenance or Provenance.of(png)).image_sha256
    if recorded is None:
        return False
    try:
        return image_sha256(png) == recorded  # walks and CRC-checks every chunk
    except ValueError:
        return False


def reusable(stored: bytes, dot: str, renderer: str, provenance: Provenance | None = None) -> bool:
    """True when ``stored`` provably came from ``dot`` and this renderer and version, and
    is intact: rendering again would give the same bytes (the skip-render shortcut).
    ``provenance``: the stored PNG's own, when already read."""
    from pytest_tlgraph.render import renderer_version

    known = provenance or Provenance.of(stored)
    wanted = (renderer_version(renderer), dot_sha256(dot))
    return known.source() == wanted and intact(stored, known)


def renderer_mismatch(expected: Provenance, actual: Provenance) -> str | None:
    """The one line that explains a baseline drawn by another renderer, or ``None``.

    Only a different renderer counts: another version of the same renderer is still
    compared pixel by pixel (the verdict mentions the versions).
    """
    if expected.family is None or expected.family == actual.family:
        return None
    hint = "--tlgraph-renderer=system" if expected.family == "dot" else "--tlgraph-renderer=pure"
    return (
        f"renderer mismatch: the baseline PNG was drawn by {expected.renderer}, this run "
        f"draws with {actual.renderer}; pixels are not compared across renderers. "
        f"Run with {hint} to compare, or --snapshot-update to redraw the baseline."
    )
