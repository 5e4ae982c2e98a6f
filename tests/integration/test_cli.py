"""The ``tlgraph`` command line, run as a user runs it: in its own process."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
import torch

from pytest_tlgraph import capture
from pytest_tlgraph.render import render_png

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

MODELS = textwrap.dedent(
    """
    import torch
    from torch import nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12))
            self.head = nn.Linear(12, 3)
            self.example_input_array = torch.ones(2, 6)

        def forward(self, x):
            return self.head(self.body(x))


    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)

        def forward(self, x, ids):
            return x + self.embed(ids).sum(1)


    def broken():
        raise RuntimeError("weights file missing")
    """
)


def tlgraph(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m pytest_tlgraph ARGS`` with this checkout first on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest_tlgraph", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def models(tmp_path: Path) -> Path:
    (tmp_path / "cli_models.py").write_text(MODELS, encoding="utf-8")
    return tmp_path


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_models_copy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_help_shows_an_example_per_command(models: Path) -> None:
    for command in ("draw", "diff", "report", "accept"):
        done = tlgraph(command, "--help", cwd=models)
        assert done.returncode == 0, done.stderr
        assert "example:" in done.stdout
        assert f"tlgraph {command} " in done.stdout.split("example:")[1]
    assert "--color-by" in tlgraph("draw", "--help", cwd=models).stdout
    top = tlgraph("--help", cwd=models).stdout
    examples = [line.split()[:2] for line in top.split("examples:")[1].splitlines()[1:5]]
    assert examples == [
        ["tlgraph", "draw"], ["tlgraph", "diff"], ["tlgraph", "report"], ["tlgraph", "accept"],
    ]  # fmt: skip


def test_draw_writes_what_trace_draw_draws(models: Path) -> None:
    done = tlgraph(
        "draw", "cli_models:Net", "--depth", "1", "--color-by", "flops", "-o", "net.gv", cwd=models
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "wrote net.gv"
    net = _load(models / "cli_models.py").Net().eval()
    expected = capture(net, net.example_input_array).draw(depth=1, color_by="flops").dot
    assert (models / "net.gv").read_text(encoding="utf-8") == expected
    assert "forward FLOPs" in expected  # the flag reached the drawing


def test_draw_png_from_shapes_and_dtypes(models: Path) -> None:
    done = tlgraph(
        "draw",
        "cli_models.py:TwoInputs",
        "--input-shape",
        "1,4",
        "--input-shape",
        "1,3",
        "--dtype",
        "float32",
        "--dtype",
        "int64",
        "-o",
        "two.png",
        cwd=models,
    )
    assert done.returncode == 0, done.stderr
    png = (models / "two.png").read_bytes()
    model = _load(models / "cli_models.py").TwoInputs().eval()
    dot = capture(model, (torch.zeros(1, 4), torch.zeros(1, 3, dtype=torch.int64))).draw().dot
    assert png == render_png(dot)  # values do not show in a plain drawing; shapes do


def test_an_error_is_one_line_with_exit_2(models: Path) -> None:
    done = tlgraph("draw", "cli_models:broken", cwd=models)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "calling cli_models:broken() raised RuntimeError: weights file missing" in lines[0]
    usage = tlgraph("draw", "cli_models:Net", "--depth", cwd=models)
    assert usage.returncode == 2
    assert usage.stderr.count("\n") == 1
    assert "--depth: expected one argument" in usage.stderr


def test_report_prints_the_path_and_the_summary(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_graph="""
        import os
        import torch

        def test_net(tlgraph_snapshot):
            width = int(os.environ.get("WIDTH", "8"))
            net = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.ReLU())
            tlgraph_snapshot(net, torch.zeros(1, 4))
        """
    )
    pytester.runpytest_subprocess("--snapshot-update").assert_outcomes(passed=1)
    passed = tlgraph("report", cwd=pytester.path)  # a passing run leaves no folder
    assert passed.returncode == 2
    assert passed.stderr.startswith("tlgraph report: error: no results folder tlgraph-results/")
    monkeypatch.setenv("WIDTH", "5")
    pytester.runpytest_subprocess("--tlgraph-summary=json").assert_outcomes(failed=1)
    done = tlgraph("report", cwd=pytester.path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines.pop(0) == "snapshot calls in the last run: 1 failed"
    assert lines[0] == f"report: {Path('tlgraph-results') / 'report.html'}"
    assert (pytester.path / "tlgraph-results" / "report.html").is_file()
    assert lines[1] == "1 snapshot failure in the last run:"
    assert "tlgraph snapshot test_net does not match (test_graph.py::test_net)" in lines[2]
    # The failure's story: the width change by node id and full module address.
    assert any(
        line.strip() == "linear_1 @0: params weight 8x4 -> 5x4, bias 8 -> 5"
        for line in lines
    )
    assert any(line.strip().startswith("diff:") and line.endswith("-diff.png") for line in lines)


def test_diff_reads_stdin_and_draws_the_structural_diff(models: Path) -> None:
    from pytest_tlgraph.snapshots import graph_diff

    module = _load(models / "cli_models.py")
    net = module.Net().eval()
    old = capture(net, net.example_input_array).draw().dot
    net.body.append(torch.nn.Tanh())
    new = capture(net, net.example_input_array).draw().dot
    (models / "new.gv").write_text(new, encoding="utf-8")
    done = tlgraph("diff", "-", "new.gv", "-o", "diff.png", cwd=models, stdin=old)
    assert done.returncode == 1, done.stderr  # they differ, as diff(1) says
    lines = done.stdout.splitlines()
    assert lines[0] == "wrote diff.png"
    assert lines[1:] == ["added tanh_1 @body.3"]
    assert (models / "diff.png").read_bytes() == render_png(graph_diff(old, new).dot)


def test_diff_draws_the_context_and_full_draws_the_whole_union(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_tlgraph.cli import main
    from pytest_tlgraph.snapshots import graph_diff

    def chain(length: int) -> str:
        class Chain(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                for _ in range(length):
                    x = torch.tanh(x)
                return x

        return capture(Chain(), torch.zeros(2)).draw().dot

    old, new = chain(30), chain(31)
    (tmp_path / "old.gv").write_text(old, encoding="utf-8")
    (tmp_path / "new.gv").write_text(new, encoding="utf-8")
    for extra, name, context in (([], "diff.gv", 2), (["--full"], "full.gv", None)):
        argv = ["diff", str(tmp_path / "old.gv"), str(tmp_path / "new.gv")]
        assert main([*argv, *extra, "-o", str(tmp_path / name)]) == 1  # they differ
        written = (tmp_path / name).read_text(encoding="utf-8")
        assert written == graph_diff(old, new, context=context).dot
        assert capsys.readouterr().out.splitlines() == ["wrote " + str(tmp_path / name),
                                                       "tanh_1:31: added tanh"]  # fmt: skip
    # The context: the added op, a few around it and one grey run for the rest.
    assert "unchanged_1" in (tmp_path / "diff.gv").read_text(encoding="utf-8")
    full = (tmp_path / "full.gv").read_text(encoding="utf-8")
    assert "unchanged_1" not in full and '"tanh_1:1" [' in full
