"""The cyclic garbage collector held off while a capture or a drawing builds its records.

Both stages allocate thousands of small containers that all survive to the end (op
records, node rows, DOT statements): every young-generation collection on the way
walks and promotes them, and reclaims nothing. Reference counting still frees
everything acyclic at once; cycles made meanwhile wait for the next collection after
the stage ends.
"""

from __future__ import annotations

import gc
from types import TracebackType
from typing import final

__all__ = ["collector_paused"]


@final
class collector_paused:  # named as the function it stands for: ``with collector_paused():``
    """Disable the cyclic collector for the block, if it is enabled, and enable it
    again afterwards; a collector the caller disabled stays disabled.

    A plain class, not a generator context manager: it is entered once per capture and
    per draw, and costs a fraction of one."""

    __slots__ = ("_resume",)

    def __enter__(self) -> None:
        self._resume = gc.isenabled()
        if self._resume:
            gc.disable()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._resume:
            gc.enable()
