"""Failure modes, run in pytester: damaged files, bad calls, renderer changes, colour."""

from __future__ import annotations

import pytest

from tests.integration.project import BASIC_TEST, assert_update_refused, snapshot_dir

pytest_plugins = ["pytester"]


def test_damaged_dot_snapshot_fails_clearly_and_update_repairs_it(
    stored: pytest.Pytester,
) -> None:
    gv = snapshot_dir(stored) / "test_mlp.gv"
    good = gv.read_bytes()
    gv.write_bytes(b"\xff\xfe\x00 not a drawing at all")
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*test_mlp.gv is not a tlgraph drawing (damaged or foreign*"])
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert gv.read_bytes() == good


def test_damaged_png_snapshot_fails_clearly_and_update_repairs_it(
    stored: pytest.Pytester,
) -> None:
    png = snapshot_dir(stored) / "test_mlp.png"
    good = png.read_bytes()
    png.write_bytes(good[: len(good) // 2])
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*the stored PNG __snapshots__/test_graph/test_mlp.png could not*"]
    )
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert png.read_bytes() == good


def test_renderer_mismatch_is_one_line(stored: pytest.Pytester) -> None:
    # -rN: no short summary, which repeats the whole message when pytest runs under CI.
    result = stored.runpytest("--tlgraph-renderer=system", "-rN")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert out.count("renderer mismatch: the baseline PNG was drawn by graphviz-pure") == 1
    assert "mismatched pixels" not in out
    assert "--tlgraph-renderer=pure to compare" in out
    stored.runpytest("--tlgraph-renderer=system", "--snapshot-update").assert_outcomes(passed=1)
    stored.runpytest("--tlgraph-renderer=system").assert_outcomes(passed=1)


def test_missing_inputs_message(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        from tinymodels import NoExample

        def test_no_inputs(tlgraph_snapshot):
            tlgraph_snapshot(NoExample())
        """
    )
    assert_update_refused(
        project,
        "*tlgraph_snapshot(NoExample) got no inputs and the model has no example_input_array*",
    )


def test_example_input_array_as_keyword_dict(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import torch
        from tinymodels import NoExample

        def test_dict(tlgraph_snapshot):
            model = NoExample()
            model.example_input_array = {"x": torch.zeros(1, 3)}
            drawing = tlgraph_snapshot(model, png=False)
            assert "linear_1" in drawing.nodes
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "tlgraph_snapshot(lambda x: x, torch.zeros(1))",
            "*takes a torch.nn.Module, got function*",
        ),
        ("tlgraph_snapshot(MLP(), colour_by='flops')", "*unexpected keyword argument*colour_by*"),
        ("tlgraph_snapshot(MLP(), name='')", "*name=...) must be a non-empty str*"),
        ("tlgraph_snapshot(MLP(), threshold=3)", "*threshold must be a number from 0 to 1*"),
    ],
)
def test_bad_calls_are_refused_and_write_nothing(
    project: pytest.Pytester, call: str, message: str
) -> None:
    project.makepyfile(
        test_graph=f"""
        import torch
        from tinymodels import MLP

        def test_bad(tlgraph_snapshot):
            {call}
        """
    )
    assert_update_refused(project, message)


def test_a_name_used_twice_is_refused(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        from tinymodels import MLP

        def test_twice(tlgraph_snapshot):
            tlgraph_snapshot(MLP(), name="a", png=False)
            tlgraph_snapshot(MLP(), name="a", png=False)
        """
    )
    result = project.runpytest("--snapshot-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the snapshot name 'a' is used twice in this test*"])


@pytest.mark.parametrize("no_color", ["", "1"])
def test_colour_follows_the_terminal_and_no_color(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, no_color: str
) -> None:
    monkeypatch.setenv("TL_HIDDEN", "20")
    if no_color:
        monkeypatch.setenv("NO_COLOR", no_color)
    result = stored.runpytest("--color=yes")
    result.assert_outcomes(failed=1)
    coloured_heading = "\x1b[1mstructure (snapshot -> received):"
    assert (coloured_heading in result.stdout.str()) == (not no_color)


def test_plain_log_has_no_colour(stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TL_HIDDEN", "20")
    result = stored.runpytest("--color=no")
    result.assert_outcomes(failed=1)
    assert "\x1b[" not in result.stdout.str()


def test_dot_diff_is_capped_with_a_count(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import os
        import torch
        from torch import nn

        class Chain(nn.Module):
            def forward(self, x):
                for _ in range(int(os.environ.get("TL_STEPS", "3"))):
                    x = torch.relu(x + 1)
                return x

        def test_chain(tlgraph_snapshot):
            tlgraph_snapshot(Chain(), torch.zeros(2), png=False)
        """
    )
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TL_STEPS", "150")
        result = project.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*more diff lines left out (full diff: tlgraph-results/test_graph/test_chain*.dot.diff)*"]
    )


def test_without_syrupy_the_fixture_says_so(project: pytest.Pytester) -> None:
    project.makepyfile(test_graph=BASIC_TEST)
    result = project.runpytest("-p", "no:syrupy")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*whose pytest plugin is not active*remove -p no:syrupy*"])


def test_printed_paths_are_relative_to_where_pytest_ran(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = stored.mkdir("sub")
    monkeypatch.chdir(sub)
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest(str(stored.path))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*actual:   ../tlgraph-results/test_graph/test_mlp.png",
            "*expected: ../tlgraph-results/test_graph/test_mlp-expected.png",
            "*1 snapshot failure; report: ../tlgraph-results/report.html",
        ]
    )
    assert (stored.path / "tlgraph-results" / "report.html").is_file()
