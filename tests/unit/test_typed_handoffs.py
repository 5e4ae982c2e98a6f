"""Stages hand each other values, never sentences to parse back (issue 38).

The comparison weighs what a row edit is about (``RowEdit.arg``, ``shown_only``),
what a hidden op's edit is about (``calls.HiddenEdit``) and whether a hidden-content
change has only the generic words (``inside.InsideChange``) as fields; the modules
that consume them hold no regular expression at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.inside import GENERIC_INSIDE, inside_change, inside_diff
from pytest_tlgraph.diff.view.calls import call_edits, inside_edits, member_edits
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.rows import args_edits
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.draw.collapse.signature import Signature

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_tlgraph"


def test_an_args_edit_carries_its_argument_and_whether_it_gives_both_values() -> None:
    edits = args_edits("eps=1e-05, affine=True", "eps=1e-06, momentum=0.2")
    assert [(e.what, e.arg, e.shown_only) for e in edits] == [
        ("eps 1e-05 -> 1e-06", "eps", False),
        ("now shows momentum=0.2", "momentum", True),
        ("no longer shows affine=True", "affine", True),
    ]
    at_default = args_edits("", "eps=1e-06", old_defaults="eps=1e-05")
    assert [(e.what, e.arg, e.shown_only) for e in at_default] == [
        ("eps 1e-05 (default) -> 1e-06", "eps", False)
    ]


def test_a_call_edit_carries_its_argument() -> None:
    (edit,) = call_edits("input=in1, dim=-1", "input=in1, dim=-2")
    assert (edit.kind, edit.what, edit.arg) == ("call", "dim -1 -> -2", "dim")
    (whole,) = call_edits("dim=1", "dim=1 | dim=2")  # another number of passes
    assert whole.arg is None and whole.what.startswith("call ")


def test_a_hidden_ops_edit_carries_its_function_subject_and_words() -> None:
    old = ["conv2d | 1x8x8x8 | kernel_size=(3, 3) | weight 8x8x3x3"] * 2
    new = ["conv2d | 1x8x8x8 | kernel_size=(5, 5) | weight 8x8x5x5"] * 2
    kernel, params = member_edits(old, new)
    assert kernel.text == "conv2d kernel_size (3, 3) -> (5, 5) (2 ops)"
    assert kernel.said_as == "kernel_size (3, 3) -> (5, 5) (2 ops)"
    assert kernel.topic == ("conv2d", "kernel_size")
    assert params.topic == ("conv2d", "params")
    (shown,) = member_edits(["relu | 4 |  | "], ["relu | 4 | inplace=True | "])
    assert shown.text == "relu now shows inplace=True" and shown.topic is None


def test_hidden_calls_group_grad_mode_by_value_not_by_their_words() -> None:
    one = inside_edits("softmax: dim=-1", "softmax: dim=-2")
    assert [(e.text, e.said_as, e.arg, e.topic) for e in one] == [
        ("softmax dim -1 -> -2", "dim -1 -> -2", "dim", ("softmax", "dim"))
    ]
    many = inside_edits("mul: x=1; add: x=1", "mul: x=1, grad=no_grad; add: x=1, grad=no_grad")
    assert [(e.text, e.arg, e.topic) for e in many] == [
        ("now runs under no_grad (2 ops)", None, None)
    ]
    single = inside_edits("mul: x=1", "mul: x=1, grad=no_grad")
    assert [(e.text, e.said_as) for e in single] == [
        ("mul now runs under no_grad", "now runs under no_grad")
    ]
    # A grad value of more than one word is an argument change like any other.
    odd = inside_edits("mul: x=1", "mul: x=1, grad=no grad")
    assert [e.text for e in odd] == ["mul grad (default) -> no grad"]
    overflow = inside_edits("f: a=1, b=1, c=1, d=1, e=1, g=1", "f: a=2, b=2, c=2, d=2, e=2, g=2")
    assert overflow[-1].text == "and 2 more" and overflow[-1].topic is None


@pytest.mark.parametrize(
    ("old", "new", "generic"),
    [
        (("relu", "conv2d"), ("relu", "conv2d"), True),  # same functions: generic words
        (("relu", "conv2d"), ("gelu", "conv2d"), False),
        (("relu", "conv2d"), ("conv2d", "relu"), False),  # reordered
        (None, None, False),  # no list: "content changed"
    ],
)
def test_the_generic_inside_words_are_a_field(
    old: tuple[str, ...] | None, new: tuple[str, ...] | None, generic: bool
) -> None:
    before, after = Signature("0" * 12, 2, old), Signature("1" * 12, 2, new)
    found = inside_diff(before, after)
    assert found is not None
    assert found.text == inside_change(before, after)
    assert found.generic is generic
    assert found.text.startswith(GENERIC_INSIDE) is generic
    assert inside_diff(before, before) is None and inside_diff(None, after) is None


class _Block(nn.Module):
    def __init__(self, eps: float) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8, eps=eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.norm(self.fc(x)))


class _Net(nn.Module):
    def __init__(self, eps: float) -> None:
        super().__init__()
        self.a = _Block(1e-5)
        self.b = _Block(eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.a(x))


def test_a_boxed_argument_change_is_named_from_the_typed_edits() -> None:
    # The norm is a box at depth=1: its digest moved with the same functions, so the
    # hidden ops' edits name the change instead of the generic words.
    x = torch.randn(2, 8)
    torch.manual_seed(0)
    old = capture(_Net(1e-5), x).draw(depth=1).dot
    torch.manual_seed(0)
    new = capture(_Net(1e-3), x).draw(depth=1).dot
    comparison = compare(old, new)
    (change,) = comparison.changed.values()
    assert change.inside is not None and GENERIC_INSIDE not in change.inside
    assert change.inside == "layer_norm eps 1e-05 -> 0.001"
    assert any("eps" in line and "0.001" in line for line in story_lines(comparison))


#: The modules that take the stages' values: none may read text with a regex.
_CONSUMERS = (
    "diff/view/comparison.py",
    "diff/view/nodechange.py",
    "diff/view/clusterchange.py",
    "review/terminal.py",
    "snapshots/call.py",
    "snapshots/failure.py",
)


@pytest.mark.parametrize("module", _CONSUMERS)
def test_the_consumers_of_typed_values_hold_no_regular_expression(module: str) -> None:
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "re" not in imported, module


def test_a_file_in_the_way_is_a_field_of_the_dot_outcome_not_words_in_its_error() -> None:
    from pytest_tlgraph.disk.nofollow import in_the_way
    from pytest_tlgraph.review.report import DotOutcome, comparison_of

    line = in_the_way("__snapshots__/test_m", "run pytest --snapshot-update")
    blocked = DotOutcome("p.gv", None, "digraph {}", False, error=line, blocked=True)
    assert comparison_of(blocked) == f"the stored DOT p.gv cannot exist: {line}"
    # The same words in another error (a file's own text, say) decide nothing.
    other = DotOutcome("p.gv", None, "digraph {}", False, error=line)
    assert comparison_of(other) == f"the stored DOT p.gv could not be read: {line}"
