"""Every PNG the plugin writes goes through the size guard, and every ``tlgraph`` error
is one line with exit 2 (issue 22, item 9).

The guard has two halves: the estimate before rendering (a drawing over 200 Mpx or
32,767 px a side is not rendered) and the rendered image's own header (an estimate that
reads low never lets an oversized image be written, copied or inlined). The second half
is reached here through a renderer that answers with an oversized image header, so no
test renders a huge picture.
"""

from __future__ import annotations

import struct
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_tlgraph import RenderError, render
from pytest_tlgraph.cli import main
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.drawing import graph_diff_png
from pytest_tlgraph.review import html
from tests.corpus.traces import corpus_trace
from tests.integration.project import snapshot_dir

pytest_plugins = ["pytester"]

#: The structural diff drawing of issue 22: one tall column.
HUGE = (483, 162_956)

CHAIN_TEST = textwrap.dedent(
    """
    import os

    import torch
    from torch import nn


    class Chain(nn.Module):
        def forward(self, x):
            op = getattr(torch, os.environ.get("TL_OP", "tanh"))
            for _ in range(int(os.environ.get("TL_LENGTH", "400"))):
                x = op(x)
            return x


    def test_chain(tlgraph_snapshot):
        tlgraph_snapshot(Chain(), torch.zeros(2))
    """
)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header(width: int, height: int) -> bytes:
    """A well-formed PNG file that says it is ``width`` x ``height`` px (its pixel data
    is one empty row: no decoder is meant to read it)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + _chunk(b"IDAT", zlib.compress(b"\x00"))
        + _chunk(b"IEND", b"")
    )


@pytest.fixture
def oversized_renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every PNG render answers with an image of :data:`HUGE` size; the DOT texts it
    was asked to draw are listed."""
    asked: list[str] = []

    def fake(dot: str, **_: object) -> bytes:
        asked.append(dot)
        return png_header(*HUGE)

    monkeypatch.setattr(render, "render_png", fake)
    return asked


