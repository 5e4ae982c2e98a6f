"""The one-line story ``tlgraph report`` prints for a call pending review: the
outcome's headline, read from its typed fields."""

from __future__ import annotations

from pytest_tlgraph.review.outcome import CallOutcome, Structure
from pytest_tlgraph.review.report import Report


def test_the_headline_is_the_comparisons_when_the_dot_was_compared() -> None:
    structure = Structure("added @layer1.2 (BasicBlock): 7 ops", ("a", "b"), (), ())
    report = Report("t", (("structure (snapshot -> received):", ("x",)),), story=("x",))
    call = CallOutcome("t.py::a", "a", "failed", report=report, structure=structure)
    assert call.headline == "added @layer1.2 (BasicBlock): 7 ops"


def test_else_the_story_or_the_first_line_of_the_message() -> None:
    report = Report("t", (("PNG:", ("1 mismatched pixel",)),), story=("PNG only: 1 px",))
    assert CallOutcome("t.py::a", "a", "failed", report=report).headline == "PNG only: 1 px"
    missing = Report("t", (("", ("snapshot a.gv does not exist: ...", "snapshot a.png")),))
    assert CallOutcome("t.py::a", "a", "missing", report=missing).headline == (
        "snapshot a.gv does not exist: ..."
    )
    assert CallOutcome("t.py::a", "a", "passed").headline == "(no summary recorded)"
