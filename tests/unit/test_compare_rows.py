"""What one node's row edits read (:mod:`pytest_tlgraph.diff.view.rows`), and
how alike edits and addresses are written as one (:mod:`.story`'s patterns)."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_tlgraph.diff.view.rows import RowEdit, multiset_minus, row_edits
from pytest_tlgraph.diff.view.story import address_pattern, generalised


def _whats(old: list[str], new: list[str]) -> list[str]:
    return [edit.what for edit in row_edits(old, new)]


def test_row_edits_name_each_edit_kind_by_kind_without_the_node() -> None:
    old = ["1x8, 32 B", "kernel_size=(3, 3), stride=1", "params: weight 8x3x3x3", "@conv"]
    new = ["1x16, 64 B", "kernel_size=(5, 5), padding=2", "params: weight 8x3x5x5", "@other"]
    assert _whats(old, new) == [
        "shape 1x8 -> 1x16",  # the byte size follows the shape: left out
        "kernel_size (3, 3) -> (5, 5)",
        "now shows padding=2",
        "no longer shows stride=1",
        "params weight 8x3x3x3 -> 8x3x5x5",
    ]  # the @module row is the comparison's to name (a moved node)
    assert _whats(["2x4, 32 B"], ["2x4, 32 B"]) == []
    saved = row_edits(["saved for backward: x"], ["saved for backward: y"])
    assert [(edit.kind, edit.what) for edit in saved] == [("saved", "saved for backward x -> y")]


def test_multiset_minus_counts_repeats() -> None:
    assert multiset_minus(["a", "a", "b"], ["a"]) == ("a", "b")
    assert multiset_minus(["a"], ["a", "a"]) == ()


@pytest.mark.parametrize(
    ("addresses", "pattern"),
    [
        (["layer1.0.conv1", "layer2.1.conv1"], "@layer*.*.conv1"),
        (["fc1", "fc2"], "@fc*"),
        (["fc1", "act"], "@*"),
        (["x", "x"], "@x"),
        (["a.b", "c", ""], "@a.b, @c, (top level)"),
        ([], ""),
    ],
)
def test_address_pattern(addresses: list[str], pattern: str) -> None:
    assert address_pattern(addresses) == pattern


@pytest.mark.parametrize(
    ("edit", "general"),
    [
        (
            RowEdit("params", "params weight 8x8x3x3 -> 8x8x5x5", subject="params weight",
                    old="8x8x3x3", new="8x8x5x5"),
            "params weight *x*x3x3 -> *x*x5x5",
        ),
        (
            RowEdit("shape", "shape 2x16 -> 2x32", subject="shape", old="2x16", new="2x32"),
            "shape *x16 -> *x32",
        ),
        # Every number changed: nothing to keep.
        (
            RowEdit("args", "kernel_size (3, 3) -> (5, 5)", "kernel_size", False,
                    "kernel_size", "(3, 3)", "(5, 5)"),
            None,
        ),
        (RowEdit("args", "now shows bias=True", "bias", shown_only=True), None),
    ],
)  # fmt: skip
def test_the_same_edit_at_other_sizes_reads_as_one(edit: RowEdit, general: str | None) -> None:
    # Read from the edit's typed values, never from its text.
    assert generalised(edit) == general
    assert generalised(dataclasses.replace(edit, what="unrelated text")) == general
