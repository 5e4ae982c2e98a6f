"""Item 11 of "never misreport a run": a failure raised by an option check or by the
capture shows the user's frame and the message, none of the plugin's own frames
(REVIEW.md §2.5); ``--full-trace`` still shows every frame."""

from __future__ import annotations

import re

import pytest

pytest_plugins = ["pytester"]

TYPOS = """
import pytest
import torch
from tinymodels import MLP

def test_colour(tlgraph_snapshot):
    tlgraph_snapshot(MLP(), colour_by="flops")

def test_flop(tlgraph_snapshot):
    tlgraph_snapshot(MLP(), color_by="flop")

@pytest.mark.tlgraph(colr_by="flops")
def test_marker(tlgraph_snapshot):
    tlgraph_snapshot(MLP())
"""

#: A frame line of pytest's report inside the plugin's package (its path, then a line).
PLUGIN_FRAME = re.compile(r"pytest_tlgraph[/\\][\w/\\]*\.py:\d+")


def _failure_lines(out: str) -> list[str]:
    """The lines of the ERRORS and FAILURES sections."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"=+ (ERRORS|FAILURES) =+", line))
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return lines[start:end]


def test_three_typos_show_the_users_frames_and_the_messages(project: pytest.Pytester) -> None:
    project.makepyfile(test_typos=TYPOS)
    result = project.runpytest()
    result.assert_outcomes(failed=2, errors=1)
    shown = _failure_lines(result.stdout.str())
    assert not [line for line in shown if PLUGIN_FRAME.search(line)], "\n".join(shown)
    assert len(shown) < 40, "\n".join(shown)
    result.stdout.fnmatch_lines(
        [
            '>       tlgraph_snapshot(MLP(), colour_by="flops")',
            "E       TypeError: tlgraph_snapshot() got unexpected keyword argument(s) 'colour_by'"
            " (did you mean 'color_by'?)*",
            "test_typos.py:6: TypeError",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            '>       tlgraph_snapshot(MLP(), color_by="flop")',
            "E       *EncodingRefusal: ?encoding_source_invalid? color_by='flop'*"
            "(did you mean 'flops'?)*",
            "test_typos.py:9: EncodingRefusal",
        ]
    )
    result.stdout.fnmatch_lines(
        ["E   TypeError: @pytest.mark.tlgraph got unexpected keyword argument(s) 'colr_by'*"]
    )
    # The short summary still gives every message, the marker's at its test.
    result.stdout.fnmatch_lines(
        [
            "FAILED test_typos.py::test_colour - TypeError: tlgraph_snapshot()*",
            "FAILED test_typos.py::test_flop - *EncodingRefusal*",
            "ERROR test_typos.py::test_marker - TypeError: @pytest.mark*",
        ],
        consecutive=False,
    )


def test_full_trace_still_shows_the_plugins_frames(project: pytest.Pytester) -> None:
    project.makepyfile(test_typos=TYPOS)
    result = project.runpytest("--full-trace")
    result.assert_outcomes(failed=2, errors=1)
    out = result.stdout.str()
    for frame in ("snapshots/checks.py", "draw/encoding/sources.py", "plugin.py"):
        assert re.search(rf"pytest_tlgraph[/\\]{frame}:\d+", out), frame


def test_a_model_that_raises_shows_its_own_frame_not_the_capture(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_broken="""
        import torch

        class Broken(torch.nn.Module):
            def forward(self, x):
                return x @ torch.zeros(5, 5)

        def test_broken(tlgraph_snapshot):
            tlgraph_snapshot(Broken(), torch.zeros(1, 4))
        """
    )
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    shown = _failure_lines(result.stdout.str())
    assert not [line for line in shown if PLUGIN_FRAME.search(line)], "\n".join(shown)
    result.stdout.fnmatch_lines(
        [
            ">       return x @ torch.zeros(5, 5)",
            "*RuntimeError: mat1 and mat2 shapes cannot be multiplied*",
            "The above exception was the direct cause of the following exception:",
            "*tlgraph_snapshot(Broken(), torch.zeros(1, 4))",
            "E       pytest_tlgraph.errors.TraceError: Broken raised RuntimeError during capture*",
        ]
    )
