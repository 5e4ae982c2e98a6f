"""Hostile or damaged ``.gv`` files: the readers and the structural diff are linear in
their input and never recurse on its depth (issue 22, item 8).

Linear is checked as a ratio in one run: the same work on 1x and 8x the input, each
timed (CPU time) at its best of a few repeats. Linear work gives a ratio near 8; the quadratic
paths these tests guard against gave 30 to 60 at these sizes, so the bound of 20
leaves room for a busy machine without letting a quadratic path through.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_tlgraph.cli import main
from pytest_tlgraph.diff.dotparse import MAX_NESTING, DotParseError, parse_gv
from pytest_tlgraph.diff.graph import read_graph
from pytest_tlgraph.diff.pairing import pair_graphs
from pytest_tlgraph.diff.view.comparison import compare, compare_graphs, union_order
from pytest_tlgraph.diff.view.drawing import graph_diff
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.draw.dot import emit
from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]

SCALE = 8
#: Largest ratio of the 8x time to the 1x time that passes (quadratic gives about 64).
MAX_RATIO = 20
DEPTH = 1_500

HEAD = (
    "digraph tlgraph {\n"
    '  graph [label=<Chain>, fontcolor="#1A1A1A", fontname="Helvetica", fontsize="10", '
    'bgcolor="#FFFFFF", labelloc="t", nodesep="0.25", rankdir="BT", ranksep="0.35", '
    'tl_schema="0.5"];\n'
    '  node [shape="box", style="rounded,filled", color="#5A6270", fontcolor="#1A1A1A", '
    'fontname="Helvetica", fontsize="10", penwidth="1", margin="0.11,0.055"];\n'
    '  edge [color="#5A6270", penwidth="1", arrowsize="0.6"];\n'
)
CLUSTER_ATTRS = (
    'style="rounded,dashed", color="#9AA3AF", fontcolor="#1A1A1A", fontname="Helvetica", '
    'fontsize="10", labeljust="l"'
)


def chain(count: int, op: str, shape: str, module: str | None = None, first: int = 1) -> str:
    """Canonical DOT of ``count`` ops in a line: ``<op>_1 -> <op>_2 -> ...`` (numbered
    from ``first``), each with a shape row and, when ``module`` is given, that module row
    and address."""
    ids = [f"{op}_{i}" for i in range(first, first + count)]
    rows = f"<BR/>{shape}" + (f"<BR/>@{module}" if module else "")
    schema = (f'tl_addr="{module}", ' if module else "") + f'tl_kind="op", tl_op="{op}"'
    lines = [HEAD]
    lines += [f'  "{i}" [label=<<B>{i}</B>{rows}>, fillcolor="#F3F4F6", {schema}];\n' for i in ids]
    lines += [f'  "{a}" -> "{b}";\n' for a, b in pairwise(ids)]
    lines.append("}\n")
    return "".join(lines)


def nested(dot: str, member: str, depth: int = DEPTH) -> str:
    """``dot`` with ``depth`` clusters nested one in the other around node ``member``,
    written as ``dot.emit`` writes nested clusters; the member's address is the
    innermost frame's below it (``n1499.fc``)."""
    assert dot.endswith("\n}\n")
    head = f'  "{member}" ['
    start = dot.index(head)
    end = dot.index("\n", start)
    line = re.sub(r'tl_addr="([^"]*)"', rf'tl_addr="n{depth - 1}.\1"', dot[start:end])
    dot = dot[:start] + line + dot[end:]
    lines = []
    for level in range(depth):
        indent = "  " * (level + 1)
        lines.append(f'{indent}subgraph "cluster_n{level}" {{')
        lines.append(
            f"{indent}  graph [label=<@n{level} (Sequential)>, {CLUSTER_ATTRS}, "
            f'tl_addr="n{level}", tl_kind="module", tl_type="Sequential"];'
        )
    lines.append("  " * (depth + 1) + f'"{member}";')
    lines += ["  " * (level + 1) + "}" for level in reversed(range(depth))]
    return dot[: -len("}\n")] + "\n".join(lines) + "\n}\n"


