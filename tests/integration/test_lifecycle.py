"""The snapshot lifecycle, run in pytester: missing -> update -> pass -> change -> update."""

from __future__ import annotations

import textwrap

import pytest

from pytest_tlgraph import render
from pytest_tlgraph.pixels.pngmeta import read_text_chunks
from tests.integration.project import (
    BASIC_TEST,
    assert_update_refused,
    snapshot_dir,
    snapshot_names,
)

pytest_plugins = ["pytester"]


def test_whole_lifecycle(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    project.makepyfile(test_graph=BASIC_TEST)
    folder = snapshot_dir(project)

    first = project.runpytest()
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*tlgraph snapshot test_mlp does not exist yet*"])
    first.stdout.fnmatch_lines(["*__snapshots__/test_graph/test_mlp.gv does not exist*"])
    assert not folder.exists(), "a missing snapshot must never be created without an update"

    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    dot = (folder / "test_mlp.gv").read_text()
    assert dot.startswith("digraph tlgraph {")
    meta = read_text_chunks((folder / "test_mlp.png").read_bytes())
    assert meta["tlgraph-renderer"].startswith("graphviz-pure ")
    assert len(meta["tlgraph-dot-sha256"]) == 64

    project.runpytest().assert_outcomes(passed=1)

    monkeypatch.setenv("TL_HIDDEN", "32")
    monkeypatch.setenv("TL_BIAS", "0")
    changed = project.runpytest()
    changed.assert_outcomes(failed=1)
    out = changed.stdout.str()
    headings = [
        "structure (snapshot -> received):",
        "DOT diff (- snapshot / + received):",
        "encoding state (received):",
        "PNG:",
    ]
    positions = [out.index(heading) for heading in headings]
    assert positions == sorted(positions), "report sections are out of order"
    # bias=True is the default, not shown but recorded; bias=False is shown: the line
    # names both values. Alike edits share a line.
    assert (
        "  linear_1 @fc1: bias True (default) -> False; params weight 16x8, bias 16 -> "
        "weight 32x8\n" in out
    )
    assert "  2 nodes @fc1, @act: shape 2x16 -> 2x32\n" in out
    assert "--- snapshot" in out and "+++ received" in out
    # The new bias=False row makes fc1 one row taller: the PNG changes size.
    assert "PNG size changed: snapshot 242x445 px, received 242x458 px" in out
    results = project.path / "tlgraph-results"
    for name in ("test_mlp.png", "test_mlp-expected.png", "test_mlp.dot.diff"):
        assert (results / "test_graph" / name).is_file(), name
    html = (results / "report.html").read_text()
    assert "test_graph.py::test_mlp" in html and "data:image/png;base64," in html
    assert (folder / "test_mlp.gv").read_text() == dot, "a failing run must not write"

    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert (folder / "test_mlp.gv").read_text() != dot
    passed = project.runpytest()
    passed.assert_outcomes(passed=1)
    assert not (results / "report.html").exists(), "the previous report must be cleared"
    assert not results.exists(), "a passing run leaves no empty results folder"


def test_args_row_callouts(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import os
        from tinymodels import MLP

        def test_mlp(tlgraph_snapshot):
            tlgraph_snapshot(MLP(), show_redundant_args=os.environ.get("TL_ALL") == "1")
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TL_ALL", "1")
        shown = project.runpytest()
    shown.assert_outcomes(failed=1)
    shown.stdout.fnmatch_lines(
        ["  linear_1 @fc1: now shows in_features=8; now shows out_features=16"]
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TL_ALL", "1")
        project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    hidden = project.runpytest()
    hidden.assert_outcomes(failed=1)
    hidden.stdout.fnmatch_lines(
        ["  linear_1 @fc1: no longer shows in_features=8; no longer shows out_features=16"]
    )


def test_several_calls_are_numbered_and_named(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import torch
        from tinymodels import MLP

        def test_calls(tlgraph_snapshot):
            tlgraph_snapshot(MLP(), torch.zeros(3, 8), name="batch3")
            tlgraph_snapshot(MLP())
            drawing = tlgraph_snapshot(MLP(), view="rolled", png=False)
            assert "linear_1" in drawing.nodes
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    names = snapshot_names(project)
    # syrupy's numbering: an unnamed call takes the count of calls before it.
    assert names == [
        "test_calls.1.gv",
        "test_calls.1.png",
        "test_calls.2.gv",
        "test_calls[batch3].gv",
        "test_calls[batch3].png",
    ]
    project.runpytest().assert_outcomes(passed=1)


def test_unused_snapshots_are_detected_and_foreign_files_survive(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_graph=BASIC_TEST + "\n\ndef test_old(tlgraph_snapshot):\n    tlgraph_snapshot(MLP())\n"
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    folder = snapshot_dir(project)
    foreign_png = folder / "someone_elses.png"
    foreign_png.write_bytes((folder / "test_mlp.png").read_bytes()[:8] + b"not ours")
    foreign_gv = folder / "notes.gv"
    foreign_gv.write_text("digraph G { a -> b }\n")
    project.makepyfile(test_graph=BASIC_TEST)

    unused = project.runpytest()
    assert unused.ret != 0
    # The pair test_old.gv + test_old.png is one snapshot (0.4).
    unused.stdout.fnmatch_lines(["*1 snapshot unused*"])
    warned = project.runpytest("--snapshot-warn-unused")
    assert warned.ret == 0
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert not (folder / "test_old.gv").exists()
    assert not (folder / "test_old.png").exists()
    assert foreign_png.exists() and foreign_gv.exists()
    assert (folder / "test_mlp.gv").exists()


def test_model_that_raises_writes_nothing(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=BASIC_TEST + "\n    tlgraph_snapshot(MLP(), name='second')\n")
    monkeypatch.setenv("TL_RAISE", "1")
    assert_update_refused(project, "*TraceError*the model is broken*")

    monkeypatch.delenv("TL_RAISE")
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    before = {p.name: p.read_bytes() for p in snapshot_dir(project).iterdir()}
    assert len(before) == 4
    monkeypatch.setenv("TL_RAISE", "1")
    project.runpytest("--snapshot-update").assert_outcomes(failed=1)
    after = {p.name: p.read_bytes() for p in snapshot_dir(project).iterdir()}
    assert after == before, "a failed capture must neither write nor delete snapshots"


def test_failing_first_call_does_not_orphan_later_snapshots(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=BASIC_TEST + "\n    tlgraph_snapshot(MLP(), name='second')\n")
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("TL_HIDDEN", "24")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    assert "unused" not in result.stdout.str()


def test_eval_mode_and_rng_state_are_restored(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph=textwrap.dedent(
            """
            import torch
            from torch import nn

            class Noisy(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.drop = nn.Dropout(0.5)
                    self.fc = nn.Linear(4, 4)
                    self.example_input_array = torch.ones(1, 4)

                def forward(self, x):
                    seen.append(self.training)
                    return self.fc(self.drop(x)) + torch.rand_like(x)

            seen = []

            def test_restores(tlgraph_snapshot):
                model = Noisy()
                model.train()
                model.fc.eval()
                torch.manual_seed(3)
                expected = torch.rand(5)
                torch.manual_seed(3)
                tlgraph_snapshot(model, png=False)
                assert torch.equal(torch.rand(5), expected)
                assert seen == [False]
                assert model.training and model.drop.training and not model.fc.training
            """
        )
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)


def test_time_channel_is_stable_and_the_measured_picture_is_kept(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        from tinymodels import MLP

        def test_timed(tlgraph_snapshot):
            drawing = tlgraph_snapshot(MLP(), color_by="time")
            assert any("masked" in note for note in drawing.state.notes)
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    measured = project.path / "tlgraph-results" / "test_graph" / "test_timed-measured.png"
    assert measured.read_bytes().startswith(b"\x89PNG")
    # Measured times differ on every run; the masked snapshot does not.
    project.runpytest().assert_outcomes(passed=1)
    project.runpytest("--tlgraph-force-render").assert_outcomes(passed=1)
    assert measured.is_file()
    project.makepyfile(test_graph=BASIC_TEST)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert not measured.exists(), "the previous session's pictures are cleared"


def test_kwargs_backward_and_the_run_renderer(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import torch
        from torch import nn
        from pytest_tlgraph import render

        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x, *, scale):
                return self.fc(x) * scale

        def test_scaled(tlgraph_snapshot):
            assert render.get_default_renderer() == "system"
            drawing = tlgraph_snapshot(
                Scaled(),
                torch.ones(2, 4, requires_grad=True),
                kwargs={"scale": torch.full((1,), 2.0)},
                backward=True,
                show_saved_for_backward=True,
                png=False,
            )
            rows = [row for node in drawing.nodes.values() for row in node.rows]
            assert any(row.startswith("saved for backward: ") for row in rows)
            assert sum(node.kind == "input" for node in drawing.nodes.values()) == 2
        """
    )
    project.runpytest("--snapshot-update", "--tlgraph-renderer=system").assert_outcomes(passed=1)
    assert render.get_default_renderer() == "pure", "the run's renderer must be put back"
