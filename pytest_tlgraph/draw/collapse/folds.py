"""Repeat folds: consecutive sibling module boxes of one structure drawn as one node.

Structure is the module type plus the op sequence (each op's function and the types of
the modules nested between the box's module and the op), so the 40 blocks of a deep
transformer fold into ``x40 @blocks.0-39 (Block)`` while a block that differs by one op
stays its own box. A fold is a stack of true repeats (:class:`Wiring`): each repetition
reads the one before it exactly as that one reads its own predecessor (the first, what
it reads from outside), the calls of one repetition are one piece of dataflow, and no
repetition reads one further back. So siblings fed from one input (``k_proj`` and
``v_proj``, a class head and a distillation head) stay side by side, and so do
siblings that merely alternate in type (``q_norm, k_proj, k_norm, v_proj``).
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
    "Wiring",
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
    """``(module type, ((func, nested module types, name below the call, module args,
    call args, grad mode, wiring), ...))`` of one call, op by op; the nested module types as
    :meth:`TypePaths.below` gives them, the wiring each input's source (an earlier op of
    the call by its place, or the n-th outside source).

    Addresses and measurements are left out: ``blocks.3`` and ``blocks.4`` are the same
    structure when they run the same functions through the same module types and the
    same names below them (``mlp.fc1`` in each: a repetition that renames a submodule
    is no repeat, so the rename is drawn where it happened).
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
        name = op.module[len(call.address) + 1 :] if call.address else op.module
        ops.append((op.func, below, name, _hashable(op.module_args), op.call, op.grad_mode, wiring))
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
    ops_of: Mapping[str, Sequence[str]],
    parents: Callable[[str], Sequence[str]],
) -> list[tuple[str, ...]]:
    """Maximal runs of two or more consecutive units to fold.

    ``sequence`` is the execution-order sequence of visible units with consecutive
    repeats merged; ``candidates`` maps each box unit to ``(parent, signature)``;
    ``ops_of`` gives each unit's op labels and ``parents`` each op's inputs. A run is
    consecutive candidates sharing parent and signature, each a true repeat of the one
    before it (:class:`Wiring`: a fold is a stack, so siblings that read one input,
    ``k_proj`` and ``v_proj``, stay side by side). A unit that appears more than once
    in ``sequence`` (a rolled box whose calls are interleaved with other nodes) is
    never folded: there is no single place to put it.
    """
    seen = Counter(sequence)
    wiring = Wiring([ops_of.get(unit, ()) for unit in sequence], parents)
    runs: list[tuple[str, ...]] = []
    begin = 0  # where the current run starts in ``sequence``
    current_key: tuple[Hashable, Hashable] | None = None
    expected: tuple[Hashable, ...] | None = None
    for index, unit in enumerate(sequence):
        key = candidates.get(unit) if seen[unit] == 1 else None
        if key is not None and key == current_key:
            step = wiring.step(begin, index, 1, expected)
            if step is not None:
                expected = step
                continue
        if index - begin >= 2 and current_key is not None:
            runs.append(tuple(sequence[begin:index]))
        begin, current_key, expected = index, key, None
    if len(sequence) - begin >= 2 and current_key is not None:
        runs.append(tuple(sequence[begin:]))
    return runs


#: How an input of a repetition's op is read: from inside the repetition, from the one
#: before it, from one further back (never in a fold), or from outside the run.
_IN: Final = 0
_PREV: Final = 1
_FAR: Final = 2
_OUT: Final = (3,)


