"""Diff drawings that agree with the story, on the corpus: every edit of
:mod:`tests.corpus.reviewer` and every change of :mod:`tests.corpus.changes`, in the
default view, ``depth=1`` and ``collapse="auto"``, drawn with context and whole.

Each diff drawing has no cycle (the two drawings are acyclic, so their diff is: a grey
run never stands on both sides of a change, and nodes that run in another order are
drawn once per side), is not blank when the comparison holds edits, and its legend
counts what is drawn: the nodes of each kind, the frames of each status, the runs.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.diff.view.context import CONTEXT_HOPS
from pytest_tlgraph.diff.view.diffplan import plan_diff
from pytest_tlgraph.diff.view.drawing import draw_comparison
from tests.corpus.changes import CHANGES, MOVES
from tests.corpus.reviewer import EDITS

VIEWS: dict[str, dict[str, Any]] = {
    "default": {},
    "depth1": {"depth": 1},
    "auto": {"collapse": "auto"},
}
CASES = [f"reviewer:{name}" for name in EDITS] + [
    f"changes:{name}" for name in {**CHANGES, **MOVES}
]
#: The legend's word for each drawn kind.
WORDS = {
    "added": "added", "removed": "removed", "replaced": "replaced", "changed": "changed",
    "unchanged": "unchanged", "run": "unchanged runs",
}  # fmt: skip
_CELL = re.compile(r'<TD ALIGN="LEFT">([a-z ]+): ([^<]*)</TD>')
_COUNT = re.compile(r"(?:(\d+)(?: \+ |$))?(?:(\d+) frames?)?")


@functools.cache
def _dots(case: str) -> tuple[dict[str, str], dict[str, str]]:
    """Both sides' DOT in every view."""
    source, name = case.split(":")
    if source == "reviewer":
        edit = EDITS[name]
        sides = []
        for build in (edit.before, edit.after):
            torch.manual_seed(0)
            sides.append(capture(build().eval(), edit.inputs(), kwargs=edit.kwargs() or None))
    else:
        cases = {**CHANGES, **MOVES}[name]()
        sides = [capture(c.model, c.inputs, kwargs=c.kwargs or None) for c in cases]
    before, after = ({view: s.draw(**o).dot for view, o in VIEWS.items()} for s in sides)
    return before, after


def _compared(case: str, view: str) -> Comparison:
    before, after = _dots(case)
    return compare(before[view], after[view])


def _has_cycle(nodes: Sequence[str], edges: Sequence[tuple[str, str]]) -> bool:
    """True when ``edges`` hold a directed cycle: Kahn's order leaves a node out."""
    waiting = dict.fromkeys(nodes, 0)
    following: dict[str, list[str]] = {n: [] for n in nodes}
    for tail, head in edges:
        waiting[head] += 1
        following[tail].append(head)
    ready = [n for n, count in waiting.items() if count == 0]
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        for head in following[node]:
            waiting[head] -= 1
            if waiting[head] == 0:
                ready.append(head)
    return done != len(waiting)


def _legend(dot: str) -> dict[str, tuple[int, int]]:
    """The legend's ``word -> (nodes, frames)``, read from the drawing's caption."""
    out = {}
    for word, text in _CELL.findall(dot):
        found = _COUNT.fullmatch(text)
        assert found is not None, (word, text)
        nodes, frames = found.groups()
        out[word] = (int(nodes or 0), int(frames or 0))
    return out


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("case", CASES)
def test_the_diff_drawing_agrees_with_the_story(case: str, view: str) -> None:
    comparison = _compared(case, view)
    for context in (CONTEXT_HOPS, None):
        drawing = draw_comparison(comparison, context=context)
        kinds = Counter(node.kind for node in drawing.nodes.values())
        where = (case, view, context)
        # Acyclic, as both drawings are.
        assert not _has_cycle(list(drawing.nodes), drawing.edges), where
        # Never blank when the story names an edit: a node or a frame is marked.
        plan = plan_diff(comparison, context)
        assert {c for c in plan.frames} == set(plan.view.clusters), where
        frames = Counter(s for s in plan.frames.values() if s != "unchanged")
        if comparison.edits:
            assert set(kinds) - {"unchanged", "run"} or frames, where
        # The legend counts what is drawn: nodes of each kind, frames of each status.
        legend = _legend(drawing.dot)
        for kind, word in WORDS.items():
            if kind == "run" and not kinds[kind]:
                assert word not in legend, where  # no runs, no swatch for them
                continue
            assert legend[word] == (kinds[kind], frames[kind]), (where, word)


def test_a_reordering_is_drawn_once_per_side() -> None:
    # ReLU before BatchNorm: the stored order dashed red, the received one green.
    comparison = _compared("changes:order_swapped", "default")
    drawing = draw_comparison(comparison, context=None)
    kinds = {node_id: node.kind for node_id, node in drawing.nodes.items()}
    for name in ("relu_1", "batch_norm_1"):
        assert (kinds[name], kinds[f"{name} (before)"]) == ("added", "removed")
    assert ("relu_1", "batch_norm_1") in drawing.edges
    assert ("batch_norm_1 (before)", "relu_1 (before)") in drawing.edges