def best_seconds(work: Callable[[], object], repeats: int = 3) -> float:
    """The least CPU time of ``repeats`` runs of ``work`` (CPU time, not wall time: on a
    shared machine the wait for a core would swamp a millisecond's work)."""
    best = float("inf")
    gc.collect()
    gc.disable()  # the cyclic collector's passes grow with the heap, not with the work
    try:
        for _ in range(repeats):
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def assert_linear(
    make: Callable[[int], Callable[[], object]], size: int, large_runs: int = 2
) -> None:
    """``make(n)`` builds the work on input size ``n``; it must scale linearly. The
    large input is timed best of ``large_runs`` (more where one run is short, so a busy
    neighbour on the machine cannot spoil every run)."""
    small, large = make(size), make(size * SCALE)
    ratio = best_seconds(large, large_runs) / best_seconds(small, 5)
    assert ratio < MAX_RATIO, f"{SCALE}x the input took {ratio:.1f}x the time"


# -- depth ------------------------------------------------------------------------------


def test_clusters_nested_1500_deep_are_read_diffed_and_written_back() -> None:
    text = nested(chain(3, "linear", "2x4, 32 B", "fc"), "linear_2")
    parsed = parse_gv(text)
    assert len(parsed.graph.clusters) == DEPTH
    assert emit(parsed.graph) == text  # written back byte for byte, without recursion
    graph = read_graph(text)
    assert graph.nodes["linear_2"].cluster == f"cluster_n{DEPTH - 1}"
    assert len(graph.cluster_path("linear_2")) == DEPTH
    assert graph.nodes["linear_2"].address == f"n{DEPTH - 1}.fc"
    plain = chain(3, "linear", "2x4, 32 B", "fc")
    for context in (None, 2):  # the whole union, and the changes with their context
        drawing = graph_diff(text, plain, context=context)
        assert len(drawing.clusters) == DEPTH
        assert drawing.dot.count("subgraph ") == DEPTH
    comparison = compare(text, plain)
    assert len(comparison.clusters_removed) == DEPTH
    assert [(was, now) for _, was, now in comparison.moved] == [(f"n{DEPTH - 1}.fc", "fc")]


def test_a_node_moved_out_of_its_frames_pairs_with_itself() -> None:
    plain = chain(3, "linear", "2x4, 32 B", "fc")
    comparison = compare(nested(plain, "linear_2", 2), plain)
    assert comparison.pairing.pairs == {n: n for n in ("linear_1", "linear_2", "linear_3")}
    assert comparison.moved == (("linear_2", "n1.fc", "fc"),)
    assert not comparison.edges_added and not comparison.edges_removed


def test_tlgraph_diff_of_a_1500_deep_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = chain(3, "linear", "2x4, 32 B", "fc")
    (tmp_path / "old.gv").write_text(nested(plain, "linear_1"), encoding="utf-8")
    (tmp_path / "new.gv").write_text(plain, encoding="utf-8")
    out_gv = tmp_path / "diff.gv"
    argv = ["diff", str(tmp_path / "old.gv"), str(tmp_path / "new.gv"), "-o", str(out_gv)]
    assert main(argv) == 1  # they differ
    out, err = capsys.readouterr()
    assert err == ""
    # The innermost frame holds the one op: the removed block is named once, by its op
    # (a module of one op drawn on its own reads as its op), not frame by frame.
    assert out.splitlines() == [f"wrote {out_gv}", f"removed linear_1 @n{DEPTH - 1}"]
    assert out_gv.read_text(encoding="utf-8").count("subgraph ") == DEPTH


def test_the_fixture_reports_a_1500_deep_stored_file_as_a_change(
    stored: pytest.Pytester,
) -> None:
    gv = snapshot_dir(stored) / "test_mlp.gv"
    gv.write_text(nested(gv.read_text(encoding="utf-8"), "linear_1"), encoding="utf-8")
    result = stored.runpytest()  # the structural diff drawing is made, too
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "RecursionError" not in out
    assert "structural diff drawing: tlgraph-results/test_graph/test_mlp-graphdiff.png" in out
    result.stdout.fnmatch_lines([f"*removed linear_1 @n{DEPTH - 1}*"])
    assert out.count(f"removed linear_1 @n{DEPTH - 1}") <= 2  # named once (story, summary)
    assert len(out) < 20_000  # bounded: no line per frame


# -- damaged files: one line ------------------------------------------------------------