class Wiring:
    """Where each op of a run's repetitions reads its inputs from.

    ``members`` holds the op labels of consecutive units (calls or boxes) in execution
    order; a repetition is ``period`` consecutive members. Its pattern lists, op by op
    and input by input, whether the input comes from the repetition itself (which
    member, which op), from the repetition just before it (the same), from one further
    back, or from outside the run. Repetitions are true repeats when the second's
    pattern reads the first (at least once) and is the first's with those reads taken
    as outside, and every later one's is the second's: the wiring between repetitions
    is equal, and a fold, drawing the first for all, never draws an edge the model does
    not have.
    """

    def __init__(
        self, members: Sequence[Sequence[str]], parents: Callable[[str], Sequence[str]]
    ) -> None:
        self._members = members
        self._parents = parents
        # Each member's ops by place, indexed only once a pattern looks at the member
        # (a drawing with few candidates pays for those alone): an input from a member
        # before the run is outside it whether indexed or not.
        self._owner: dict[str, tuple[int, int]] = {}
        self._seen: set[int] = set()
        self._span = (0, 0)  # members from the first to the second are indexed

    def _index(self, first: int, end: int) -> None:
        """Index members ``first`` to ``end`` (each once; a run moving forward costs
        each member once in all, not once per repetition looked at)."""
        low, high = self._span
        start = high if low <= first <= high else first
        for i in range(start, end):
            if i not in self._seen:
                self._seen.add(i)
                self._owner.update((label, (i, pos)) for pos, label in enumerate(self._members[i]))
        self._span = (low, max(high, end)) if low <= first <= high else (first, max(first, end))

    def pattern(self, begin: int, at: int, period: int) -> tuple[Hashable, ...]:
        """The pattern of the repetition of ``period`` members at ``at`` in the run that
        starts at ``begin``."""
        self._index(begin, at + period)
        out: list[Hashable] = []
        for j in range(at, at + period):
            for label in self._members[j]:
                for parent in self._parents(label):
                    owner = self._owner.get(parent)
                    if owner is None or owner[0] < begin:
                        out.append(_OUT)
                    elif at <= owner[0] < at + period:
                        out.append((_IN, owner[0] - at, owner[1]))
                    elif at - period <= owner[0] < at:
                        out.append((_PREV, owner[0] - at + period, owner[1]))
                    else:
                        out.append((_FAR, owner[0] - at, owner[1]))
        return tuple(out)

    def connected(self, at: int, period: int) -> bool:
        """Whether the ``period`` members at ``at`` are one piece of dataflow (each
        joined to the others by inputs read among them)."""
        if period == 1:
            return True
        self._index(at, at + period)
        root = list(range(period))

        def find(i: int) -> int:
            while root[i] != i:
                root[i] = root[root[i]]
                i = root[i]
            return i

        for j in range(at, at + period):
            for label in self._members[j]:
                for parent in self._parents(label):
                    owner = self._owner.get(parent)
                    if owner is not None and at <= owner[0] < at + period:
                        root[find(owner[0] - at)] = find(j - at)
        return len({find(i) for i in range(period)}) == 1

    def step(
        self, begin: int, at: int, period: int, expected: tuple[Hashable, ...] | None
    ) -> tuple[Hashable, ...] | None:
        """The pattern of the repetition at ``at`` when it continues the run that
        starts at ``begin`` (``expected``: the second repetition's pattern, ``None``
        while ``at`` is the second), else ``None``."""
        found = self.pattern(begin, at, period)
        if expected is not None:
            return found if found == expected else None
        if not any(isinstance(e, tuple) and e[0] == _PREV for e in found):
            return None  # not fed by the one before: siblings, not a stack
        as_first = tuple(_OUT if isinstance(e, tuple) and e[0] == _PREV else e for e in found)
        return found if as_first == self.pattern(begin, begin, period) else None


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
    repetition must be a true repeat of the one before it (:class:`Wiring`). Only
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
            wiring = Wiring([call.ops for call in block], lambda label: trace.op(label).parents)
            for start, period, count in _periodic(sigs, wiring):
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


def _periodic(sigs: Sequence[Hashable], wiring: Wiring) -> list[tuple[int, int, int]]:
    """``(start, period, count)`` of each greedy, maximal run in ``sigs``: repetitions
    of one signature, each a true repeat of the one before it (:class:`Wiring`: a
    stack, its repetitions wired alike; siblings that read one input are not
    repetitions of each other)."""
    found = []
    i, n = 0, len(sigs)
    while i < n:
        best = (0, 0, 0)  # covered, period, count
        for period in range(1, min(MAX_PERIOD, (n - i) // 2) + 1):
            unit = sigs[i : i + period]
            if sigs[i + period : i + 2 * period] != unit or not wiring.connected(i, period):
                continue
            count, expected = 1, None
            while sigs[i + count * period : i + (count + 1) * period] == unit:
                expected = wiring.step(i, i + count * period, period, expected)
                if expected is None:
                    break
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
