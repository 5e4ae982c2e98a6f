"""A draw request: the draw options parsed once, with their value sources resolved.

The ``tlgraph_snapshot`` fixture, ``Trace.draw`` and ``tlgraph draw`` all turn the
keywords a user wrote into one :class:`DrawRequest` with :meth:`DrawRequest.parse`,
before any capture or drawing; everything downstream reads it. Whether a capture must
measure magnitudes and whether a snapshot must be masked are read from the resolved
sources (their record fields, :mod:`pytest_tlgraph.fields`), never from the raw
keywords, so ``color_by="time"`` and ``color_by="func_duration"`` behave alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_tlgraph.draw.encoding.sources import ValueSource, resolve_source
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.options import SIZE_SCALES, DrawOptions, is_auto

__all__ = ["DrawRequest"]


@dataclass(frozen=True, slots=True)
class DrawRequest:
    """The checked options and what they resolve to.

    ``color``, ``size`` and ``stack`` are the channels' resolved sources (``None`` when
    the channel is off; ``stack`` also for ``stack_by=True``/``"auto"``, which reads the
    pass annotation, not a source); ``scale`` is the size scale a ``size_by`` drawing
    uses (``"sqrt"`` unless given).
    """

    options: DrawOptions
    color: ValueSource | None
    size: ValueSource | None
    stack: ValueSource | None
    scale: str

    @classmethod
    def parse(cls, keywords: Mapping[str, Any]) -> DrawRequest:
        """Check every keyword (names, types, values) and resolve every source.

        Raises ``TypeError`` or ``ValueError`` for a bad name or value, and
        :class:`~pytest_tlgraph.errors.EncodingRefusal` for a bad source or scale, each
        naming the option, the value and the remedy. What only a trace can tell (a
        measurement the trace lacks, the rolled view's refusal of ``stack_by``) is
        refused when drawing."""
        options = DrawOptions.from_kwargs(**keywords) if keywords else _DEFAULT_OPTIONS
        return cls._resolve(options)

    @classmethod
    def of(cls, options: DrawOptions) -> DrawRequest:
        """The request of options already checked."""
        return cls._resolve(options)

    @classmethod
    def _resolve(cls, options: DrawOptions) -> DrawRequest:
        if options.size_scale is not None and options.size_by is None:
            raise EncodingRefusal(
                "size_scale_requires_size_by",
                cause=f"size_scale={options.size_scale!r} was given without size_by.",
                remedy="add size_by=<source>, or drop size_scale.",
            )
        scale = options.size_scale or "sqrt"
        if scale not in SIZE_SCALES:
            raise EncodingRefusal(
                "encoding_scale_invalid",
                cause=f"size_scale={scale!r} is not a known scale.",
                remedy=f"use one of {', '.join(map(repr, SIZE_SCALES))}.",
            )
        color = _source(options.color_by, "color_by")
        size = _source(options.size_by, "size_by")
        stack = None if is_auto(options.stack_by) else _source(options.stack_by, "stack_by")
        return cls(options, color, size, stack, scale)

    @property
    def volatile(self) -> bool:
        """Whether a channel's fills or sizes read run-to-run noise (the snapshot masks
        them and the measured picture goes to the results)."""
        return any(source is not None and source.volatile for source in (self.color, self.size))

    @property
    def reads_magnitudes(self) -> bool:
        """Whether some channel reads output magnitudes, so the capture must measure
        them (``capture(magnitudes=True)``); a callable source is opaque and asks for
        nothing."""
        return any(
            source is not None and source.field == "magnitude"
            for source in (self.color, self.size, self.stack)
        )


def _source(value: Any, channel: str) -> ValueSource | None:
    return None if value is None else resolve_source(value, channel=channel)


_DEFAULT_OPTIONS = DrawOptions()
