"""The comparison's worst cases stay linear (issue 30): a long model whose every op
computes another function (each node a replacement, each drawn with its old rows), and
stored labels whose table rows or cells are left open.

Measured as ``test_hostile_gv`` measures: the CPU time of 1x and 8x the input in one
run, each at its best of a few repeats, the ratio bounded by 20 (quadratic gives 60).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from pytest_tlgraph.diff.dotparse import label_rows, strip_tags
from pytest_tlgraph.diff.graph import read_graph
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.drawing import draw_comparison
from pytest_tlgraph.diff.view.story import story_lines
from tests.robustness.test_hostile_gv import HEAD, assert_linear, chain


def sequential(count: int, func: str) -> str:
    """Canonical DOT of an ``nn.Sequential`` of ``count`` activations, as ``draw``
    writes it: an input, ``<func>_1 .. <func>_count`` at ``@0 .. @count-1``, an output."""
    ids = ["input_1", *(f"{func}_{i}" for i in range(1, count + 1)), "output_1"]
    lines = [HEAD, '  "input_1" [label=<<B>input</B><BR/>2x4, 32 B>, fillcolor="#D9EAD3"];\n']
    lines += [
        f'  "{func}_{i}" [label=<<B>{func}_{i}</B><BR/>2x4, 32 B<BR/>@{i - 1}>, '
        f'fillcolor="#F3F4F6", tl_addr="{i - 1}", tl_kind="op", tl_op="{func}"];\n'
        for i in range(1, count + 1)
    ]
    lines.append('  "output_1" [label=<<B>output</B><BR/>2x4, 32 B>, fillcolor="#D0E0F0"];\n')
    lines += [f'  "{a}" -> "{b}";\n' for a, b in pairwise(ids)]
    lines.append("}\n")
    return "".join(lines)


def test_every_op_replaced_pairs_each_in_place() -> None:
    comparison = compare(sequential(3, "relu"), sequential(3, "gelu"))
    assert comparison.replaced == (("relu_1", "gelu_1"), ("relu_2", "gelu_2"), ("relu_3", "gelu_3"))
    assert not comparison.added and not comparison.removed


def test_drawing_every_op_replaced_is_linear() -> None:
    # The drawing looked each replaced node's stored partner up in a reverse map built
    # again for every node.
    def make(count: int) -> Callable[[], object]:
        comparison = compare(sequential(count, "relu"), sequential(count, "gelu"))
        return lambda: (draw_comparison(comparison), draw_comparison(comparison, context=None))

    assert_linear(make, 1_000)


def test_comparing_every_op_replaced_is_linear() -> None:
    def make(count: int) -> Callable[[], object]:
        old, new = sequential(count, "relu"), sequential(count, "gelu")
        return lambda: story_lines(compare(old, new))

    assert_linear(make, 500)


def _labelled(body: str) -> str:
    """A three-op chain whose middle node's label body is ``body``."""
    plain = chain(3, "linear", "2x4, 32 B", "fc")
    return plain.replace("<B>linear_2</B><BR/>2x4, 32 B<BR/>@fc", body, 1)


OPEN_LABELS = {
    "rows": lambda n: "<TABLE>" + "<TR><TD>x</TD>" * n + "</TABLE>",
    "cells": lambda n: "<TABLE><TR>" + "<TD>x" * n + "</TR></TABLE>",
    "tags": lambda n: "<B>" + "<" * n + "<BR/>" + ">" * n + "</B>",
}


def test_open_rows_cells_and_tags_read_as_the_patterns_read_them() -> None:
    assert label_rows(OPEN_LABELS["rows"](2)) == ()
    assert label_rows(OPEN_LABELS["cells"](2)) == ("",)
    assert label_rows("<TABLE><TR><TD>a</TD><TD>b</TD></TR><TR><TD>c</TD></TR></TABLE>") == (
        "a b",
        "c",
    )


def test_labels_left_open_are_read_in_linear_time() -> None:
    for make_body in OPEN_LABELS.values():

        def make(count: int, make_body: Callable[[int], str] = make_body) -> Callable[[], object]:
            old, new = _labelled(make_body(count)), chain(3, "linear", "2x4, 32 B", "fc")
            return lambda: (read_graph(old), story_lines(compare(old, new)))

        assert_linear(make, 300)


_TAG = re.compile(r"<[^>]*>")
_ROWS = re.compile(r"<TR[^>]*>(.*?)</TR>", re.DOTALL)
_CELLS = re.compile(r"<TD[^>]*>(.*?)</TD>", re.DOTALL)
_PIECES = st.lists(st.sampled_from(["<", ">", "<TR>", "</TR>", "<TD>", "</TD>", "x", "<BR/>"]))


@given(_PIECES)
def test_the_linear_readers_read_as_the_patterns_did(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert strip_tags(text) == _TAG.sub("", text)
    expected = tuple(
        " ".join(_table_words([_TAG.sub("", c) for c in _CELLS.findall(row)]))
        for row in _ROWS.findall("<TABLE" + text)
    )
    assert label_rows("<TABLE" + text) == expected


def _table_words(cells: list[str]) -> list[str]:
    words: list[str] = []
    for text in cells:
        if text:
            words.append(text)
        elif not words or words[-1] != "[bar]":
            words.append("[bar]")
    return words


def head_inserted(count: int) -> str:
    """:func:`sequential` of ``count`` ReLUs with a GELU inserted in front of them: each
    ReLU moves one index on (``@0`` -> ``@1``) and is renumbered."""
    text = sequential(count + 1, "relu")
    text = re.sub(r"relu_(\d+)\b", lambda m: f"relu_{int(m[1]) - 1}", text)
    text = text.replace('tl_op="relu"];\n  "relu_1"', 'tl_op="gelu"];\n  "relu_1"', 1)
    return text.replace("relu_0", "gelu_1")


def test_a_head_insert_before_alike_modules_reads_as_one_insert_and_is_linear() -> None:
    # Alike siblings are aligned run by run: one by one, 16,000 of them cost the square.
    lines = story_lines(compare(sequential(5, "relu"), head_inserted(5)))
    # The ReLUs only shifted index because a block went in before them: no edit of theirs.
    assert lines == ["added gelu_1 @0"]

    def make(count: int) -> Callable[[], object]:
        old, new = sequential(count, "relu"), head_inserted(count)
        return lambda: story_lines(compare(old, new))

    assert_linear(make, 1_000)
