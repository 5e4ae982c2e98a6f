"""The reviewer's matrix: every edit of :mod:`tests.corpus.reviewer` on every model, in
the default view, ``depth=1`` and ``collapse="auto"``: the story's first line names the
edit (a word of what changed) at its address, the comparison holds typed edits whose
JSON form reads back, and the diff drawing marks something.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.diff.edits import from_json, to_json
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.diff.view.diffplan import plan_diff
from pytest_tlgraph.diff.view.drawing import draw_comparison
from pytest_tlgraph.diff.view.story import story_lines
from tests.corpus.reviewer import EDITS

VIEWS: dict[str, dict[str, Any]] = {
    "default": {},
    "depth1": {"depth": 1},
    "auto": {"collapse": "auto"},
}


@functools.cache
def _dots(name: str, side: str) -> dict[str, str]:
    edit = EDITS[name]
    torch.manual_seed(0)
    model = (edit.before if side == "before" else edit.after)().eval()
    trace = capture(model, edit.inputs(), kwargs=edit.kwargs() or None)
    return {view: trace.draw(**options).dot for view, options in VIEWS.items()}


def _compared(name: str, view: str) -> Comparison:
    return compare(_dots(name, "before")[view], _dots(name, "after")[view])


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("name", list(EDITS))
def test_the_first_line_names_the_edit_at_its_address(name: str, view: str) -> None:
    edit = EDITS[name]
    comparison = _compared(name, view)
    lines = story_lines(comparison)
    assert comparison.edits, (name, view, lines)
    first = lines[0]
    assert f"@{edit.address}" in first or f" {edit.address}" in first, (name, view, lines)
    words = (edit.word,) if isinstance(edit.word, str) else edit.word
    assert any(word in first for word in words), (name, view, lines)
    assert "\x00" not in "".join(lines)
    # Each typed edit reads back from its JSON form.
    assert all(from_json(to_json(e)) == e for e in comparison.edits)
    # The diff drawing marks what the story names, a node or a frame: never blank.
    kinds = {node.kind for node in draw_comparison(comparison, context=None).nodes.values()}
    frames = set(plan_diff(comparison, None).frames.values())
    assert (kinds | frames) - {"unchanged", "run"}, (name, view, lines)
