from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_tlgraph.draw.fontmetrics import (
    DEFAULT_MARGIN,
    estimate_label_box,
    text_width_points,
)

# The estimate reproduces graphviz-pure's arithmetic, so the only expected
# disagreement is the renderer printing sizes in inches to 4 decimals; 0.1% (or
# 0.0005 in on tiny boxes) leaves room for that and still catches a wrong width
# table, line-height rule or margin.
REL_TOLERANCE = 0.001
ABS_TOLERANCE_IN = 0.0005


class Case(NamedTuple):
    rows: list[str]
    fontsize: float = 10.0
    bold_first: bool = True
    margin: tuple[float, float] = DEFAULT_MARGIN


CASES = [
    Case(["linear_1"]),
    Case(["linear_1", "(1, 32), 128 B", "@fc1"]),
    Case(["conv2d_3", "(8, 16, 32, 32), 512 KB", "kernel_size=3, stride=1", "@encoder.block.0"]),
    Case(["matmul_12 (x4)", "4-&gt;2"]),
    Case(["add", "a &amp; b &lt;= c &gt; d &quot;q&quot;"]),
    Case(["escapes", "C:\\\\tmp\\\\x&nbsp;y"]),
    Case(["params: 330 (weight 10\u00d732, bias 10)", "x → y…", "µs é"]),
    Case(["WIDE TITLE WITH CAPITALS MMMM WWWW", "i", "l", "j"]),
    Case(["t", "", "row after an empty row"]),
    Case(["trailing break", "row", ""]),
    Case([f"row {i}: {'x' * (i * 3)}" for i in range(8)]),
    Case(["plain title", "plain row", "another plain row"], bold_first=False),
    Case(["plain single"], bold_first=False),
    Case(["fontsize 14", "(1, 10), 40 B", "@head"], fontsize=14.0),
    Case(["fontsize 8", "{[(|)]} ~`^_@#$%"], fontsize=8.0),
    Case(["margins", "0.2 by 0.1"], margin=(0.2, 0.1)),
]


def _dot(cases: Sequence[Case], *, floor: bool) -> tuple[str, list[tuple[float, float]]]:
    lines = ["digraph G {"]
    estimates = []
    for index, case in enumerate(cases):
        cells = list(case.rows)
        if case.bold_first:
            cells[0] = f"<B>{cells[0]}</B>"
        size = "" if floor else ", width=0.01, height=0.01"
        lines.append(
            f'n{index} [shape=box, style="rounded,filled", fontname="Helvetica", '
            f'fontsize={case.fontsize:g}, margin="{case.margin[0]:g},{case.margin[1]:g}"{size}, '
            f"label=<{'<BR/>'.join(cells)}>];"
        )
        estimates.append(
            estimate_label_box(
                case.rows, fontsize=case.fontsize, bold_first=case.bold_first, margin=case.margin
            )
        )
    lines.append("}")
    return "\n".join(lines), estimates


def _render_sizes(source: str) -> list[tuple[float, float]]:
    exe = shutil.which("graphviz-pure")
    if exe is None:
        pytest.skip("graphviz-pure is not installed")
    result = subprocess.run(
        [exe, "-Tjson", "-Gdpi=96"], input=source, capture_output=True, text=True, check=True
    )
    graph = json.loads(result.stdout)
    by_name = {obj["name"]: obj for obj in graph["objects"]}
    return [
        (float(by_name[f"n{i}"]["width"]), float(by_name[f"n{i}"]["height"]))
        for i in range(len(by_name))
    ]


def test_estimate_matches_graphviz_pure() -> None:
    source, estimates = _dot(CASES, floor=False)
    rendered = _render_sizes(source)
    for case, estimate, actual in zip(CASES, estimates, rendered, strict=True):
        for est, act in zip(estimate, actual, strict=True):
            assert est == pytest.approx(act, rel=REL_TOLERANCE, abs=ABS_TOLERANCE_IN), case


def test_renderer_applies_the_minimum_size_we_leave_out() -> None:
    source, estimates = _dot(CASES, floor=True)
    rendered = _render_sizes(source)
    for estimate, actual in zip(estimates, rendered, strict=True):
        floored = (max(estimate[0], 0.75), max(estimate[1], 0.5))
        assert floored == pytest.approx(actual, rel=REL_TOLERANCE, abs=ABS_TOLERANCE_IN)


def test_known_widths() -> None:
    assert text_width_points("W" * 10, fontsize=10, bold=True) == pytest.approx(94.38, abs=0.01)
    assert text_width_points("a", fontsize=10) == pytest.approx(5.56, abs=0.01)
    assert text_width_points("i", fontsize=10, bold=True) == pytest.approx(2.78, abs=0.01)
    assert text_width_points("", fontsize=10) == 0.0


def test_fallback_widths() -> None:
    space = text_width_points(" ", fontsize=10)
    assert text_width_points("\u00d7", fontsize=10) == pytest.approx(2 * space)
    assert text_width_points("→", fontsize=10) == pytest.approx(3 * space)
    assert text_width_points("…", fontsize=10, bold=True) == pytest.approx(3 * space)
    assert text_width_points("\t\x7f", fontsize=10) == 0.0


def test_box_arithmetic() -> None:
    width, height = estimate_label_box(["W" * 10])
    assert width == pytest.approx((94.38 + 15.84) / 72, abs=1e-4)
    assert height == pytest.approx((12 + 7.92) / 72)
    # Bold title: rows stack at the bare font size; plain labels at 1.2x.
    assert estimate_label_box(["a", "b", "c"])[1] == pytest.approx((30 + 7.92) / 72)
    assert estimate_label_box(["a", "b", "c"], bold_first=False)[1] == pytest.approx(
        (36 + 7.92) / 72
    )
    assert estimate_label_box(["a", "b", ""]) == estimate_label_box(["a", "b"])


def test_entities_count_as_one_character() -> None:
    assert estimate_label_box(["t", "a &lt; b"]) == estimate_label_box(["t", "a < b"])
    assert estimate_label_box(["t", "&amp;&#215;"]) == estimate_label_box(["t", "&\u00d7"])


def test_no_rows_refused() -> None:
    with pytest.raises(ValueError):
        estimate_label_box([])


printable = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E))


@given(printable, printable, st.booleans())
def test_width_is_additive(a: str, b: str, bold: bool) -> None:
    joined = text_width_points(a + b, fontsize=10, bold=bold)
    parts = text_width_points(a, fontsize=10, bold=bold) + text_width_points(
        b, fontsize=10, bold=bold
    )
    assert joined == pytest.approx(parts)


@given(printable, st.floats(min_value=1, max_value=72))
def test_width_scales_with_fontsize(text: str, fontsize: float) -> None:
    scaled = text_width_points(text, fontsize=fontsize)
    assert scaled == pytest.approx(text_width_points(text, fontsize=1) * fontsize)


@given(st.lists(printable, min_size=1, max_size=6), printable)
def test_extra_row_never_shrinks_the_box(rows: list[str], extra: str) -> None:
    before = estimate_label_box(rows)
    after = estimate_label_box([*rows, extra or "x"])
    assert after[0] >= before[0]
    assert after[1] >= before[1] or len(rows) == 1
