"""Exact attribution of device kernels to the captured op that launched them
(docs/decisions.md, "One house (0.4)").

During ``capture(..., profile=True)`` each op's real call runs inside a
``record_function("tlgraph::<label>")`` range. A device kernel carries the correlation
id of the host runtime call (``cudaLaunchKernel`` and kin) that launched it; that call
ran on one host thread, inside a stack of ranges. The kernel belongs to the innermost
of our ranges enclosing its launch on the launch's thread. When the device ran the
kernel is never consulted: device streams are asynchronous, so time overlap on the
device says nothing about which op launched what.

The join itself is pure (:func:`join_device_time` over :class:`RecordedEvent`), so it
is tested on recorded event lists on machines without a GPU.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import torch.autograd.profiler
import torch.profiler

__all__ = [
    "RANGE_PREFIX",
    "DeviceTimeJoin",
    "EventKind",
    "JoinStatus",
    "RecordedEvent",
    "events_from_profiler",
    "join_device_time",
]

#: Prefix of the ``record_function`` range wrapped around each captured op's real call.
RANGE_PREFIX = "tlgraph::"

EventKind = Literal["cpu_op", "user_range", "runtime", "kernel"]
JoinStatus = Literal["joined", "no_kernels", "partial"]

# Kineto activity type names (libkineto ActivityType). Memcpy and memset are device
# work launched by an op just like kernels, so they count toward its device time.
# "gpu_user_annotation" (the device-side mirror of a range) is deliberately absent:
# counting it would add each range's own span to its device time.
_KINDS: Mapping[str, EventKind] = MappingProxyType(
    {
        "cpu_op": "cpu_op",
        "user_annotation": "user_range",
        "kernel": "kernel",
        "gpu_memcpy": "kernel",
        "gpu_memset": "kernel",
        "cuda_runtime": "runtime",
        "cuda_driver": "runtime",
        "xpu_runtime": "runtime",
        "mtia_runtime": "runtime",
        "privateuse1_runtime": "runtime",
        "privateuse1_driver": "runtime",
    }
)


@dataclass(frozen=True)
class RecordedEvent:
    """The plain-data record of one profiler event, as much as the join needs.

    ``kind`` is ``"kernel"`` for any device activity (kernel, memcpy, memset).
    ``thread`` is the profiler's host thread id. Torch gives a ``runtime`` or
    ``kernel`` event the thread of the host op it is linked to; with no such link the
    thread is unknown and recorded as ``None``. ``correlation_id`` links a ``runtime``
    launch to the ``kernel`` events it launched; it is ``None`` for host ops and
    ranges, whose ids live in a different numbering.
    """

    name: str
    kind: EventKind
    start_ns: int
    end_ns: int
    thread: int | None
    correlation_id: int | None = None

    @property
    def duration_ns(self) -> int:
        """Length of the event; for a ``kernel``, the device time it took."""
        return self.end_ns - self.start_ns


@dataclass(frozen=True)
class DeviceTimeJoin:
    """Outcome of :func:`join_device_time`.

    ``status`` is ``"joined"`` when at least one kernel exists, every kernel was
    attributed to exactly one op and every op's range was found; ``"no_kernels"`` when
    there was no device kernel at all (e.g. a CPU-only run); ``"partial"`` otherwise.
    Only a joined result may be shown. ``per_op`` maps every requested label, in order,
    to its summed device nanoseconds, or to ``None`` (n/a) when no kernel was
    attributed to it. ``kernels`` counts device kernels, ``unattributed`` those that
    no op could claim, ``missing`` the labels with no range in the events. ``reason``
    is a sentence explaining a status other than ``"joined"``; empty when joined.
    """

    status: JoinStatus
    per_op: Mapping[str, int | None]
    kernels: int
    unattributed: int
    missing: tuple[str, ...] = ()
    reason: str = ""


def events_from_profiler(
    prof: torch.profiler.profile | torch.autograd.profiler.profile,
) -> list[RecordedEvent]:
    """Read the events the join needs from a finished profiler session.

    Uses the Kineto results directly (integer nanoseconds and the raw correlation
    ids). On a CPU-only run there are simply no ``runtime`` or ``kernel`` events.
    """
    inner = prof.profiler if isinstance(prof, torch.profiler.profile) else prof
    results = inner.kineto_results if inner is not None else None
    if results is None:
        raise ValueError("the profiler session has not finished: no results to read")
    out: list[RecordedEvent] = []
    for event in results.events():
        kind = _KINDS.get(event.activity_type())
        if kind is None:
            continue
        host = kind in ("cpu_op", "user_range")
        # Without a linked host op torch stamps a device-side event with whichever
        # thread stopped the profiler: a guess, so the thread is recorded as unknown.
        placed = host or event.linked_correlation_id() > 0
        corr = event.correlation_id()
        out.append(
            RecordedEvent(
                name=event.name(),
                kind=kind,
                start_ns=event.start_ns(),
                end_ns=event.end_ns(),
                thread=event.start_thread_id() if placed else None,
                correlation_id=corr if not host and corr > 0 else None,
            )
        )
    return out


class _ThreadRanges:
    """Our ranges on one host thread, indexed for innermost-enclosing queries."""

    def __init__(self, ranges: list[RecordedEvent]) -> None:
        # Outer before inner at equal starts, so the last range starting at or before
        # a point is the innermost candidate.
        self.ranges = sorted(ranges, key=lambda r: (r.start_ns, -r.end_ns))
        self.starts = [r.start_ns for r in self.ranges]
        self.parents: list[int | None] = []
        stack: list[int] = []
        for i, r in enumerate(self.ranges):
            while stack and self.ranges[stack[-1]].end_ns < r.end_ns:
                stack.pop()
            self.parents.append(stack[-1] if stack else None)
            stack.append(i)

    def innermost(self, launch: RecordedEvent) -> str | None:
        """Label of the innermost range fully enclosing ``launch``, if any."""
        # Ranges on one thread nest strictly (record_function is a stack), so every
        # range enclosing the launch is an ancestor of the last one starting before it.
        i: int | None = bisect_right(self.starts, launch.start_ns) - 1
        while i is not None and i >= 0:
            r = self.ranges[i]
            if launch.end_ns <= r.end_ns:
                return r.name.removeprefix(RANGE_PREFIX)
            i = self.parents[i]
        return None


def join_device_time(events: Sequence[RecordedEvent], labels: Sequence[str]) -> DeviceTimeJoin:
    """Attribute every kernel to the op whose range enclosed its launch, and sum per op.

    Only ranges named ``tlgraph::<label>`` with ``label`` in ``labels`` are ours; other
    ranges are transparent. A kernel whose correlation id has no launch, whose launch
    sits outside all of our ranges, or whose launches disagree is unattributed.
    """
    wanted = set(labels)
    by_thread: dict[int | None, list[RecordedEvent]] = {}
    seen: set[str] = set()
    launches: dict[int, list[RecordedEvent]] = {}
    kernels: list[RecordedEvent] = []
    for e in events:
        label = e.name.removeprefix(RANGE_PREFIX)
        is_ours = e.name.startswith(RANGE_PREFIX) and label in wanted
        if e.kind == "user_range" and is_ours and e.thread is not None:
            by_thread.setdefault(e.thread, []).append(e)
            seen.add(label)
        elif e.kind == "runtime" and e.correlation_id is not None:
            launches.setdefault(e.correlation_id, []).append(e)
        elif e.kind == "kernel":
            kernels.append(e)

    threads = {tid: _ThreadRanges(rs) for tid, rs in by_thread.items()}
    totals: dict[str, int] = {}
    causes = {"no_launch": 0, "unplaced": 0, "outside": 0, "ambiguous": 0}
    for k in kernels:
        found = launches.get(k.correlation_id, []) if k.correlation_id is not None else []
        # Duplicate records of one launch (e.g. runtime and driver API) must agree.
        owners = {t.innermost(la) if (t := threads.get(la.thread)) else None for la in found}
        if not found:
            causes["no_launch"] += 1
        elif any(la.thread is None for la in found):
            causes["unplaced"] += 1
        elif len(owners) > 1:
            causes["ambiguous"] += 1
        elif (owner := owners.pop()) is None:
            causes["outside"] += 1
        else:
            totals[owner] = totals.get(owner, 0) + k.duration_ns

    per_op = MappingProxyType({label: totals.get(label) for label in labels})
    missing = tuple(label for label in labels if label not in seen)
    unattributed = sum(causes.values())
    if not kernels:
        status: JoinStatus = "no_kernels"
        reason = "The profiler recorded no device kernels (a CPU-only run has none)."
    elif unattributed or missing:
        status = "partial"
        reason = _partial_reason(len(kernels), causes, missing)
    else:
        status, reason = "joined", ""
    return DeviceTimeJoin(status, per_op, len(kernels), unattributed, missing, reason)


_CAUSES: Mapping[str, str] = MappingProxyType(
    {
        "no_launch": "with no recorded launch call",
        "unplaced": "whose launch call torch did not tie to a host op",
        "outside": "launched outside every captured op",
        "ambiguous": "with launch records in different ops",
    }
)


def _partial_reason(total: int, causes: Mapping[str, int], missing: tuple[str, ...]) -> str:
    """One sentence naming every cause that kept the join from being exact."""
    parts = [f"{n} {_CAUSES[cause]}" for cause, n in causes.items() if n]
    clauses = []
    if parts:
        lost = sum(causes.values())
        clauses.append(
            f"{lost} of {total} device kernels could not be attributed to a captured op"
            f" ({', '.join(parts)})"
        )
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        clauses.append(f"{len(missing)} captured ops have no profiler range ({shown})")
    return "; ".join(clauses) + "."
