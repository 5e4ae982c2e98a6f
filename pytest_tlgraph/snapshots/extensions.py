"""The syrupy extensions: the canonical DOT as text, the rendered PNG as pixels.

Storage, update and unused-snapshot logic are syrupy's own (``SingleFileSnapshotExtension``):
these classes only say which files are theirs, how to read them without crashing on a
damaged file, and how two PNGs match. Each claims only files it provably wrote (DOT
text that starts with ``digraph tlgraph``, PNGs carrying our ``tEXt`` provenance), so
``--snapshot-update`` never deletes a foreign file that happens to share a suffix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from syrupy.extensions.single_file import WriteMode

from pytest_tlgraph.controls import visible
from pytest_tlgraph.snapshots.pixels.pngmeta import (
    PNG_SIGNATURE,
    add_text_chunks,
    image_sha256,
    read_text_chunks,
)
from pytest_tlgraph.snapshots.review.dotdiff import unified_dot_diff
from pytest_tlgraph.snapshots.storage import SafeFileExtension
from pytest_tlgraph.snapshots.versions import (
    VERSIONS_KEY,
    decode_versions,
    encode_versions,
    running_versions,
)

if TYPE_CHECKING:
    from syrupy.types import SerializableData, SerializedData

    from pytest_tlgraph.snapshots.pixels.pixeldiff import PngComparison

__all__ = [
    "DOT_HEADER",
    "DPI",
    "IMAGE_KEY",
    "RENDERER_KEY",
    "SHA_KEY",
    "PngMatch",
    "Provenance",
    "TlgraphDotExtension",
    "TlgraphPngExtension",
    "dot_sha256",
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


def intact(png: bytes) -> bool:
    """True when ``png`` is undamaged and its image data is the data it was rendered
    with (its recorded image hash matches): not replaced, edited or truncated."""
    recorded = Provenance.of(png).image_sha256
    if recorded is None:
        return False
    try:
        return image_sha256(png) == recorded  # walks and CRC-checks every chunk
    except ValueError:
        return False


def reusable(stored: bytes, dot: str, renderer: str) -> bool:
    """True when ``stored`` provably came from ``dot`` and this renderer and version, and
    is intact: rendering again would give the same bytes (the skip-render shortcut)."""
    from pytest_tlgraph.render import renderer_version

    wanted = (renderer_version(renderer), dot_sha256(dot))
    return Provenance.of(stored).source() == wanted and intact(stored)


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


class TlgraphDotExtension(SafeFileExtension):
    """The canonical DOT, stored as ``<test>[<name>].gv`` and compared byte for byte."""

    file_extension = "gv"
    _write_mode = WriteMode.TEXT

    def is_snapshot_location(self, *, location: str) -> bool:
        """Claim only ``.gv`` files that are tlgraph drawings."""
        if not location.endswith(".gv"):
            return False
        try:
            with open(location, "rb") as f:
                return f.read(len(DOT_HEADER)) == DOT_HEADER.encode()
        except OSError:
            return False

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> SerializableData | None:
        """The stored text; undecodable bytes are replaced, so a damaged file fails
        the comparison (and can be rewritten) instead of crashing the read."""
        try:
            with open(snapshot_location, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return None
        # A checkout with CRLF line ends is still the same drawing.
        return raw.decode("utf-8", errors="replace").replace("\r\n", "\n")

    def diff_lines(
        self, serialized_data: SerializedData, snapshot_data: SerializedData
    ) -> Iterator[str]:
        """A unified diff, ``- snapshot`` / ``+ received`` (control characters escaped)."""
        for line in unified_dot_diff(str(snapshot_data), str(serialized_data)):
            yield visible(line)


@dataclass(frozen=True, slots=True)
class PngMatch:
    """The outcome of one PNG comparison, kept for the failure report."""

    comparison: PngComparison | None
    mismatch_line: str | None
    error: str | None
    stale_provenance: bool = False


class TlgraphPngExtension(SafeFileExtension):
    """The rendered PNG, stored as ``<test>[<name>].png`` and compared by pixels.

    ``threshold``, ``max_diff_pixels`` and ``update`` are set on the instance by the
    fixture before each comparison; ``last`` holds the outcome of the latest one.
    """

    file_extension = "png"
    threshold: float = 0.1
    max_diff_pixels: int = 0
    update: bool = False
    last: PngMatch | None = None

    def is_snapshot_location(self, *, location: str) -> bool:
        """Claim only ``.png`` files that carry our provenance metadata."""
        if not location.endswith(".png"):
            return False
        try:
            with open(location, "rb") as f:
                data = f.read()
        except OSError:
            return False
        return data.startswith(PNG_SIGNATURE) and Provenance.of(data).renderer is not None

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        """Pixels within budget and the same renderer. Under ``--snapshot-update`` a
        baseline whose recorded DOT hash or renderer is stale counts as changed too, so
        it is rewritten and the skip-render shortcut keeps working."""
        from pytest_tlgraph.snapshots.pixels.pixeldiff import compare_png

        expected, actual = bytes(snapshot_data), bytes(serialized_data)
        if expected == actual:
            self.last = PngMatch(None, None, None)
            return True
        old, new = Provenance.of(expected), Provenance.of(actual)
        line = renderer_mismatch(old, new)
        if line is not None:
            self.last = PngMatch(None, line, None)
            return False
        try:
            comparison = compare_png(
                expected, actual, threshold=self.threshold, max_diff_pixels=self.max_diff_pixels
            )
        except ValueError as error:
            self.last = PngMatch(None, None, str(error))
            return False
        stale = old.source() != new.source() or not intact(expected)
        self.last = PngMatch(comparison, None, None, stale_provenance=stale)
        return comparison.passed and not (self.update and stale)

    def diff_lines(
        self, serialized_data: SerializedData, snapshot_data: SerializedData
    ) -> Iterator[str]:
        """One verdict line instead of a byte dump."""
        if self.last is None or self.last.comparison is None:
            line = self.last and (self.last.mismatch_line or self.last.error)
            yield visible(line or "PNG differs")
            return
        found = self.last.comparison
        yield f"PNG: {found.mismatched} mismatched pixels (budget {found.max_diff_pixels})"
