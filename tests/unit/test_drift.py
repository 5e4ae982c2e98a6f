"""The versions a snapshot records, the drift line, the upgrade kinds of a comparison
(on the corpus's real changes) and how a call is named on the page."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import Comparison, compare
from pytest_tlgraph.review.drift import (
    DECOMPOSITION,
    RENAMED,
    drift_line,
    run_upgrade_line,
    upgrade_kinds,
)
from pytest_tlgraph.review.html import accept_command
from pytest_tlgraph.review.nodeids import call_heading
from pytest_tlgraph.review.outcome import (
    Acceptance,
    CallOutcome,
    Drift,
    Structure,
    Where,
)
from pytest_tlgraph.snapshots.extensions import Provenance, render_snapshot_png
from pytest_tlgraph.snapshots.versions import decode_versions, encode_versions, running_versions
from tests.corpus.changes import CHANGES


def test_the_versions_round_trip_and_a_damaged_value_reads_empty() -> None:
    versions = {"torch": "2.5.1", "pytest-tlgraph": "0.4.0", "timm": "1.0.3"}
    text = encode_versions(versions)
    assert text == "pytest-tlgraph 0.4.0; torch 2.5.1; timm 1.0.3"
    assert decode_versions(text) == versions
    assert decode_versions(None) == {}
    assert decode_versions("torch") == {}


def test_a_snapshot_png_records_the_running_versions_outside_the_dot() -> None:
    dot = capture(nn.Linear(2, 3), torch.zeros(1, 2)).draw().dot
    png = render_snapshot_png(dot, "pure")
    recorded = dict(Provenance.of(png).versions)
    assert recorded == running_versions()
    assert recorded["torch"] == torch.__version__
    assert torch.__version__ not in dot


def test_the_drift_line_names_each_version_that_moved() -> None:
    assert drift_line({"torch": "2.12.0"}, {"torch": "2.12.0"}) is None
    assert drift_line({"torch": "2.12.0"}, {"torch": "2.13.0"}) == (
        "drawn with torch 2.12.0, now 2.13.0: the change may come from torch, not the model"
    )
    both = drift_line(
        {"transformers": "4.40.0", "torch": "2.12.0"},
        {"torch": "2.13.0", "transformers": "4.41.0"},
    )
    assert both == (
        "drawn with torch 2.12.0, now 2.13.0; transformers 4.40.0, now 4.41.0: the change "
        "may come from torch or transformers, not the model"
    )
    # A library one side does not record says nothing (the test no longer imports it).
    assert drift_line({"timm": "1.0"}, {"torch": "2.13.0"}) is None


def _comparison(name: str, **options: Any) -> Comparison:
    before, after = CHANGES[name]()
    old = capture(before.model.eval(), before.inputs).draw(**options).dot
    new = capture(after.model.eval(), after.inputs).draw(**options).dot
    return compare(old, new)


@pytest.mark.parametrize("options", [{}, {"collapse": "auto"}])
def test_an_activation_swap_reads_as_an_op_renamed(options: dict[str, Any]) -> None:
    assert upgrade_kinds(_comparison("activation_swapped", **options)) == [RENAMED]


@pytest.mark.parametrize(
    "name", ["kernel_changed", "width_changed", "block_inserted", "stem_kernel_changed"]
)
@pytest.mark.parametrize("options", [{}, {"collapse": "auto"}])
def test_a_model_change_is_no_upgrade_kind(name: str, options: dict[str, Any]) -> None:
    """A kernel edit hidden in a box (``conv2d padding (1, 1) -> (2, 2)``) is no rename."""
    assert upgrade_kinds(_comparison(name, **options)) is None


class _Act(nn.Module):
    def __init__(self, written_out: bool) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.written_out = written_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc(x)
        return x * torch.sigmoid(x) if self.written_out else nn.functional.silu(x)


def test_an_op_decomposed_otherwise_reads_as_a_decomposition() -> None:
    x = torch.zeros(1, 4)
    c = compare(capture(_Act(False), x).draw().dot, capture(_Act(True), x).draw().dot)
    assert upgrade_kinds(c) == [RENAMED, DECOMPOSITION]


def test_the_run_line_needs_every_failure_to_be_an_upgrade_kind() -> None:
    structure = Structure("op renamed", (), (), (), upgrade=(RENAMED,))
    renamed = CallOutcome("t.py::a", "a", "failed", structure=structure)
    other = CallOutcome("t.py::b", "b", "failed", structure=replace(structure, upgrade=None))
    passed = CallOutcome("t.py::c", "c", "passed")
    missing = CallOutcome("t.py::d", "d", "missing")
    assert run_upgrade_line([passed]) is None
    assert run_upgrade_line([renamed, other]) is None
    drift = Drift({"torch": "2.12.0"}, {"torch": "2.13.0"}, "drawn with torch 2.12.0")
    assert run_upgrade_line([replace(renamed, drift=drift), missing]) is None
    line = run_upgrade_line([renamed, passed, replace(renamed, drift=drift)])
    assert line == (
        "all 2 failing calls changed only in ways an upgrade of torch or the model library "
        "changes a drawing (op renamed); the baselines were drawn with other versions "
        "(torch 2.12.0 -> 2.13.0): if one was upgraded, review that before the models"
    )


def test_a_call_is_named_so_two_calls_of_a_test_differ() -> None:
    nodeid = "test_models.py::test_rescnn"
    assert call_heading(nodeid, "depth1", "test_rescnn[depth1]") == (
        'test_models.py::test_rescnn, call "depth1"'
    )
    assert call_heading(nodeid, 0, "test_rescnn") == nodeid
    assert call_heading(nodeid, 0, "test_rescnn", numbered=True) == f"{nodeid}, call 1"
    assert call_heading(nodeid, 1, "test_rescnn.1") == f"{nodeid}, call 2"
    # A record before 0.4 has no call: it is read from the snapshot's name.
    assert call_heading(nodeid, None, "test_rescnn[depth1]") == f'{nodeid}, call "depth1"'
    assert call_heading(nodeid, None, "test_rescnn.1") == f"{nodeid}, call 2"


def test_the_accept_command_names_one_call_from_the_rootdir() -> None:
    accept = Acceptance("r.gv", "0" * 64, False, None, None, None)
    record = CallOutcome(
        "tests/test_m.py::test_zoo[mlp a]", "test_zoo[mlp a][depth 1]", "failed",
        call="depth 1", accept=accept, where=Where(results_from_rootdir="build/tlgraph"),
    )  # fmt: skip
    assert accept_command(record) == (
        "tlgraph accept --results build/tlgraph 'tests/test_m.py::test_zoo[mlp a]' --call 'depth 1'"
    )
    record = replace(
        record,
        name="test_zoo[mlp a].1",
        call=1,
        where=Where(results_from_rootdir="tlgraph-results"),
    )
    assert accept_command(record) == (
        "tlgraph accept 'tests/test_m.py::test_zoo[mlp a]' --call 'test_zoo[mlp a].1'"
    )
    assert accept_command(replace(record, accept=None)) is None  # its files were not saved


def test_a_snapshot_of_a_transformers_model_records_the_library() -> None:
    """The corpus's BERT: transformers is imported, so its version is recorded too."""
    import transformers

    from tests.corpus.hf_models import bert

    case = bert()
    dot = capture(case.model.eval(), case.inputs).draw(collapse="auto").dot
    recorded = dict(Provenance.of(render_snapshot_png(dot, "pure")).versions)
    assert recorded["transformers"] == transformers.__version__
    assert transformers.__version__ not in dot
