"""Baselines stored before the drawing schema (0.3: no ``tl_`` attributes), run in
pytester: the call fails with one true line naming the cause and the remedy, never a
story of added or removed nodes, and an update writes this version's drawing."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]

_TL_ATTRIBUTE = re.compile(r', (?:tl_[a-z]+|comment)="(?:[^"\\]|\\.)*"')

CALLS = textwrap.dedent(
    """
    from tinymodels import MLP

    def test_mlp(tlgraph_snapshot):
        tlgraph_snapshot(MLP())
        tlgraph_snapshot(MLP(), depth=0)
    """
)


def _as_stored_by_0_3(gv: Path) -> None:
    """``gv`` as 0.3 wrote it: no structured attribute, no schema, no signature."""
    text = gv.read_text(encoding="utf-8")
    stripped = _TL_ATTRIBUTE.sub("", text)
    assert "tl_" not in stripped and stripped != text
    gv.write_text(stripped, encoding="utf-8")


def test_a_0_3_baseline_fails_with_one_true_line_and_update_rewrites_it(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_graph=CALLS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    folder = snapshot_dir(project)
    stored = sorted(folder.glob("*.gv"))
    assert len(stored) == 2
    good = {gv: gv.read_bytes() for gv in stored}
    for gv in stored:
        _as_stored_by_0_3(gv)
    result = project.runpytest("-rN")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    line = (
        "stored with the 0.3 schema (no structured attributes): accept with tlgraph "
        "accept <nodeid>, or run pytest --snapshot-update"
    )
    assert out.count("structure (snapshot -> received):") == 2
    # Both calls' story is that one line (the terminal may wrap it).
    assert " ".join(out.split()).count(f"structure (snapshot -> received): {line}") == 2
    # The story is that line and nothing else: no node reads as added, removed or changed.
    for false in ("added ", "removed ", "now runs", "no longer runs", "predates", "inside:"):
        assert false not in out, false
    # Nothing pairs across two schemas: no diff drawing shows a false change.
    flat = " ".join(out.split())
    assert (
        flat.count(
            "structural diff drawing not made: the stored drawing has no schema (0.3), the "
            "received the 0.5 schema"
        )
        == 2
    )
    assert not list((project.path / "tlgraph-results").rglob("*graphdiff*"))
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert {gv: gv.read_bytes() for gv in stored} == good
    project.runpytest().assert_outcomes(passed=1)


def test_tlgraph_diff_refuses_drawings_of_two_schemas_naming_both(tmp_path: Path) -> None:
    import torch

    from pytest_tlgraph import capture
    from tests.integration.test_cli import tlgraph
    from tests.models import MLP, seeded

    new = capture(seeded(MLP()), torch.zeros(2, 8)).draw(depth=0).dot
    (tmp_path / "new.gv").write_text(new, encoding="utf-8")
    (tmp_path / "old.gv").write_text(_TL_ATTRIBUTE.sub("", new), encoding="utf-8")
    done = tlgraph("diff", "old.gv", "new.gv", "-o", "diff.png", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "tlgraph diff: error: cannot diff old.gv (no schema: 0.3) and new.gv (schema 0.5): "
        "drawings of two schemas do not pair; redraw the older one with this version "
        "(pytest --snapshot-update, or tlgraph draw)"
    )
    assert not (tmp_path / "diff.png").exists()
