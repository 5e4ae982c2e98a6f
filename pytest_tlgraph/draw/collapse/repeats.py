"""Repeat folds drawn as "Nx" clusters: which ops fold onto which
(docs/decisions.md, "Drawings a reviewer can read (0.2)").

A run of repetitions among sibling calls (:func:`.folds.repeat_runs`) draws its first
repetition; every op of a later one is drawn by the representative's op at the same
place, and the cluster that holds the representative is titled with the address range
and the count. A fold of several calls gets a cluster of its own, placed in the
module-call chain of the representative's ops just before its first call.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from pytest_tlgraph.draw.collapse.folds import repeat_runs, run_title
from pytest_tlgraph.trace import ModuleCall, Trace

__all__ = ["Repeats", "find_repeats"]

Key = tuple[str, int]
Chain = tuple[Key, ...]


@dataclass
class Repeats:
    """The repeat folds of one drawing: each folded op's representative op, the runs
    and repetitions each op belongs to, the clusters that draw the folds, and where a
    fold of several calls sits in a module-call chain."""

    target: dict[str, str] = field(default_factory=dict)
    runs_of: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: Each fold frame's caption, scope, type and span (first, last address, count).
    clusters: dict[Key, tuple[str, str | None, str, tuple[str, str, int]]] = field(
        default_factory=dict
    )
    insert: dict[Key, Key] = field(default_factory=dict)

    def chain(self, chain: Chain) -> Chain:
        """``chain`` with each fold of several calls placed before its first call."""
        if not self.insert or not any(key in self.insert for key in chain):
            return chain
        out: list[Key] = []
        for key in chain:
            if key in self.insert:
                out.append(self.insert[key])
            out.append(key)
        return tuple(out)

    def crosses(self, source: str, target: str) -> bool:
        """Whether an edge runs from one repetition of a fold to another (it is drawn
        by no edge: the representative stands for both ends), at any depth of nested
        folds: an edge inside one repetition of an outer fold is looked at again where
        the outer fold's first repetition draws it, where it may cross repetitions of
        a fold nested in that one (``conv2d_14 -> relu_3`` between two repetitions of
        ``x2 (ReLU, Conv2d)`` inside the second repetition of an ``x3`` fold)."""
        while True:
            runs = self.runs_of.get(source)
            if not runs:
                return False
            other = dict(self.runs_of.get(target, ()))
            shared = [(rep, other[run]) for run, rep in runs if run in other]
            if not shared:
                return False
            if any(mine != theirs for mine, theirs in shared):
                return True
            # One repetition of every fold they share: look again at the ops that draw
            # them, in the first repetition of each.
            drawn = (self.target.get(source, source), self.target.get(target, target))
            if drawn == (source, target):
                return False
            source, target = drawn


def find_repeats(
    trace: Trace, view: str, boxed: AbstractSet[Key], calls: Mapping[Key, ModuleCall]
) -> Repeats | None:
    """The repeat folds of an unrolled drawing boxing the calls in ``boxed``: every run
    of repetitions except a run of single boxed calls, which folds into one ``fold``
    node instead."""
    if view != "unrolled":
        return None
    out = Repeats()
    for index, run in enumerate(repeat_runs(trace, boxed=boxed)):
        first = calls[run.reps[0][0]]
        if run.period == 1 and first.key in boxed:
            continue  # a fold box: see _fold
        addresses = [calls[key].address for rep in run.reps for key in rep]
        caption = run_title(addresses, run.types, run.count)
        span = (addresses[0], addresses[-1], run.count)
        if run.period == 1:
            out.clusters[first.key] = (caption, None, first.type_name, span)
        else:
            synthetic = (f"{first.address}*{run.count}", first.call_number)
            parent = calls[run.parent].address
            out.clusters[synthetic] = (caption, parent, ", ".join(run.types), span)
            out.insert.update(dict.fromkeys(run.reps[0], synthetic))
        for number, rep in enumerate(run.reps):
            for position, key in enumerate(rep):
                shown = calls[run.reps[0][position]].ops
                for offset, label in enumerate(calls[key].ops):
                    out.runs_of.setdefault(label, []).append((index, number))
                    if number:
                        out.target[label] = shown[offset]
    return out if out.clusters else None
