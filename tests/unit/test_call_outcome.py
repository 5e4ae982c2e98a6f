"""The one record of a call (issue 40): a frozen :class:`CallOutcome`, written once as
versioned JSON and read back whole, or refused with one line naming the file and the
field. Built from real changes of corpus models, drawn plain and collapsed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_tlgraph import capture
from pytest_tlgraph.diff.edits import Edit
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.results.artifacts import RECORDS, ResultsDir
from pytest_tlgraph.review.dotdiff import unified_dot_diff
from pytest_tlgraph.review.outcome import (
    SCHEMA,
    Acceptance,
    CallOutcome,
    Drift,
    Where,
    outcome_from_json,
    outcome_to_json,
    read_outcomes,
    write_outcome,
)
from pytest_tlgraph.review.report import DotOutcome, build_report
from pytest_tlgraph.snapshots.failure import structure_of
from tests.corpus.changes import CHANGES, MOVES


def _outcome(name: str, **options: Any) -> CallOutcome:
    """The outcome of a failing call on the corpus change ``name``."""
    before, after = {**CHANGES, **MOVES}[name]()
    old = capture(before.model.eval(), before.inputs).draw(**options).dot
    new = capture(after.model.eval(), after.inputs).draw(**options).dot
    comparison = compare(old, new)
    dot = DotOutcome(path="__snapshots__/t/test_x.gv", expected=old, received=new, passed=False)
    report = build_report(
        name="test_x", nodeid="t.py::test_x", dot=dot, png=None,
        diff=list(unified_dot_diff(old, new)), full_diff_path="t/test_x.dot.diff",
        state_text=None, comparison=comparison, drift="drawn with torch 2.12.0, now 2.13.0",
    )  # fmt: skip
    places = tuple((0, 10 * i, 40, 20) if i % 2 else None for i in range(len(report.story)))
    return CallOutcome(
        nodeid="t.py::test_x",
        name="test_x",
        verdict="failed",
        call=0,
        report=report,
        places=places,
        notes=("the whole-graph drawing is over the size guard",),
        structure=structure_of(comparison),
        drift=Drift({"torch": "2.12.0"}, {"torch": "2.13.0"}, report.story[0]),
        accept=Acceptance("t/test_x.gv", "ab" * 32, True, "t/test_x.png", "cd" * 32, None),
        images={"graphdiff": "t/test_x-graphdiff.png", "actual": "t/test_x.png"},
        files=("t/test_x-graphdiff.png", "t/test_x.png", "t/test_x.dot.diff"),
        where=Where("/work/p", "/work/p", "/work/p/tlgraph-results", "tlgraph-results"),
    )


CASES = [
    ("block_inserted", {}),
    ("block_inserted", {"collapse": "auto"}),
    ("activation_swapped", {"collapse": "auto"}),
    ("block_removed", {"collapse": "auto"}),
    ("width_changed", {"depth": 1}),
]


@pytest.mark.parametrize(("name", "options"), CASES, ids=[f"{n}-{o}" for n, o in CASES])
def test_an_outcome_reads_back_whole_from_its_record(
    name: str, options: dict[str, Any], tmp_path: Path
) -> None:
    outcome = _outcome(name, **options)
    assert outcome.structure is not None and outcome.structure.edits
    assert all(isinstance(edit, Edit) for edit in outcome.structure.edits)
    data = outcome_to_json(outcome)
    assert data["schema"] == SCHEMA
    assert outcome_from_json(json.loads(json.dumps(data))) == outcome
    results = ResultsDir(tmp_path)
    write_outcome(results, results.stem(Path("t.py"), "test_x"), outcome)
    ((path, read),) = read_outcomes(tmp_path)
    assert read == outcome and path.suffix == ".outcome" and path.parent.name == RECORDS
    assert read.headline == outcome.structure.headline
    assert read.upgrade == outcome.structure.upgrade


def test_the_edits_kept_are_the_comparisons_own() -> None:
    before, after = CHANGES["block_inserted"]()
    old = capture(before.model.eval(), before.inputs).draw(collapse="auto").dot
    new = capture(after.model.eval(), after.inputs).draw(collapse="auto").dot
    comparison = compare(old, new)
    assert structure_of(comparison).edits == comparison.edits


BROKEN: list[tuple[str, object, str]] = [
    ("schema", "tlgraph-call/0", "schema"),
    ("schema", None, "schema"),
    ("verdict", "maybe", "verdict"),
    ("nodeid", None, "'nodeid'"),
    ("report.story", [1], "'report.story'"),
    ("report.left_out", {"count": "3"}, "'report.left_out.count'"),
    ("places", [[0, 0, -1, 2]], "'places'"),
    ("structure.edits", [{"kind": "arg_changed"}], "'structure.edits'"),
    (
        "structure.edits",
        [{"kind": "renamed", "at": "fc", "old": {"x": 1}, "type": "Linear"}],
        "'old'",
    ),
    ("structure.replaced", [["a", 1]], "'structure.replaced'"),
    ("drift.stored", {"torch": 2}, "'drift.stored'"),
    ("accept.png_compared", 1, "'accept.png_compared'"),
    ("where", [], "'where'"),
    ("images", {"actual": None}, "'images'"),
]


@pytest.mark.parametrize(("field", "value", "named"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_record_that_does_not_read_is_left_out_with_one_line(
    field: str, value: object, named: str, tmp_path: Path
) -> None:
    outcome = _outcome("width_changed")
    results = ResultsDir(tmp_path)
    write_outcome(results, results.stem(Path("t.py"), "test_x"), outcome)
    (path,) = (tmp_path / RECORDS).iterdir()
    data = json.loads(path.read_text())
    *above, last = field.split(".")
    place = data
    for key in above:
        place = place[key]
    place[last] = value
    path.write_text(json.dumps(data))
    damaged: list[str] = []
    assert read_outcomes(tmp_path, damaged) == []
    (line,) = damaged
    assert line.startswith(f"left out the record {path}: ") and named in line, line
    assert line.endswith("rerun pytest to record it again")


def test_an_earlier_versions_records_are_named_once(tmp_path: Path) -> None:
    folder = tmp_path / RECORDS
    folder.mkdir()
    (folder / "t.py%2Ftest_x.json").write_text(json.dumps({"nodeid": "t.py::test_x"}))
    (folder / "t.py%2Ftest_x.call").write_text(json.dumps({"nodeid": "t.py::test_x"}))
    damaged: list[str] = []
    assert read_outcomes(tmp_path, damaged) == []
    assert damaged == [
        f"left out 2 records in {folder} written by an earlier pytest-tlgraph; rerun "
        "pytest to record them again"
    ]


def test_the_calls_are_listed_with_numbers_by_value(tmp_path: Path) -> None:
    """The page, ``tlgraph report`` and the summaries list ``test_x[2]`` before
    ``test_x[10]`` (a file-name order put ``[10]`` first)."""
    from pytest_tlgraph.review.pending import pending_calls

    results = ResultsDir(tmp_path)
    for number in (10, 2, 0, 1, "1²2"):  # ² is no decimal digit: text, never a number
        name = f"test_x[{number}]"
        outcome = CallOutcome(f"t.py::{name}", name, "failed")
        write_outcome(results, results.stem(Path("t.py"), name), outcome)
    write_outcome(
        results, results.stem(Path("t.py"), "ok"), CallOutcome("t.py::ok", "ok", "passed")
    )
    assert [entry.name for entry in pending_calls(tmp_path)] == [
        "test_x[0]", "test_x[1]", "test_x[1²2]", "test_x[2]", "test_x[10]",
    ]  # fmt: skip
