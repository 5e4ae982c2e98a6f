"""Options, ini keys, the marker and their precedence, run in pytester."""

from __future__ import annotations

import re

import pytest

from pytest_tlgraph.pixels.pngmeta import read_text_chunks
from tests.integration.project import BASIC_TEST, INI, snapshot_dir, snapshot_names
from tests.pngs import repaint

pytest_plugins = ["pytester"]


def _mismatched(result: pytest.RunResult) -> int:
    found = re.search(r"(\d+) mismatched pixels", result.stdout.str())
    assert found, result.stdout.str()
    return int(found[1])


@pytest.fixture
def tampered(stored: pytest.Pytester) -> pytest.Pytester:
    """A project whose stored PNG has 5 repainted pixels (and its original provenance)."""
    png = snapshot_dir(stored) / "test_mlp.png"
    png.write_bytes(repaint(png.read_bytes(), 5))
    return stored


def test_skip_render_shortcut_checks_the_image_hash(tampered: pytest.Pytester) -> None:
    # Same DOT, same renderer, copied metadata: the image no longer matches the hash of
    # its own pixel data it records, so it is rendered and compared, not trusted.
    plain = tampered.runpytest()
    plain.assert_outcomes(failed=1)
    assert _mismatched(plain) == 5
    forced = tampered.runpytest("--tlgraph-force-render")
    forced.assert_outcomes(failed=1)
    assert _mismatched(forced) == 5
    tampered.runpytest("--snapshot-update").assert_outcomes(passed=1)
    tampered.runpytest().assert_outcomes(passed=1)


def test_a_changed_dot_is_rendered_and_compared(
    tampered: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TL_HIDDEN", "17")
    changed = tampered.runpytest()
    changed.assert_outcomes(failed=1)
    assert _mismatched(changed) > 5


def test_budget_precedence_cli_over_ini_and_per_call_over_both(
    tampered: pytest.Pytester,
) -> None:
    tampered.runpytest("--tlgraph-force-render", "--tlgraph-max-diff-pixels=5").assert_outcomes(
        passed=1
    )
    tampered.runpytest("--tlgraph-force-render", "--tlgraph-max-diff-pixels=4").assert_outcomes(
        failed=1
    )
    tampered.makeini(INI + "tlgraph_max_diff_pixels = 5\n")
    tampered.runpytest("--tlgraph-force-render").assert_outcomes(passed=1)
    # The command line wins over the ini file.
    cli = tampered.runpytest("--tlgraph-force-render", "--tlgraph-max-diff-pixels=0")
    cli.assert_outcomes(failed=1)
    cli.stdout.fnmatch_lines(["*5 mismatched pixels (threshold 0.1, budget 0)*"])
    # A per-call argument wins over both.
    tampered.makepyfile(
        test_graph=BASIC_TEST.replace("MLP())", "MLP(), max_diff_pixels=0, threshold=0.2)")
    )
    per_call = tampered.runpytest("--tlgraph-force-render", "--tlgraph-max-diff-pixels=9")
    per_call.assert_outcomes(failed=1)
    per_call.stdout.fnmatch_lines(["*5 mismatched pixels (threshold 0.2, budget 0)*"])


def test_threshold_option_reaches_the_comparison(tampered: pytest.Pytester) -> None:
    # Black on a white page is a full-scale colour change: no threshold below 1 hides it.
    result = tampered.runpytest("--tlgraph-force-render", "--tlgraph-threshold=0.9")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*5 mismatched pixels (threshold 0.9, budget 0)*"])


def test_results_directory_option(tampered: pytest.Pytester) -> None:
    tampered.runpytest("--tlgraph-force-render", "--tlgraph-results=out/here").assert_outcomes(
        failed=1
    )
    folder = tampered.path / "out" / "here"
    assert (folder / "report.html").is_file()
    assert (folder / "test_graph" / "test_mlp-diff.png").is_file()
    assert not (tampered.path / "tlgraph-results").exists()


def test_no_png_option_and_ini(project: pytest.Pytester) -> None:
    project.makepyfile(test_graph=BASIC_TEST)
    project.runpytest("--snapshot-update", "--tlgraph-no-png").assert_outcomes(passed=1)
    assert snapshot_names(project) == ["test_mlp.gv"]
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    stored = (snapshot_dir(project) / "test_mlp.png").read_bytes()
    # A run without PNGs keeps the stored PNG: it is neither compared nor obsolete.
    quiet = project.runpytest("--snapshot-update", "--tlgraph-no-png")
    quiet.assert_outcomes(passed=1)
    assert (snapshot_dir(project) / "test_mlp.png").read_bytes() == stored
    project.makeini("[pytest]\naddopts = -p no:cacheprovider\ntlgraph_png = false\n")
    header = project.runpytest()
    header.assert_outcomes(passed=1)
    header.stdout.fnmatch_lines(
        ["tlgraph: torch *, renderer pure (graphviz-pure *), PNG comparison off"]
    )


def test_per_call_png_false_makes_the_png_obsolete(stored: pytest.Pytester) -> None:
    stored.makepyfile(test_graph=BASIC_TEST.replace("MLP())", "MLP(), png=False)"))
    stored.runpytest("--snapshot-update").assert_outcomes(passed=1)
    assert snapshot_names(stored) == ["test_mlp.gv"]


def test_marker_sets_defaults_closest_wins_and_per_call_wins(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import pytest
        from tinymodels import MLP

        pytestmark = pytest.mark.tlgraph(direction="topdown", png=False)

        def test_module_marker(tlgraph_snapshot):
            assert 'rankdir="TB"' in tlgraph_snapshot(MLP()).dot

        @pytest.mark.tlgraph(direction="leftright")
        def test_own_marker(tlgraph_snapshot):
            assert 'rankdir="LR"' in tlgraph_snapshot(MLP()).dot
            assert 'rankdir="BT"' in tlgraph_snapshot(MLP(), name="up", direction="bottomup").dot
        """
    )
    project.runpytest("--snapshot-update", "--strict-markers").assert_outcomes(passed=2)
    names = snapshot_names(project)
    assert names == ["test_module_marker.gv", "test_own_marker.gv", "test_own_marker[up].gv"]


def test_marker_with_unknown_option_is_refused(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_graph="""
        import pytest
        from tinymodels import MLP

        @pytest.mark.tlgraph(colour_by="flops")
        def test_marked(tlgraph_snapshot):
            tlgraph_snapshot(MLP())
        """
    )
    result = project.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.tlgraph got unexpected keyword argument*colour_by*"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--tlgraph-threshold=2"],
            "*--tlgraph-threshold: threshold must be a number from 0 to 1*",
        ),
        (["--tlgraph-max-diff-pixels=-1"], "*max_diff_pixels must be an int >= 0*"),
    ],
)
def test_bad_option_values_are_usage_errors(
    project: pytest.Pytester, args: list[str], message: str
) -> None:
    project.makepyfile(test_graph=BASIC_TEST)
    result = project.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_bad_ini_value_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\ntlgraph_png = maybe\n")
    project.makepyfile(test_graph=BASIC_TEST)
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*tlgraph_png = 'maybe' is not a valid bool*"])


def test_report_header(project: pytest.Pytester) -> None:
    project.makepyfile(test_graph=BASIC_TEST)
    result = project.runpytest("--tlgraph-renderer=system", "--snapshot-update")
    result.stdout.fnmatch_lines(["tlgraph: torch 2.*, renderer system (dot *)"])
    meta = read_text_chunks((snapshot_dir(project) / "test_mlp.png").read_bytes())
    assert meta["tlgraph-renderer"].startswith("dot ")
