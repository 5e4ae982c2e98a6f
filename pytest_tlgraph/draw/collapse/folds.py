"""Repeat folds: consecutive sibling module boxes of one structure drawn as one node.

Structure is the module type plus the op sequence (each op's function and the types of
the modules nested between the box's module and the op), so the 40 blocks of a deep
transformer fold into ``x40 @blocks.0-39 (Block)`` while a block that differs by one op
stays its own box. A fold is a stack: each call must read the output of the one before
it, so siblings fed from one input (``k_proj`` and ``v_proj``, a class head and a
distillation head) stay side by side.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.trace import ModuleCall, Trace, outermost_first

__all__ = [
    "MAX_PERIOD",
    "Run",
    "address_range",
    "call_signature",
    "fold_runs",
    "fold_title",
    "repeat_runs",
    "run_title",
]


_MOD: Final = (1 << 61) - 1  # a Mersenne prime: the type paths' rolling hash
_BASE: Final = 1_000_003


class TypePaths:
    """The module types around each call as a rolling hash of its path from the root
    (each call's built from its parent's), so the types of the calls between a call and
    one nested in it are read in constant time, however deep the nesting."""

    def __init__(self, calls: Mapping[Key, ModuleCall]) -> None:
        self._hash: dict[Key, int] = {}
        self._depth: dict[Key, int] = {}
        for c in outermost_first(calls):
            up = c.parent
            known = up is not None and up in self._hash
            above, depth = (self._hash[up], self._depth[up]) if known else (0, 0)  # type: ignore[index]
            text = hashlib.blake2b(c.type_name.encode("utf-8", "surrogatepass"), digest_size=8)
            self._hash[c.key] = (above * _BASE + int(text.hexdigest(), 16)) % _MOD
            self._depth[c.key] = depth + 1

    def below(self, outer: Key, inner: Key) -> tuple[int, int]:
        """``(how many, hash of their types)`` of the calls from just below ``outer``
        down to ``inner`` (``inner`` nested in ``outer``, or ``outer`` itself)."""
        if inner == outer:
            return (0, 0)
        count = self._depth[inner] - self._depth[outer]
        return count, (self._hash[inner] - self._hash[outer] * pow(_BASE, count, _MOD)) % _MOD


def call_signature(
    trace: Trace, call: ModuleCall, paths: TypePaths
) -> tuple[str, tuple[tuple[Hashable, ...], ...]]:
    """``(module type, ((func, nested module types, module args, call args, grad mode,
    wiring), ...))`` of one call, op by op; the nested module types as
    :meth:`TypePaths.below` gives them, the wiring each input's source (an earlier op of
    the call by its place, or the n-th outside source).

    Addresses and measurements are left out: ``blocks.3`` and ``blocks.4`` are the same
    structure when they run the same functions through the same module types.
    """
    ops = []
    key = call.key
    position = {label: i for i, label in enumerate(call.ops)}
    outside: dict[str, int] = {}
    for label in call.ops:
        op = trace.op(label)
        below = paths.below(key, op.module_calls[-1])
        # Where each input comes from (an earlier op of the call, or the n-th source
        # outside it): repetitions wired otherwise are not repeats.
        wiring = tuple(
            position[p] if p in position else -1 - outside.setdefault(p, len(outside))
            for p in op.parents
        )
        # Every argument of the call and its grad mode: a repetition that computes
        # with another value is not a repeat.
        ops.append((op.func, below, _hashable(op.module_args), op.call, op.grad_mode, wiring))
    return (call.type_name, tuple(ops))


def _hashable(args: Mapping[str, object] | None) -> Hashable:
    """A module's args as part of a signature: two embeddings of different sizes are
    not one structure. Values that do not hash are compared by their text."""
    if not args:
        return None
    items = tuple(args.items())
    try:
        hash(items)
    except TypeError:
        return repr(items)
    return items


def fold_runs(
    sequence: Sequence[str],
    candidates: Mapping[str, tuple[Hashable, Hashable]],
    feeds: Callable[[str, str], bool],
) -> list[tuple[str, ...]]:
    """Maximal runs of two or more consecutive units to fold.

    ``sequence`` is the execution-order sequence of visible units with consecutive
    repeats merged; ``candidates`` maps each box unit to ``(parent, signature)``. A run
    is consecutive candidates sharing parent and signature, each one fed by the one
    before it (``feeds(previous, unit)``: a fold is a stack, so siblings that read one
    input, ``k_proj`` and ``v_proj``, stay side by side). A unit that appears more than
    once in ``sequence`` (a rolled box whose calls are interleaved with other nodes) is
    never folded: there is no single place to put it.
    """
    seen = Counter(sequence)
    runs: list[tuple[str, ...]] = []
    current: list[str] = []
    current_key: tuple[Hashable, Hashable] | None = None
    for unit in sequence:
        key = candidates.get(unit) if seen[unit] == 1 else None
        if key is not None and key == current_key and feeds(current[-1], unit):
            current.append(unit)
            continue
        if len(current) >= 2:
            runs.append(tuple(current))
        current = [unit] if key is not None else []
        current_key = key
    if len(current) >= 2:
        runs.append(tuple(current))
    return runs


def address_range(addresses: Sequence[str]) -> str:
    """``blocks.0-39`` for numbered siblings, ``enc..dec`` for other names (the last one
    written past the prefix it shares with the first: ``block4.block4-1..5``; numbers
    with a gap keep both ends whole), the address itself when every entry is one
    module called repeatedly."""
    distinct = list(dict.fromkeys(addresses))
    if len(distinct) == 1:
        return distinct[0]
    heads = {a.rpartition(".")[0] for a in distinct}
    tails = [a.rpartition(".")[2] for a in distinct]
    if len(heads) == 1 and all(t.isdigit() for t in tails):
        numbers = [int(t) for t in tails]
        if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            head = heads.pop()
            prefix = f"{head}." if head else ""
            return f"{prefix}{numbers[0]}-{numbers[-1]}"
    first, last = distinct[0], distinct[-1]
    if len(heads) == 1 and all(t.isdigit() for t in tails):  # gaps: both ends in full
        return f"{first}..{last}"
    return f"{first}..{last[_shared_prefix(first, last) :]}"


def _shared_prefix(first: str, last: str) -> int:
    """How many leading characters ``last`` shares with ``first``, never ending inside
    a number (``conv10..12``, not ``conv10..2``) nor taking all of ``last``."""
    size = 0
    for a, b in zip(first, last, strict=False):
        if a != b:
            break
        size += 1
    size = min(size, len(last) - 1)
    while size > 0 and last[size - 1].isdigit() and last[size].isdigit():
        size -= 1
    return max(size, 0)


def fold_title(addresses: Sequence[str], type_name: str) -> str:
    """``x40 @blocks.0-39 (Block)``: the fold's bold title row, its count first."""
    return f"x{len(addresses)} @{address_range(addresses)} ({type_name})"


