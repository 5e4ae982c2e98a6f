"""The cyclic garbage collector held off while a capture or a drawing builds its records.

Both stages allocate thousands of small containers that all survive to the end (op
records, node rows, DOT statements): every young-generation collection on the way
walks and promotes them, and reclaims nothing. Reference counting still frees
everything acyclic at once; cycles made meanwhile wait for the next collection after
the stage ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block, if it is enabled, and enable it
    again afterwards; a collector the caller disabled stays disabled."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
