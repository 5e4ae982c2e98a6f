"""Review at CI scale: shards merged into one report, accept from another checkout, the
drift of versions named, and ``tlgraph review`` driven through standard input.

The projects run pytest in-process (pytester) and the command in-process too
(``pytest_tlgraph.cli.main``).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

# Kept loaded across the in-process runs (pytester drops what a run imported).
import tests.corpus.models_faithful_collapse  # noqa: F401
from pytest_tlgraph.cli import main
from pytest_tlgraph.pixels.pngmeta import add_text_chunks, read_text_chunks
from pytest_tlgraph.snapshots.versions import VERSIONS_KEY, decode_versions, encode_versions
from tests.integration.test_accept import changed, snapshot_state

pytest_plugins = ["pytester"]

#: A corpus ResNet whose stem kernel follows the environment, a toy MLP with two named
#: calls whose widths follow it, and a test that never changes.
TESTS = textwrap.dedent(
    """
    import os

    import torch
    from torch import nn

    from tests.corpus.models_faithful_collapse import resnet18_basic_case


    def _mlp(width):
        return nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 2))


    def test_resnet(tlgraph_snapshot):
        case = resnet18_basic_case(stem_kernel=int(os.environ.get("TL_KERNEL", "7")))
        tlgraph_snapshot(case.model, case.inputs, collapse="auto")


    def test_rescnn(tlgraph_snapshot):
        width = int(os.environ.get("TL_WIDTH", "8"))
        tlgraph_snapshot(_mlp(width), torch.zeros(1, 4), name="depth1")
        tlgraph_snapshot(_mlp(width + 1), torch.zeros(1, 4), name="depth2")


    def test_same(tlgraph_snapshot):
        tlgraph_snapshot(_mlp(6), torch.zeros(1, 4))
    """
)

#: A ResNet whose block activation follows the environment: ``relu``, ``silu``, or
#: SiLU written out as ``x * sigmoid(x)`` (``mul``), the module the same: what an
#: upgrade that renames an op or changes its decomposition does to a drawing.
UPGRADE = textwrap.dedent(
    """
    import os

    import torch
    from torch import nn

    from tests.corpus.models_faithful_collapse import resnet18_basic_case


    class Act(nn.Module):
        def forward(self, x):
            kind = os.environ.get("TL_ACT", "relu")
            if kind == "relu":
                return torch.relu(x)
            return torch.nn.functional.silu(x) if kind == "silu" else x * torch.sigmoid(x)


    def test_resnet(tlgraph_snapshot):
        tlgraph_snapshot(resnet18_basic_case(Act).model, torch.zeros(1, 3, 32, 32))
    """
)


def tlgraph(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``tlgraph ARGS`` in-process: the exit status, standard output and error."""
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def sharded(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The project after ``--snapshot-update``, then run as two CI shards of disjoint
    ``-k`` selections into two results folders: shard-1 has test_resnet (failing),
    shard-2 test_rescnn (two failing calls) and test_same (passing)."""
    for name in ("TL_KERNEL", "TL_WIDTH"):
        monkeypatch.delenv(name, raising=False)
    project.makepyfile(test_models=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=3)
    monkeypatch.setenv("TL_KERNEL", "5")
    monkeypatch.setenv("TL_WIDTH", "12")
    summary = "--tlgraph-summary=json,markdown"
    first = ("-k", "test_resnet", "--tlgraph-results=shard-1/tlgraph-results", summary)
    project.runpytest(*first).assert_outcomes(failed=1)
    second = ("-k", "not test_resnet", "--tlgraph-results=shard-2/tlgraph-results", summary)
    project.runpytest(*second).assert_outcomes(passed=1, failed=1)
    return project


SHARD_1, SHARD_2 = "shard-1/tlgraph-results", "shard-2/tlgraph-results"


def test_two_shards_merge_into_one_report_each_failure_once_with_its_shard(
    sharded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = tlgraph(capsys, "report", SHARD_1, SHARD_2, "-o", "merged")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "snapshot calls in the merged runs: 3 failed, 1 passed" in lines
    assert "report: merged/report.html" in lines
    assert "3 snapshot failures in the merged runs:" in lines
    pending = lines[lines.index("3 calls pending review (tlgraph accept NODEID or --all):") + 1 :]
    assert [line.split(":", 3)[:3] for line in pending] == [
        ["  test_models.py", "", "test_resnet [test_resnet] (shard shard-1/tlgraph-results)"],
        [
            "  test_models.py",
            "",
            "test_rescnn [test_rescnn[depth1]] (shard shard-2/tlgraph-results)",
        ],
        [
            "  test_models.py",
            "",
            "test_rescnn [test_rescnn[depth2]] (shard shard-2/tlgraph-results)",
        ],
    ]
    # Each drawing's path is printed once (not again after the structure's story).
    paths = [line.split()[-1] for line in lines if line.endswith("-graphdiff.png")]
    assert len(paths) == len(set(paths)) == 3, out

    merged = sharded.path / "merged"
    summary = json.loads((merged / "summary.json").read_text(encoding="utf-8"))
    assert summary["counts"] == {"failed": 3, "passed": 1}
    assert summary["shards"] == [SHARD_1, SHARD_2]
    by_call = {(c["nodeid"], c["name"]): c for c in summary["calls"]}
    assert len(by_call) == len(summary["calls"]) == 4
    assert by_call[("test_models.py::test_resnet", "test_resnet")]["shard"] == SHARD_1
    assert by_call[("test_models.py::test_same", "test_same")]["shard"] == SHARD_2
    assert not any(c["conflict"] for c in summary["calls"])
    # The artifacts are named from the merged folder: the links work from there.
    graphdiff = by_call[("test_models.py::test_resnet", "test_resnet")]["images"]["graphdiff"]
    assert (merged / graphdiff).resolve() == (
        sharded.path / SHARD_1 / "test_models" / "test_resnet-graphdiff.png"
    ).resolve()
    markdown = (merged / "summary.md").read_text(encoding="utf-8")
    assert markdown.startswith("### tlgraph snapshots: 3 failed, 1 passed\n")
    assert (
        "Merged from 2 results folders: `shard-1/tlgraph-results`, `shard-2/tlgraph-results`."
        in (markdown)
    )
    assert markdown.count("| `test_models.py::test_rescnn` |") == 2

    page = (merged / "report.html").read_text(encoding="utf-8")
    assert page.count('<section class="failure"') == 3
    # Two calls of one test are told apart, in the headings and in the index.
    for call in ("depth1", "depth2"):
        name = f"test_models.py::test_rescnn, call &quot;{call}&quot;"
        assert page.count(name) == 2, call  # the index link and the heading
        command = f"tlgraph accept --results {SHARD_2} test_models.py::test_rescnn --call {call}"
        assert f"<code>{command}</code>" in page
        assert f'data-copy="{command}"' in page
    assert "(shard shard-1/tlgraph-results)" in page
    # The merged page carries its images: it is one file to upload.
    assert page.count("data:image/png;base64,") >= 3


def test_an_accept_from_a_third_checkout_writes_there_only(
    sharded: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The shards' folders are downloaded elsewhere, the project is checked out a third
    time; the command the merged page shows works from that checkout's rootdir."""
    downloads = tmp_path_factory.mktemp("downloads")
    for shard in ("shard-1", "shard-2"):
        shutil.copytree(sharded.path / shard, downloads / shard)
    laptop = tmp_path_factory.mktemp("laptop") / "project"
    laptop.mkdir()
    for name in ("tox.ini", "test_models.py", "tinymodels.py"):
        shutil.copy2(sharded.path / name, laptop / name)
    shutil.copytree(sharded.path / "__snapshots__", laptop / "__snapshots__")
    ci_before, before = snapshot_state(sharded.path), snapshot_state(laptop)

    monkeypatch.chdir(laptop)
    one, two = (
        str(downloads / "shard-1/tlgraph-results"),
        str(downloads / "shard-2/tlgraph-results"),
    )
    code, out, err = tlgraph(
        capsys, "accept", "--results", one, "--results", two,
        "test_models.py::test_rescnn", "--call", "depth1",
    )  # fmt: skip
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "1 call accepted; rerun pytest to check them"
    assert changed(before, snapshot_state(laptop)) == [
        "test_models/test_rescnn[depth1].gv",
        "test_models/test_rescnn[depth1].png",
    ]
    assert changed(ci_before, snapshot_state(sharded.path)) == []  # the run's checkout
    received = downloads / "shard-2/tlgraph-results/test_models/test_rescnn[depth1].gv"
    assert (laptop / "__snapshots__/test_models/test_rescnn[depth1].gv").read_bytes() == (
        received.read_bytes()
    )
    # A NODEID the shards do not have names what is pending, across both.
    code, _, err = tlgraph(capsys, "accept", "--results", one, "--results", two, "test_nope")
    assert code == 2
    assert "test_models.py::test_resnet" in err and "test_models.py::test_rescnn" in err


def test_a_call_two_shards_recorded_is_shown_once_if_alike_and_flagged_if_not(
    sharded: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    again = ("-k", "test_resnet", "--tlgraph-results=shard-3/tlgraph-results")
    sharded.runpytest(*again, "--tlgraph-summary=json,markdown").assert_outcomes(failed=1)
    monkeypatch.setenv("TL_KERNEL", "3")  # a shard drawing the same call otherwise
    other = ("-k", "test_resnet", "--tlgraph-results=shard-4/tlgraph-results")
    sharded.runpytest(*other, "--tlgraph-summary=json,markdown").assert_outcomes(failed=1)

    code, out, _ = tlgraph(capsys, "report", SHARD_1, "shard-3/tlgraph-results", "-o", "alike")
    assert code == 0
    assert "1 snapshot failure in the merged runs:" in out
    assert "(shard shard-1/tlgraph-results, shard-3/tlgraph-results)" in out
    summary = json.loads((sharded.path / "alike/summary.json").read_text(encoding="utf-8"))
    assert [c["shard"] for c in summary["calls"]] == [f"{SHARD_1}, shard-3/tlgraph-results"]

    code, out, _ = tlgraph(capsys, "report", SHARD_1, "shard-4/tlgraph-results", "-o", "unlike")
    assert code == 0
    assert "2 snapshot failures in the merged runs:" in out
    flag = "recorded differently by shard-1/tlgraph-results and shard-4/tlgraph-results"
    assert flag in out
    page = (sharded.path / "unlike/report.html").read_text(encoding="utf-8")
    assert page.count('<div class="conflict">') == 2
    summary = json.loads((sharded.path / "unlike/summary.json").read_text(encoding="utf-8"))
    assert sorted(c["conflict"] for c in summary["calls"]) == [
        ["shard-1/tlgraph-results"],
        ["shard-4/tlgraph-results"],
    ]
    assert "**differs in**" in (sharded.path / "unlike/summary.md").read_text(encoding="utf-8")
    # Neither is accepted blindly: the user picks one shard.
    before = snapshot_state(sharded.path)
    code, _, err = tlgraph(
        capsys, "accept", "--results", SHARD_1, "--results", "shard-4/tlgraph-results",
        "test_models.py::test_resnet",
    )  # fmt: skip
    assert code == 1
    assert err.count("recorded differently by") == 2, err
    assert changed(before, snapshot_state(sharded.path)) == []
    code, out, _ = tlgraph(capsys, "accept", "--results", SHARD_1, "test_models.py::test_resnet")
    assert code == 0
    assert changed(before, snapshot_state(sharded.path)) == [
        "test_models/test_resnet.gv",
        "test_models/test_resnet.png",
    ]


def _edit_versions(png: Path, **versions: str) -> None:
    data = png.read_bytes()
    recorded = decode_versions(read_text_chunks(data)[VERSIONS_KEY])
    png.write_bytes(add_text_chunks(data, {VERSIONS_KEY: encode_versions(recorded | versions)}))


def test_a_baseline_drawn_with_an_older_torch_names_the_drift_first(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    monkeypatch.delenv("TL_KERNEL", raising=False)
    monkeypatch.delenv("TL_WIDTH", raising=False)
    project.makepyfile(test_models=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=3)
    stored = project.path / "__snapshots__" / "test_models" / "test_resnet.png"
    recorded = decode_versions(read_text_chunks(stored.read_bytes())[VERSIONS_KEY])
    assert recorded["torch"] == torch.__version__
    assert "pytest-tlgraph" in recorded
    # The model library is recorded when it is imported: these tests import none, but
    # pytester runs them in this process, where an earlier test may have.
    assert ("transformers" in recorded) == ("transformers" in sys.modules)
    _edit_versions(stored, torch="2.0.0")
    # Other versions alone are no failure: the drawing is the same.
    project.runpytest("-k", "test_resnet").assert_outcomes(passed=1)

    monkeypatch.setenv("TL_KERNEL", "5")
    result = project.runpytest("-k", "test_resnet", "--tlgraph-summary=json")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    head = text.index("structure (snapshot -> received):")
    first = text[head:].splitlines()[1].strip()
    assert first == (
        f"drawn with torch 2.0.0, now {torch.__version__}: the change may come from torch, "
        "not the model"
    )
    summary = json.loads(
        (project.path / "tlgraph-results" / "summary.json").read_text(encoding="utf-8")
    )
    (call,) = summary["calls"]
    assert call["drift"]["stored"]["torch"] == "2.0.0"
    assert call["drift"]["running"]["torch"] == torch.__version__


def test_a_run_changed_only_as_an_upgrade_changes_drawings_says_so_once(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.makepyfile(test_up=UPGRADE)
    monkeypatch.delenv("TL_ACT", raising=False)
    project.runpytest("--snapshot-update").assert_outcomes(passed=1)
    stored = project.path / "__snapshots__" / "test_up" / "test_resnet.png"
    _edit_versions(stored, torch="2.0.0")
    monkeypatch.setenv("TL_ACT", "silu")  # relu -> silu on every block: op renamed
    result = project.runpytest("--tlgraph-summary=json,markdown")
    result.assert_outcomes(failed=1)
    said = [line for line in result.outlines if "changed only in ways an upgrade" in line]
    assert len(said) == 1 and said[0].startswith("tlgraph: the failing call changed only")
    folder = project.path / "tlgraph-results"
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["upgrade"] is not None
    assert "(op renamed)" in summary["upgrade"]
    assert "torch 2.0.0 -> " in summary["upgrade"]
    markdown = (folder / "summary.md").read_text(encoding="utf-8")
    assert markdown.count("**Upgrade?**") == 1
    assert "upgrade" in (folder / "report.html").read_text(encoding="utf-8")

    monkeypatch.setenv("TL_ACT", "mul")  # relu -> x * sigmoid(x): a decomposition
    project.runpytest("--tlgraph-summary=json").assert_outcomes(failed=1)
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert "decomposition changed" in summary["upgrade"]


def test_a_model_change_is_no_upgrade(sharded: pytest.Pytester) -> None:
    """A kernel and a width changed: the summary says nothing of upgrades."""
    for shard in (SHARD_1, SHARD_2):
        summary = json.loads((sharded.path / shard / "summary.json").read_text(encoding="utf-8"))
        assert summary["upgrade"] is None
        assert "**Upgrade?**" not in (sharded.path / shard / "summary.md").read_text("utf-8")


def _review(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, answers: str, *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    return tlgraph(capsys, "review", *args)


def test_review_walks_the_pending_calls_through_stdin(
    sharded: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = snapshot_state(sharded.path)
    shards = ("--results", SHARD_1, "--results", SHARD_2)
    # An unknown answer is asked again; skip the ResNet, accept depth1, quit at depth2.
    code, out, err = _review(capsys, monkeypatch, "x\ns\na\nq\n", *shards)
    assert (code, err) == (0, "")
    assert "[1/3] test_models.py::test_resnet [test_resnet] (shard shard-1/tlgraph-results)" in out
    assert "  answer a (accept), s (skip) or q (quit)" in out
    assert "  skipped test_models.py::test_resnet [test_resnet]" in out
    # Each call shows its story and the paths of its two diff drawings.
    assert "kernel_size" in out
    assert "  diff drawing: shard-1/tlgraph-results/test_models/test_resnet-graphdiff.png" in out
    assert (
        "  whole graph: shard-1/tlgraph-results/test_models/test_resnet-graphdiff-full.png" in out
    )
    assert "[3/3]" in out and "depth2" in out
    assert out.splitlines()[-1] == (
        "1 accepted, 1 skipped, 1 not reviewed; rerun pytest to check them"
    )
    assert changed(before, snapshot_state(sharded.path)) == [
        "test_models/test_rescnn[depth1].gv",
        "test_models/test_rescnn[depth1].png",
    ]
    # The accepted call is no longer pending; the end of input quits.
    after = snapshot_state(sharded.path)
    code, out, _ = _review(capsys, monkeypatch, "", *shards)
    assert code == 0
    assert "[1/2] test_models.py::test_resnet" in out
    assert out.splitlines()[-1] == "0 accepted, 0 skipped, 2 not reviewed"
    assert changed(after, snapshot_state(sharded.path)) == []


def test_review_writes_both_files_of_an_accepted_call_or_neither(
    sharded: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = snapshot_state(sharded.path)
    received = sharded.path / SHARD_1 / "test_models" / "test_resnet.png"
    received.unlink()  # the received picture is gone: the .gv alone is never written
    code, out, err = _review(capsys, monkeypatch, "a\n", "--results", SHARD_1)
    assert code == 1
    assert re.search(r"refused test_models.py::test_resnet \[test_resnet\]: the received file "
                     r"\S+test_resnet.png is missing", err), err  # fmt: skip
    assert changed(before, snapshot_state(sharded.path)) == []
    assert out.splitlines()[-1] == "0 accepted, 0 skipped, 1 refused"


def test_review_opens_the_drawings_where_a_viewer_exists(
    sharded: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[list[str]] = []

    class _Viewer:
        def __init__(self, command: list[str], **_: object) -> None:
            opened.append(command)

    monkeypatch.setattr("pytest_tlgraph.cli.review._viewer", lambda: ["viewer"])
    monkeypatch.setattr("subprocess.Popen", _Viewer)
    code, _, _ = _review(capsys, monkeypatch, "s\n", "--results", SHARD_1, "--open")
    assert code == 0
    assert [Path(c[1]).name for c in opened] == [
        "test_resnet-graphdiff.png",
        "test_resnet-graphdiff-full.png",
    ]
    monkeypatch.setattr("pytest_tlgraph.cli.review._viewer", lambda: None)
    code, out, _ = _review(capsys, monkeypatch, "q\n", "--results", SHARD_1, "--open")
    assert "no image viewer found" in out


COPY = """(async () => {
  const bars = [...document.querySelectorAll('section.failure .accept')];
  const button = bars[1].querySelector('button');
  button.click();
  await new Promise((done) => setTimeout(done, 300));
  return {
    commands: bars.map((bar) => bar.querySelector('code').textContent),
    said: button.textContent,
    selected: getSelection().toString(),
    headings: [...document.querySelectorAll('section.failure h2')].map((h) => h.textContent),
    index: [...document.querySelectorAll('nav a')].map((a) => a.textContent),
  };
})()"""


def test_the_merged_report_in_headless_chromium_copies_a_calls_accept_command(
    sharded: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.browser import Browser

    code, _, _ = tlgraph(capsys, "report", SHARD_1, SHARD_2, "-o", "merged")
    assert code == 0
    with Browser() as browser:
        browser.open(sharded.path / "merged" / "report.html")
        found = browser.call(
            "Runtime.evaluate", expression=COPY, awaitPromise=True, returnByValue=True
        )["result"]["value"]
        shot = browser.screenshot()
        assert browser.errors == []
    command = f"tlgraph accept --results {SHARD_2} test_models.py::test_rescnn --call depth1"
    assert found["commands"][1] == command
    # Copied to the clipboard, or (no clipboard for the page) selected to copy.
    assert found["said"] == "copied" or found["selected"] == command, found
    assert found["headings"][1:] == [
        f'2. test_models.py::test_rescnn, call "depth1" (shard {SHARD_2})',
        f'3. test_models.py::test_rescnn, call "depth2" (shard {SHARD_2})',
    ]
    assert found["index"] == [
        "test_models.py::test_resnet",
        'test_models.py::test_rescnn, call "depth1"',
        'test_models.py::test_rescnn, call "depth2"',
    ]
    (sharded.path / "merged-report-screenshot.png").write_bytes(shot)