#: The longest period a repeat is looked for with (``(Linear, ReLU)`` has period 2).
MAX_PERIOD: Final = 8

Key = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Run:
    """Consecutive sibling module calls repeating one structure: ``reps`` holds each
    repetition's calls (``period`` of them), the representative first."""

    parent: Key
    reps: tuple[tuple[Key, ...], ...]
    types: tuple[str, ...]

    @property
    def period(self) -> int:
        """How many calls one repetition has."""
        return len(self.reps[0])

    @property
    def count(self) -> int:
        """How many repetitions were folded."""
        return len(self.reps)


def repeat_runs(
    trace: Trace, depth: int | None = None, *, boxed: AbstractSet[Key] | None = None
) -> list[Run]:
    """Every maximal run of two or more repetitions of one structure among the sibling
    calls drawn at ``depth`` (children of calls at depth ``depth`` or less; or, given
    ``boxed``, children of calls not in it), outermost first. Calls are siblings in a
    run when no op of their parent runs between them; a period of up to
    :data:`MAX_PERIOD` calls is found (the smallest period wins a tie), and each
    repetition must read the output of the one before it (a stack). Only
    representatives are searched further: the other repetitions are drawn by them."""
    calls = {call.key: call for call in trace.modules}
    types = {key: call.type_name for key, call in calls.items()}
    paths = TypePaths(calls)
    index_of = {op.label: op.index for op in trace.ops}
    children: dict[Key, list[ModuleCall]] = {}
    direct: dict[Key, list[int]] = {}
    for call in trace.modules:
        if call.parent is not None and call.ops:
            children.setdefault(call.parent, []).append(call)
    for op in trace.ops:
        if op.module_calls:
            direct.setdefault(op.module_calls[-1], []).append(op.index)
    runs: list[Run] = []
    pending = [call for call in trace.modules if call.parent is None]
    while pending:
        parent = pending.pop(0)
        if parent.key in boxed if boxed is not None else parent.depth > (depth or 0):
            continue
        kids = children.get(parent.key, [])
        folded: set[Key] = set()
        for block in _adjacent_blocks(kids, direct.get(parent.key, []), index_of):
            if len(block) < 2:  # a lone call repeats nothing (a deep chain: every level)
                continue
            sigs = [call_signature(trace, call, paths) for call in block]
            for start, period, count in _periodic(sigs, _feeders(trace, block)):
                reps = tuple(
                    tuple(c.key for c in block[start + r * period : start + (r + 1) * period])
                    for r in range(count)
                )
                runs.append(Run(parent.key, reps, tuple(types[k] for k in reps[0])))
                folded.update(k for rep in reps[1:] for k in rep)
        pending.extend(kid for kid in kids if kid.key not in folded)
    return runs