@pytest.fixture
def big_renders_refused(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Renders of drawings of more than 300 lines are not made (listed, answered with a
    small image): the estimate must have stopped them before the renderer."""
    real: Callable[..., bytes] = render.render_png
    asked: list[str] = []

    def guarded(dot: str, **kwargs: object) -> bytes:
        if dot.count("\n") > 300:
            asked.append(dot)
            return png_header(10, 10)
        return real(dot, **kwargs)

    monkeypatch.setattr(render, "render_png", guarded)
    return asked


def _one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("tlgraph"), err
    return err


# -- the fixture ------------------------------------------------------------------------


def test_the_structural_diff_of_an_oversized_graph_is_not_drawn(
    project: pytest.Pytester, big_renders_refused: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=CHAIN_TEST)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    # Every node replaced: the diff drawing with context is the whole tall column.
    monkeypatch.setenv("TL_OP", "sigmoid")
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    assert big_renders_refused == []  # neither the received PNG nor a diff was rendered
    result.stdout.fnmatch_lines(
        ["*structural diff drawing not made: PNG not rendered: the estimated canvas is *"]
    )
    results = project.path / "tlgraph-results"
    assert not list(results.rglob("*-graphdiff*.png"))
    report = (results / "report.html").read_text(encoding="utf-8")
    assert "data:image/png" not in report


def test_one_change_in_an_oversized_graph_draws_its_context_not_the_whole_union(
    project: pytest.Pytester, big_renders_refused: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=CHAIN_TEST)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("TL_LENGTH", "401")  # one op more at the end of the column
    result = project.runpytest()
    result.assert_outcomes(failed=1)
    assert big_renders_refused == []  # the whole union was stopped by the estimate
    results = project.path / "tlgraph-results"
    assert [p.name for p in results.rglob("*-graphdiff*.png")] == ["test_chain-graphdiff.png"]
    result.stdout.fnmatch_lines(
        ["*structural diff drawing: tlgraph-results/test_graph/test_chain-graphdiff.png"]
    )


def test_a_received_png_over_the_limit_is_neither_stored_nor_compared(
    stored: pytest.Pytester, oversized_renders: list[str]
) -> None:
    png = snapshot_dir(stored) / "test_mlp.png"
    before = png.read_bytes()
    result = stored.runpytest("--snapshot-update", "--tlgraph-force-render", "-W", "always")
    result.assert_outcomes(passed=1)
    assert oversized_renders  # rendered, then refused from its header
    assert png.read_bytes() == before  # the baseline stays
    result.stdout.fnmatch_lines(
        ["*test_mlp: the received PNG refused: it is 483 x 162,956 px (79 Mpx), over the limit*"]
    )


def test_a_stored_png_over_the_limit_is_not_copied_into_the_results(
    stored: pytest.Pytester,
) -> None:
    png = snapshot_dir(stored) / "test_mlp.png"
    png.write_bytes(png_header(*HUGE))  # a hostile or broken baseline
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the stored PNG's copy refused: it is 483 x 162,956 px*"])
    results = stored.path / "tlgraph-results"
    assert not list(results.rglob("*-expected.png"))
    assert list(results.rglob("test_mlp.png"))  # the received picture is written


def test_report_html_never_inlines_an_oversized_image(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(png_header(*HUGE))
    figure = html._figure("graphdiff", "big.png", tmp_path)
    assert "data:image/png" not in figure
    assert "image refused: it is 483 x 162,956 px" in figure and "big.png" in figure


def test_graph_diff_png_reads_the_rendered_size(oversized_renders: list[str]) -> None:
    old = corpus_trace("gpt2").draw().dot
    new = corpus_trace("gpt2").draw(depth=1).dot
    png, note = graph_diff_png(compare(old, new), "pure")
    assert png is None and len(oversized_renders) == 1
    assert note is not None and note.startswith(
        "structural diff drawing not made: PNG refused: it is 483 x 162,956 px"
    )


def test_drawing_png_refuses_an_image_the_estimate_passed(oversized_renders: list[str]) -> None:
    with pytest.raises(RenderError, match=r"^PNG refused: it is 483 x 162,956 px \(79 Mpx\)"):
        corpus_trace("gpt2").draw().png()


# -- tlgraph ----------------------------------------------------------------------------


@pytest.fixture
def cli_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "guardmodels.py").write_text(
        textwrap.dedent(
            """
            import torch
            from torch import nn

            def chain():
                model = nn.Sequential(*[nn.Tanh() for _ in range(400)])
                model.example_input_array = torch.zeros(1, 4)
                return model

            def small():
                model = nn.Sequential(nn.Linear(4, 4))
                model.example_input_array = torch.zeros(1, 4)
                return model
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_tlgraph_draw_refuses_an_oversized_png_before_rendering(
    cli_folder: Path, big_renders_refused: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_line_exit_2(["draw", "guardmodels:chain", "-o", "c.png"], capsys)
    assert "PNG not rendered: the estimated canvas is" in err and "--collapse auto" in err
    assert big_renders_refused == [] and not (cli_folder / "c.png").exists()


def test_tlgraph_draw_refuses_a_rendered_png_over_the_limit(
    cli_folder: Path, oversized_renders: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_line_exit_2(["draw", "guardmodels:small", "-o", "s.png"], capsys)
    assert "PNG refused: it is 483 x 162,956 px" in err
    assert oversized_renders and not (cli_folder / "s.png").exists()


def test_tlgraph_diff_refuses_an_oversized_png_before_rendering(
    tmp_path: Path, big_renders_refused: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # The t5 corpus drawing at 600 dpi is some 92,000 px tall: the whole diff (--full)
    # draws the received side's modules as it draws them.
    (tmp_path / "old.gv").write_text(corpus_trace("t5").draw(depth=2).dot, encoding="utf-8")
    (tmp_path / "new.gv").write_text(corpus_trace("t5").draw().dot, encoding="utf-8")
    out = tmp_path / "d.png"
    argv = ["diff", str(tmp_path / "old.gv"), str(tmp_path / "new.gv"), "-o", str(out), "--full"]
    err = _one_line_exit_2([*argv, "--dpi", "600"], capsys)
    assert "PNG not rendered: the estimated canvas is" in err and "at 600 dpi" in err
    assert "-o diff.svg" in err
    assert big_renders_refused == [] and not out.exists()


@pytest.mark.parametrize("dpi", ["0", "-3", "601", "abc", "1.5"])
@pytest.mark.parametrize("command", ["draw", "diff"])
def test_a_bad_dpi_is_one_line_before_any_work(
    cli_folder: Path, command: str, dpi: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ["guardmodels:small"] if command == "draw" else ["a.gv", "b.gv"]
    err = _one_line_exit_2([command, *target, "--dpi", dpi, "-o", "x.png"], capsys)
    assert f"bad --dpi '{dpi}': give a whole number from 1 to 600" in err
    assert not (cli_folder / "x.png").exists()


@pytest.mark.parametrize("shape", ["100000,100000,100000", "99999999999999999999"])
def test_an_input_too_large_to_make_is_one_line(
    cli_folder: Path, shape: str, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _one_line_exit_2(["draw", "guardmodels:small", "--input-shape", shape], capsys)
    assert f"cannot make an input of shape '{shape}' as float32" in err
    assert "give a smaller --input-shape" in err
