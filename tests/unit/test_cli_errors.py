"""Every ``tlgraph`` error: exit 2, one line on stderr naming the cause and the remedy."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from pytest_tlgraph.cli import main

MODELS = textwrap.dedent(
    """
    import torch
    from torch import nn

    def mlp():
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def recurrent():
        return nn.Sequential(nn.Linear(4, 4))

    def not_a_model():
        return 42

    def needs_args(width):
        return nn.Linear(width, width)

    number = 3
    """
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "errmodels.py").write_text(MODELS, encoding="utf-8")
    (tmp_path / "syntax_error.py").write_text("def broken(:\n", encoding="utf-8")
    torch.save({"x": torch.zeros(1, 4)}, tmp_path / "kw.pt")
    torch.save([1, 2], tmp_path / "ints.pt")
    torch.save(torch.zeros(1, 4), tmp_path / "one.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    (tmp_path / "notes.gv").write_text("hello\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


CASES = {
    "no colon": (["draw", "errmodels"], ["is not MODULE:FACTORY", "torchvision.models:resnet18"]),
    "no module": (["draw", "nomodule:Net"], ["no module named 'nomodule'", "PYTHONPATH"]),
    "no file": (["draw", "missing.py:Net"], ["no such file", ".py file"]),
    "module raises": (
        ["draw", "syntax_error.py:x"],
        ["importing syntax_error.py raised SyntaxError", "fix"],
    ),
    "no attribute": (["draw", "errmodels:MLP"], ["has no attribute 'MLP'", "mlp", "pick one of"]),
    "not a module": (["draw", "errmodels:not_a_model"], ["returned int", "returns the model"]),
    "not callable": (["draw", "errmodels:number"], ["neither an nn.Module nor callable"]),
    "needs args": (["draw", "errmodels:needs_args"], ["raised TypeError", "no arguments"]),
    "no inputs": (["draw", "errmodels:mlp"], ["no example_input_array", "--input-shape"]),
    "bad shape": (["draw", "errmodels:mlp", "--input-shape", "1,-4"], ["bad --input-shape '1,-4'"]),
    "bad dtype": (
        ["draw", "errmodels:mlp", "--input-shape", "1,4", "--dtype", "float33"],
        ["unknown --dtype 'float33'", "float32"],
    ),
    "dtype count": (
        [
            "draw",
            "errmodels:mlp",
            "--input-shape",
            "1,4",
            "--input-shape",
            "1,4",
            "--dtype",
            "float32",
            "--dtype",
            "int64",
            "--dtype",
            "int64",
        ],
        ["3 --dtype values for 2 --input-shape values"],
    ),
    "dtype alone": (["draw", "errmodels:mlp", "--dtype", "int64"], ["add --input-shape"]),
    "no inputs file": (["draw", "errmodels:mlp", "--inputs", "nope.pt"], ["no such inputs file"]),
    "junk inputs": (
        ["draw", "errmodels:mlp", "--inputs", "junk.pt"],
        ["cannot read inputs file", "torch.save"],
    ),
    "model raises": (["draw", "errmodels:mlp", "--inputs", "kw.pt"], ["forward"]),
    "ints file": (["draw", "errmodels:mlp", "--inputs", "ints.pt"], ["3 were given", "inputs"]),
    "bad depth": (
        ["draw", "errmodels:mlp", "--depth", "deep"],
        ["bad --depth 'deep'", "expected int"],
    ),
    "bad style": (
        ["draw", "errmodels:mlp", "--node-spec-fn", "fancy"],
        ["bad --node-spec-fn", "MODULE:FUNCTION"],
    ),
    "refusal": (
        ["draw", "errmodels:mlp", "--inputs", "one.pt", "--color-by", "nonsense"],
        ["[encoding_source_invalid]", "Remedy"],
    ),
    "bad output": (
        ["draw", "errmodels:mlp", "--inputs", "one.pt", "-o", "out.jpg"],
        ["-o takes a .gv, .png or .svg"],
    ),
    "unwritable": (
        ["draw", "errmodels:mlp", "--inputs", "one.pt", "-o", "no/dir/out.gv"],
        ["cannot write", "check the folder"],
    ),
    "report on a file": (["report", "notes.gv"], ["is a file", "results folder"]),
    "diff two stdins": (["diff", "-", "-"], ["only one of OLD and NEW"]),
    "diff unreadable": (["diff", "nope.gv", "notes.gv"], ["cannot read 'nope.gv'", ".gv snapshot"]),
    "diff foreign": (["diff", "notes.gv", "notes.gv"], ["not tlgraph drawings", "two .gv"]),
    "unknown choice": (
        ["draw", "errmodels:mlp", "--page", "sepia"],
        ["invalid choice: 'sepia'", "--help"],
    ),
}


@pytest.mark.parametrize("argv, fragments", CASES.values(), ids=CASES.keys())
def test_error_is_one_line_exit_2(
    folder: Path, argv: list[str], fragments: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("tlgraph")
    for fragment in fragments:
        assert fragment in err


def test_draw_to_stdout_and_svg(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", "errmodels:mlp", "--inputs", "one.pt", "--view", "rolled"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph tlgraph {")
    assert main(["draw", "errmodels:mlp", "--inputs", "one.pt", "-o", "mlp.svg"]) == 0
    svg = (folder / "mlp.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and "linear_1" in svg


def test_report_without_a_results_folder(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # No folder is no result: exit 2 and one line, never "the last run passed".
    assert main(["report"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "no results folder tlgraph-results/ here or in a parent folder" in err
