"""One snapshot value for a call: its canonical DOT and its PNG, the pair stored as
``<name>.gv`` + ``<name>.png`` and read, compared, written and deleted as one.

:class:`StoredPair` is what the snapshot folder holds (either file may be missing),
:class:`ReceivedPair` what the call drew, and :meth:`ReceivedPair.against` the one
comparison of the two (:class:`PairMatch`), made once and read by syrupy's verdict,
the write and the failure report alike.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_tlgraph.pixels.match import PngMatch
from pytest_tlgraph.snapshots.provenance import (
    Provenance,
    dot_sha256,
    intact,
    renderer_mismatch,
)
from pytest_tlgraph.snapshots.settings import setting

if TYPE_CHECKING:
    from pytest_tlgraph.pixels.pixeldiff import PngComparison

__all__ = ["KEEP", "Keep", "PairMatch", "PngPart", "ReceivedPair", "StoredPair"]


class PngPart(enum.Enum):
    """What a call does with the PNG half of its pair."""

    #: The received PNG is compared by pixels and written with the DOT.
    COMPARED = "compared"
    #: No PNG drawn this call (over the size guard): the stored PNG stays as it is.
    KEPT = "kept"
    #: The run draws no PNG (``--tlgraph-no-png``): the stored PNG stays, unless an
    #: update leaves it drawn from another DOT than the one stored (then it is removed).
    KEPT_UNLESS_STALE = "kept unless stale"
    #: ``png=False`` on the call: the pair has no PNG; an update removes a stored one.
    NONE = "none"


@dataclass(frozen=True, slots=True)
class StoredPair:
    """The stored pair; ``dot`` (CRLF line ends read as LF, undecodable bytes
    replaced) or ``png`` is ``None`` where that file is missing."""

    dot: str | None
    png: bytes | None
    #: The stored PNG's provenance, parsed once (``None`` without a PNG).
    provenance: Provenance | None = None
    #: The SHA-256 of each file's bytes as read (``None``: missing), for ``tlgraph
    #: accept``'s check that neither changed since the run.
    sha256: tuple[str | None, str | None] = (None, None)

    @classmethod
    def of(cls, dot: bytes | None, png: bytes | None) -> StoredPair:
        """The pair from the two files' bytes."""
        text = None if dot is None else dot.decode("utf-8", errors="replace")
        return cls(
            None if text is None else text.replace("\r\n", "\n"),
            png,
            None if png is None else Provenance.of(png),
            (_sha256(dot), _sha256(png)),
        )

    def png_stale_against(self, dot: str | None) -> bool:
        """True when the stored PNG records the hash of a DOT other than ``dot``: it was
        drawn from another drawing (an update that drew no PNG, a kill between writes)."""
        recorded = None if self.provenance is None else self.provenance.dot_sha256
        return dot is not None and recorded is not None and recorded != dot_sha256(dot)


@dataclass(frozen=True, slots=True)
class PairMatch:
    """The one comparison of a received pair with the stored one."""

    #: The DOT is byte for byte the stored one.
    dot_passed: bool
    #: The PNG half passed (compared within budget, or not compared this call).
    png_passed: bool
    #: The pixel comparison's outcome; ``None`` when no stored PNG was compared.
    png: PngMatch | None
    #: An update must rewrite the pair although the files match (stale provenance, a
    #: PNG the pair no longer has).
    rewrite: bool = False
    #: Writing the pair removes the stored PNG.
    drop_png: bool = False

    @property
    def passed(self) -> bool:
        """What syrupy sees: the pair matches and nothing must be rewritten."""
        return self.dot_passed and self.png_passed and not self.rewrite


@dataclass(eq=False, slots=True)
class ReceivedPair:
    """What a call drew, with how its PNG half is compared (the settings of the call,
    carried by the value instead of set on a shared extension)."""

    dot: str
    png: bytes | None
    part: PngPart
    threshold: float = setting("threshold").default
    max_diff_pixels: int = setting("max_diff_pixels").default
    #: Under ``--snapshot-update``: stale provenance counts as a change.
    update: bool = False
    _matches: dict[int, tuple[StoredPair, PairMatch]] = field(default_factory=dict, repr=False)

    def against(self, stored: StoredPair) -> PairMatch:
        """The comparison with ``stored``, made once however often it is asked."""
        known = self._matches.get(id(stored))
        if known is not None and known[0] is stored:
            return known[1]
        found = _match(self, stored)
        self._matches[id(stored)] = (stored, found)
        return found

    @property
    def compares_png(self) -> bool:
        """Whether the PNG half is compared and written with the DOT."""
        return self.part is PngPart.COMPARED

    @property
    def drop_png(self) -> bool:
        """Whether writing this pair removes the stored PNG (its comparison said so)."""
        return any(found.drop_png for _, found in self._matches.values())


@dataclass(frozen=True, slots=True)
class Keep:
    """The value a call asserts to count a stored pair as used, unchanged: it matches
    any stored pair and is never written."""


#: The one :class:`Keep` value.
KEEP = Keep()


def _sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _match(received: ReceivedPair, stored: StoredPair) -> PairMatch:
    dot_passed = stored.dot is not None and stored.dot == received.dot
    part = received.part
    if part is PngPart.KEPT:
        return PairMatch(dot_passed, True, None)
    if part is not PngPart.COMPARED:
        if part is PngPart.NONE:
            drop = stored.png is not None
        else:
            drop = stored.png is not None and stored.png_stale_against(received.dot)
        return PairMatch(dot_passed, True, None, rewrite=received.update and drop, drop_png=drop)
    if stored.png is None or received.png is None:
        return PairMatch(dot_passed, False, None)
    match, stale = _png_match(received, stored.png, stored.provenance)
    png_passed = match.comparison is not None and match.comparison.passed
    if match == PngMatch(None, None, None):
        png_passed = True
    return PairMatch(dot_passed, png_passed, match, rewrite=received.update and stale)


def _png_match(
    received: ReceivedPair, expected: bytes, old: Provenance | None
) -> tuple[PngMatch, bool]:
    """Pixels within budget and the same renderer; and whether the stored PNG's
    provenance is stale (an update rewrites it then, so the skip-render shortcut keeps
    working)."""
    from pytest_tlgraph.pixels.pixeldiff import compare_png

    actual = received.png
    assert actual is not None
    if expected == actual:
        return PngMatch(None, None, None), False
    old = old or Provenance.of(expected)
    new = Provenance.of(actual)
    line = renderer_mismatch(old, new)
    if line is not None:
        return PngMatch(None, line, None), False
    try:
        comparison: PngComparison = compare_png(
            expected,
            actual,
            threshold=received.threshold,
            max_diff_pixels=received.max_diff_pixels,
        )
    except ValueError as error:
        return PngMatch(None, None, str(error)), False
    stale = old.source() != new.source() or not intact(expected, old)
    return PngMatch(comparison, None, None, stale_provenance=stale), stale
