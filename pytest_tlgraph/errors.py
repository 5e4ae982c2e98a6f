"""The exception hierarchy of pytest-tlgraph, drawn once.

::

    TlgraphError
    ├── TraceError        capture failed: the model raised (original chained), the
    │                     capture refused the model, or the capture itself broke
    ├── RenderError       a renderer is missing or failed
    ├── EncodingRefusal   (also a ValueError) a draw option cannot be honoured
    ├── UsageError        (also a ValueError) a value a user passed is refused: an
    │                     option, a name, a file that is not what it should be
    │   └── DotParseError a DOT text is not a canonical tlgraph drawing
    ├── SchemaError       (also a ValueError) a stored drawing's structured attribute
    │                     this schema cannot read (``schema``)
    ├── CommandError      the ``tlgraph`` command cannot run as asked (exit status 2)
    ├── Refused           one call cannot be accepted (``cli.accept``)
    ├── SnapshotWriteError (also an OSError) a snapshot or results file could not be
    │                     written
    └── LinkRefused, NotRegular (also OSErrors), FileInTheWay (also a
                          NotADirectoryError): a link, a device or a file where a
                          write goes (``disk.nofollow``)

Every error names the thing, the cause and the remedy.
"""

from __future__ import annotations

from typing import Final, final

__all__ = [
    "REFUSAL_CODES",
    "CommandError",
    "EncodingRefusal",
    "RenderError",
    "TlgraphError",
    "TraceError",
    "UsageError",
]

#: The closed set of refusal codes (docs/decisions.md, "One house (0.4)").
REFUSAL_CODES: Final = frozenset(
    {
        "encoding_source_invalid",
        "encoding_value_invalid",
        "encoding_callable_error",
        "encoding_scale_invalid",
        "size_scale_requires_size_by",
        "size_by_rolled_varying",
        "stack_by_auto_underivable",
        "stack_by_requires_unrolled",
        "device_time_unavailable",
        "magnitude_unavailable",
        "node_label_field_invalid",
    }
)


class TlgraphError(Exception):
    """Base class of every error raised by pytest-tlgraph."""


@final
class TraceError(TlgraphError):
    """Capture failed: the model raised while it was being captured, the capture
    refused it (a compiled model, a model another capture is running), or the capture
    itself broke (the message then says the model is not at fault).

    ``where`` names the op or module that was running; the original exception, if any,
    is chained as ``__cause__``.
    """

    def __init__(self, message: str, *, where: str) -> None:
        super().__init__(message)
        self.where = where


@final
class RenderError(TlgraphError):
    """A renderer is missing or failed; ``renderer`` names it."""

    def __init__(self, message: str, *, renderer: str) -> None:
        super().__init__(message)
        self.renderer = renderer


@final
class EncodingRefusal(TlgraphError, ValueError):
    """A draw option cannot be honoured: a typed refusal with cause and remedy.

    Refusals happen before anything is rendered, so nothing is half drawn.
    """

    def __init__(self, code: str, *, cause: str, remedy: str) -> None:
        if code not in REFUSAL_CODES:
            raise ValueError(f"unknown refusal code {code!r}")
        super().__init__(f"[{code}] {cause} Remedy: {remedy}")
        self.code = code
        self.cause = cause
        self.remedy = remedy


class UsageError(TlgraphError, ValueError):
    """A value a user passed (an argument, an option, a name, a file) is refused; the
    message names it, the cause and the remedy. Also a ``ValueError``, so code that
    catches ``ValueError`` keeps working."""


@final
class CommandError(TlgraphError):
    """The ``tlgraph`` command cannot run as asked: one line naming the cause and the
    remedy, exit status 2."""
