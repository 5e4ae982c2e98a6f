"""Items 11, 14 and 15 of issue 37.

Item 11: ops a forward runs on a helper thread were dropped from the drawing in 0.4
(adding a GELU to that branch passed); the capture is now refused in one line naming
the thread, checked on corpus models (a BERT, a ViT) whose encoder runs on a thread.

Item 14: a model module that calls ``sys.exit()`` made ``tlgraph draw ... -o x.png``
exit 0 and write nothing; it is an error now (exit 2, one line).

Item 15: a call's ``name=`` kept U+202E and U+009B raw in report.html's headings and
in the command its copy button copies, U+200B passed through every sink, ``-o
$'a\\nb.png'`` printed a raw newline, and ``tlgraph report -o DIR`` overwrote an
existing report silently. One sanitiser now shows every Cc, Cf, Zl and Zp character
in every sink, and a merge keeps an existing report unless ``--overwrite`` is given."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import unicodedata
from pathlib import Path

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.errors import TraceError
from tests.corpus.registry import build

ROOT = Path(__file__).resolve().parents[2]

pytest_plugins = ["pytester"]


class OnAThread(nn.Module):
    """Runs a corpus model's forward on a helper thread and waits for it."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args: object) -> object:
        out: list[object] = []
        worker = threading.Thread(
            target=lambda: out.append(self.inner(*args)), name="encoder-worker"
        )
        worker.start()
        worker.join()
        return out[0]


@pytest.mark.parametrize("name", ["bert", "vit"])
def test_ops_on_a_helper_thread_refuse_the_capture_naming_it(name: str) -> None:
    case = build(name)
    with pytest.raises(TraceError) as caught:
        capture(OnAThread(case.model), case.inputs)
    message = str(caught.value)
    assert "'encoder-worker'" in message and "\n" not in message
    assert threading.Thread.start.__module__ == "threading", "the patch is undone"
    capture(case.model, case.inputs)  # the plain model still captures


def test_a_helper_thread_running_no_torch_op_is_left_alone() -> None:
    class Logs(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            worker = threading.Thread(target=lambda: None, name="logger")
            worker.start()
            worker.join()
            return self.fc(x)

    assert capture(Logs(), torch.zeros(1, 4)).ops


def _tlgraph(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest_tlgraph", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


MODEL = textwrap.dedent(
    """
    import os, sys, torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)
            self.example_input_array = torch.zeros(1, 2)

        def forward(self, x):
            if os.environ.get("TL_EXIT_IN") == "forward":
                sys.exit(0)
            return self.fc(x)

    if os.environ.get("TL_EXIT_IN") == "import":
        sys.exit()
    """
)


@pytest.mark.parametrize("where", ["import", "forward"])
def test_a_model_that_exits_is_an_error_not_success(tmp_path: Path, where: str) -> None:
    (tmp_path / "models.py").write_text(MODEL)
    env = {**os.environ, "TL_EXIT_IN": where, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest_tlgraph", "draw", "models.py:Net", "-o", "x.png"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2
    assert not (tmp_path / "x.png").exists()
    (line,) = done.stderr.splitlines()
    assert "sys.exit" in line


HOSTILE = "a\u202eb\u009bc\u200bd\u2028e\u00adf"

TEST = textwrap.dedent(
    f"""
    import os
    from tinymodels import MLP

    def test_mlp(tlgraph_snapshot):
        tlgraph_snapshot(MLP(), name={HOSTILE!r})
    """
)

HIDDEN = {"Cc", "Cf", "Zl", "Zp"}


def _raw(text: str) -> list[str]:
    return sorted(
        {f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in HIDDEN} - {"U+000A"}
    )


def test_every_sink_shows_format_and_control_characters(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=TEST)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = project.runpytest("--tlgraph-summary=markdown")
    result.assert_outcomes(failed=1)
    ours = [line for line in result.outlines if "tlgraph" in line and "FAILED" not in line]
    assert not _raw("\n".join(ours))
    results = project.path / "tlgraph-results"
    page = (results / "report.html").read_text(encoding="utf-8")
    assert not _raw(page.replace("\t", " "))
    assert "\\u202e" in page and "\\x9b" in page and "\\u200b" in page
    assert not _raw((results / "summary.md").read_text(encoding="utf-8"))
    report = _tlgraph("report", cwd=project.path)
    assert not _raw(report.stdout + report.stderr)


def test_a_printed_output_path_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(MODEL)
    done = _tlgraph("draw", "models.py:Net", "-o", "a\nb.gv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["wrote a\\x0ab.gv"]


def test_a_merge_keeps_an_existing_report_unless_told(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_graph=TEST)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    monkeypatch.setenv("TL_HIDDEN", "32")
    project.runpytest().assert_outcomes(failed=1)
    out = project.path / "published"
    out.mkdir()
    (out / "report.html").write_text("last week's report")
    done = _tlgraph("report", "tlgraph-results", "-o", "published", cwd=project.path)
    assert done.returncode == 2
    assert "--overwrite" in done.stderr and len(done.stderr.splitlines()) == 1
    assert (out / "report.html").read_text() == "last week's report"
    done = _tlgraph("report", "tlgraph-results", "-o", "published", "--overwrite", cwd=project.path)
    assert done.returncode == 0, done.stderr
    assert "test_mlp" in (out / "report.html").read_text()