def test_a_damaged_file_is_one_line_in_tlgraph_diff(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = chain(3, "linear", "2x4, 32 B", "fc")
    damaged = plain.replace('"linear_2" [label', '"linear_2 [label', 1)
    (tmp_path / "old.gv").write_text(damaged, encoding="utf-8")
    (tmp_path / "new.gv").write_text(plain, encoding="utf-8")
    assert main(["diff", str(tmp_path / "old.gv"), str(tmp_path / "new.gv")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("tlgraph diff: error: cannot diff")
    assert "line 6" in err  # the statement the stray quote opened


# -- linear time ------------------------------------------------------------------------


def _stray_quote(count: int) -> str:
    """A chain with one stray ``"`` in its first node: every later line joins the
    statement it opens, up to the end of the file."""
    return chain(count, "linear", "2x4, 32 B", "fc").replace('"linear_1" [', '"linear_1 [', 1)


@pytest.mark.parametrize("reader", [parse_gv, read_graph], ids=["parse_gv", "read_graph"])
def test_one_stray_quote_keeps_the_reader_linear(reader: Callable[[str], object]) -> None:
    def make(count: int) -> Callable[[], object]:
        text = _stray_quote(count)

        def work() -> None:
            with pytest.raises(DotParseError, match="line 5"):
                reader(text)

        return work

    assert_linear(make, 2_000)  # 240 KB against 2 MB (830 KB took 6.8 s)


def test_graph_diff_of_every_op_renamed_is_linear() -> None:
    # No old node pairs with a new one: each is drawn removed, beside the added ones.
    def make(count: int) -> Callable[[], object]:
        old, new = chain(count, "linear", "2x16, 128 B"), chain(count, "matmul", "2x32, 256 B")
        return lambda: graph_diff(old, new)

    assert_linear(make, 1_000)


def test_pairing_many_calls_of_one_module_is_linear() -> None:
    # A module called in a loop: every op of one function in one module, all renumbered.
    def make(count: int) -> Callable[[], object]:
        old = read_graph(chain(count, "relu", "2x4, 32 B", "act"))
        new = read_graph(chain(count, "relu", "2x4, 32 B", "act", first=count + 1))
        return lambda: pair_graphs(old, new)

    pairing = pair_graphs(
        read_graph(chain(3, "relu", "2x4, 32 B", "act")),
        read_graph(chain(3, "relu", "2x4, 32 B", "act", first=4)),
    )
    assert pairing.pairs == {"relu_1": "relu_4", "relu_2": "relu_5", "relu_3": "relu_6"}
    assert_linear(make, 2_000)


def test_comparing_a_long_changed_chain_is_linear() -> None:
    # Every node changed (another shape): the comparison and its story over all of them.
    def make(count: int) -> Callable[[], object]:
        old = read_graph(chain(count, "linear", "2x16, 128 B", "fc"))
        new = read_graph(chain(count, "linear", "2x32, 256 B", "fc"))
        return lambda: story_lines(compare_graphs(old, new))

    assert story_lines(compare(*(chain(3, "linear", s, "fc") for s in ("2x16", "2x32")))) == [
        "3 nodes @fc: shape 2x16 -> 2x32"
    ]
    assert_linear(make, 1_000)


def _inserted_union(new: list[str], old: list[str]) -> list[str]:
    """The structural diff's order as 0.2 built it: each old-only item inserted right
    after its old predecessor in the list built so far (quadratic; the reference)."""
    out = list(new)
    previous: str | None = None
    for item in old:
        if item not in out:
            out.insert(out.index(previous) + 1 if previous is not None else 0, item)
        previous = item
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text("abcdefghijklm", max_size=1), unique=True),
    st.lists(st.text("abcdefghijklm", max_size=1)),
)
def test_the_linear_union_orders_items_as_insertion_did(new: list[str], old: list[str]) -> None:
    assert union_order(new, old) == _inserted_union(new, old)


@pytest.mark.parametrize("reader", [parse_gv, read_graph], ids=["parse_gv", "read_graph"])
def test_nesting_past_the_bound_is_one_line_and_never_reindented(
    reader: Callable[[str], object],
) -> None:
    reader(nested(chain(2, "linear", "2x4, 32 B"), "linear_1", MAX_NESTING))
    # 100,000 levels without indentation: re-indented canonically they would be 10 GB.
    opening = f'subgraph "c" {{\ngraph [label=<@c (Sequential)>, {CLUSTER_ATTRS}];\n'
    text = chain(2, "linear", "2x4, 32 B")[: -len("}\n")] + opening * 100_000 + "}\n"
    with pytest.raises(DotParseError, match=r"^line \d+: clusters nested deeper than 2,000"):
        reader(text)
