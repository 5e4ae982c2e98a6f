"""The plugin's own frames left out of a failing test's traceback
(docs/decisions.md, "Failures a reviewer can act on (0.2)").

A typo in an option (``colour_by=``, ``color_by="flop"``,
``@pytest.mark.tlgraph(colr_by=...)``) or a model that fails in the capture is the
user's to fix: the failure shows the user's frame and the message, not the checks and
the capture machinery the error passed through. Frames of this package are removed
from the exception's traceback and from every exception chained to it (the model's
own error under a ``TraceError``); ``--full-trace`` shows them all.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pytest

__all__ = ["hide_plugin_frames", "name_the_test"]

_PACKAGE: Final = Path(__file__).resolve().parents[1]


def _ours(filename: str) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(_PACKAGE)
    except (OSError, ValueError):  # "<string>" and friends: not a file of ours
        return False


def _internal(filename: str) -> bool:
    """A frame of this package, of pytest or of pluggy: never the user's."""
    import pluggy
    import pytest

    if _ours(filename):
        return True
    roots = (Path(pluggy.__file__).parent, Path(pytest.__file__).resolve().parents[1] / "_pytest")
    path = Path(filename)
    return any(path.is_relative_to(root) for root in roots)


def _pruned(tb: TracebackType | None, drop: Callable[[str], bool]) -> TracebackType | None:
    """``tb`` without the frames ``drop`` names, relinked in place."""
    kept: list[TracebackType] = []
    while tb is not None:
        if not drop(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    for first, second in itertools.pairwise(kept):
        first.tb_next = second
    if kept:
        kept[-1].tb_next = None
    return kept[0] if kept else None


def hide_plugin_frames(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """Remove this package's frames from ``excinfo`` and its chained exceptions.

    When nothing of the user's is left (an error at fixture set-up: the marker's
    options), the traceback is empty and pytest shows the message alone.
    """
    frames = excinfo.traceback
    if any(_ours(str(entry.path)) for entry in frames):
        # Relinked, not only filtered: pytest re-reads the raw links when it cuts the
        # traceback at the test function.
        head = _pruned(excinfo.tb, _ours)
        kept = type(frames)(head) if head is not None else type(frames)([])
        user = [entry for entry in kept if not _internal(str(entry.path))]
        excinfo.traceback = kept if user else type(frames)([])
    seen = {id(excinfo.value)}
    chained = excinfo.value.__cause__ or (
        None if excinfo.value.__suppress_context__ else excinfo.value.__context__
    )
    while chained is not None and id(chained) not in seen:
        seen.add(id(chained))
        chained.__traceback__ = _pruned(chained.__traceback__, _ours)
        chained = chained.__cause__ or (
            None if chained.__suppress_context__ else chained.__context__
        )


def name_the_test(
    report: pytest.TestReport, item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]
) -> None:
    """A failure whose every frame was the plugin's (a bad marker option, raised at
    set-up) still gets its one-line message in pytest's short summary, placed at the
    test's own definition."""
    from _pytest._code.code import ExceptionChainRepr, ReprFileLocation

    longrepr = report.longrepr
    if isinstance(longrepr, ExceptionChainRepr) and longrepr.reprcrash is None:
        path, line, _ = item.location
        where = str(item.config.rootpath / path)
        crash = ReprFileLocation(where, (line or 0) + 1, excinfo.exconly(tryshort=True))
        longrepr.reprcrash = crash
        if longrepr.chain:  # what pytest-xdist sends to the controller
            *rest, (last, _, descr) = longrepr.chain
            longrepr.chain = [*rest, (last, crash, descr)]