def _adjacent_blocks(
    kids: Sequence[ModuleCall], direct: Sequence[int], index_of: Mapping[str, int]
) -> list[list[ModuleCall]]:
    """``kids`` cut wherever an op of the parent runs between two of them."""
    blocks: list[list[ModuleCall]] = []
    previous_end = -1
    for kid in kids:
        first, last = index_of[kid.ops[0]], index_of[kid.ops[-1]]
        between = bisect.bisect_left(direct, first) - bisect.bisect_right(direct, previous_end)
        if not blocks or between > 0 or first < previous_end:
            blocks.append([kid])
        else:
            blocks[-1].append(kid)
        previous_end = last
    return blocks


def _feeders(trace: Trace, block: Sequence[ModuleCall]) -> list[frozenset[int]]:
    """For each call of ``block``, the positions of the other calls in it whose ops
    feed one of its ops."""
    owner = {label: i for i, call in enumerate(block) for label in call.ops}
    out = []
    for i, call in enumerate(block):
        fed = {owner.get(p, i) for label in call.ops for p in trace.op(label).parents}
        fed.discard(i)
        out.append(frozenset(fed))
    return out


def _fed(feeders: Sequence[frozenset[int]], start: int, period: int) -> bool:
    """Whether the repetition at ``start`` reads the output of the one just before it."""
    before = range(start - period, start)
    return any(j in before for i in range(start, start + period) for j in feeders[i])


def _periodic(
    sigs: Sequence[Hashable], feeders: Sequence[frozenset[int]]
) -> list[tuple[int, int, int]]:
    """``(start, period, count)`` of each greedy, maximal run in ``sigs``: repetitions
    of one signature, each fed by the one before it (a stack: siblings that read one
    input are not repetitions of each other). ``feeders`` is :func:`_feeders`."""
    found = []
    i, n = 0, len(sigs)
    while i < n:
        best = (0, 0, 0)  # covered, period, count
        for period in range(1, min(MAX_PERIOD, (n - i) // 2) + 1):
            unit = sigs[i : i + period]
            count = 1
            while sigs[i + count * period : i + (count + 1) * period] == unit and _fed(
                feeders, i + count * period, period
            ):
                count += 1
            if count >= 2 and count * period > best[0]:
                best = (count * period, period, count)
        if best[0]:
            found.append((i, best[1], best[2]))
            i += best[0]
        else:
            i += 1
    return found


def run_title(trace_addresses: Sequence[str], types: Sequence[str], count: int) -> str:
    """``x12 @h.0-11 (GPT2Block)``; ``x2000 @0-3999 (Linear, ReLU)`` for a period of
    two calls: the count first, where the eye starts."""
    return f"x{count} @{address_range(trace_addresses)} ({', '.join(types)})"
