"""``tlgraph accept``: accept one failing call of the last run at a time, and nothing else.

The projects run pytest in-process (pytester) and the command in-process too
(``pytest_tlgraph.cli.main``), so each test costs a few small runs.
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path
from typing import Any

import pytest

# Kept loaded across the in-process runs (pytester drops what a run imported).
import tests.corpus.models_faithful_collapse  # noqa: F401
from pytest_tlgraph.cli import main
from pytest_tlgraph.cli.accept import selects
from pytest_tlgraph.snapshots.extensions import render_snapshot_png
from tests.outcomes import outcome_files, outcomes, read, write

pytest_plugins = ["pytester"]

#: A corpus ResNet whose stem kernel and a toy MLP whose width follow the environment,
#: and a test that never changes.
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


    def test_mlp(tlgraph_snapshot):
        tlgraph_snapshot(_mlp(int(os.environ.get("TL_WIDTH", "8"))), torch.zeros(1, 4))


    def test_same(tlgraph_snapshot):
        tlgraph_snapshot(_mlp(6), torch.zeros(1, 4), name="six")
        tlgraph_snapshot(_mlp(3), torch.zeros(1, 4), name="three")
    """
)

#: A toy project: two tests whose widths follow the environment.
TOY = textwrap.dedent(
    """
    import os

    import torch
    from torch import nn


    def _mlp(width):
        return nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 2))


    def test_a(tlgraph_snapshot):
        tlgraph_snapshot(_mlp(int(os.environ.get("TL_A", "8"))), torch.zeros(1, 4))


    def test_b(tlgraph_snapshot):
        tlgraph_snapshot(_mlp(int(os.environ.get("TL_B", "8"))), torch.zeros(1, 4))


    @__import__("pytest").mark.parametrize("width", [5, 7])
    def test_p(tlgraph_snapshot, width):
        tlgraph_snapshot(_mlp(width + int(os.environ.get("TL_P", "0"))), torch.zeros(1, 4))
    """
)

State = dict[str, tuple[str, int]]


def snapshot_state(root: Path) -> State:
    """``relative path -> (sha256, mtime_ns)`` of every file under ``__snapshots__``."""
    folder = root / "__snapshots__"
    return {
        p.relative_to(folder).as_posix(): (
            hashlib.sha256(p.read_bytes()).hexdigest(),
            p.stat().st_mtime_ns,
        )
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def changed(before: State, after: State) -> list[str]:
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def tlgraph(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``tlgraph ARGS`` in-process: the exit status, standard output and error."""
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def records(root: Path) -> list[dict[str, Any]]:
    return outcomes(root / "tlgraph-results")


@pytest.fixture
def toy(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """The toy project after ``--snapshot-update``, then a run where test_a and test_b
    fail (both widths changed)."""
    for name in ("TL_A", "TL_B", "TL_P"):
        monkeypatch.delenv(name, raising=False)
    project.makepyfile(test_toy=TOY)
    project.runpytest("--snapshot-update").assert_outcomes(passed=4)
    monkeypatch.setenv("TL_A", "9")
    monkeypatch.setenv("TL_B", "10")
    project.runpytest().assert_outcomes(passed=2, failed=2)
    return project


def test_accept_one_call_of_two_writes_only_its_snapshots(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("TL_KERNEL", raising=False)
    monkeypatch.delenv("TL_WIDTH", raising=False)
    project.makepyfile(test_models=TESTS)
    project.runpytest("--snapshot-update").assert_outcomes(passed=3)
    monkeypatch.setenv("TL_KERNEL", "5")  # the ResNet's stem: 7x7 -> 5x5
    monkeypatch.setenv("TL_WIDTH", "12")
    project.runpytest().assert_outcomes(passed=1, failed=2)

    code, out, _ = tlgraph(capsys, "report")
    assert code == 0
    lines = out.splitlines()
    head = lines.index("2 calls pending review (tlgraph accept NODEID or --all):")
    pending = lines[head + 1 : head + 3]
    assert pending[0].startswith("  test_models.py::test_mlp [test_mlp]: ")
    assert pending[1].startswith("  test_models.py::test_resnet [test_resnet]: ")
    # Each call's one-line story: the first change the structural summary names.
    assert "kernel_size" in pending[1] and "(5, 5)" in pending[1], pending[1]
    assert "8x4 -> 12x4" in pending[0], pending[0]  # the width, by its weight

    before = snapshot_state(project.path)
    code, out, err = tlgraph(capsys, "accept", "test_models.py::test_resnet")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "accepted test_models.py::test_resnet [test_resnet]: wrote "
        "__snapshots__/test_models/test_resnet.gv, __snapshots__/test_models/test_resnet.png",
        "1 call accepted; rerun pytest to check them",
    ]
    after = snapshot_state(project.path)
    assert changed(before, after) == ["test_models/test_resnet.gv", "test_models/test_resnet.png"]
    received = project.path / "tlgraph-results" / "test_models" / "test_resnet"
    assert (project.path / "__snapshots__/test_models/test_resnet.gv").read_bytes() == (
        received.with_name("test_resnet.gv").read_bytes()
    )
    assert (project.path / "__snapshots__/test_models/test_resnet.png").read_bytes() == (
        received.with_name("test_resnet.png").read_bytes()
    )
    # The failure's files stay; the report says what is accepted and what is pending.
    assert received.with_name("test_resnet-graphdiff.png").is_file()
    code, out, _ = tlgraph(capsys, "report")
    lines = out.splitlines()
    assert "1 call pending review (tlgraph accept NODEID or --all):" in lines
    assert "1 call accepted since the run (rerun pytest to check):" in lines
    assert lines[-1] == "  test_models.py::test_resnet [test_resnet]"
    assert any(line.endswith("(test_models.py::test_resnet) (accepted)") for line in lines)

    rerun = project.runpytest("-rA")
    rerun.assert_outcomes(passed=2, failed=1)
    rerun.stdout.fnmatch_lines(
        ["PASSED test_models.py::test_resnet", "FAILED test_models.py::test_mlp*"]
    )
    assert changed(after, snapshot_state(project.path)) == []


def test_the_failure_record_says_what_accepting_needs(toy: pytest.Pytester) -> None:
    (record, _) = records(toy.path)
    info = record["accept"]
    assert isinstance(info, dict)
    snapshots = toy.path / "__snapshots__" / "test_toy"
    # The snapshot files are found again from the node id and name (issue 37); the
    # record keeps where the run was, so a copied results folder accepts anywhere.
    assert record["schema"] == "tlgraph-call/1" and record["verdict"] == "failed"
    assert record["where"]["results_from_rootdir"] == "tlgraph-results"
    assert record["where"]["rootdir"] == str(toy.path.resolve())
    assert record["call"] == 0
    assert record["name"] == "test_a" and info["png_compared"] is True
    for key, suffix in (("dot_sha256", ".gv"), ("png_sha256", ".png")):
        data = (snapshots / f"test_a{suffix}").read_bytes()
        assert info[key] == hashlib.sha256(data).hexdigest()
    received = toy.path / "tlgraph-results" / "test_toy" / "test_a.gv"
    assert info["received_dot"] == "test_toy/test_a.gv"
    assert info["received_png"] == "test_toy/test_a.png"
    assert received.read_text(encoding="utf-8").startswith("digraph tlgraph {")
    assert "9" in received.read_text(encoding="utf-8")
    assert record["nodeid"] == "test_toy.py::test_a" and record["report"]["sections"]


def test_an_unknown_node_id_writes_nothing_and_names_the_pending_ones(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot_state(toy.path)
    code, out, err = tlgraph(capsys, "accept", "test_toy.py::test_a", "test_toy.py::test_zz")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("tlgraph accept: error: no failing call test_toy.py::test_zz ")
    assert "pending: test_toy.py::test_a, test_toy.py::test_b" in err
    # A passing test is not pending either: nothing of it can be accepted.
    code, _, err = tlgraph(capsys, "accept", "test_toy.py::test_p")
    assert code == 2 and "no failing call test_toy.py::test_p " in err
    assert snapshot_state(toy.path) == before
    assert not list((toy.path / "tlgraph-results" / ".records").glob("*.accepted"))


def test_all_accepts_every_failing_call(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot_state(toy.path)
    code, out, _ = tlgraph(capsys, "accept", "--all")
    assert code == 0
    assert out.splitlines()[-1] == "2 calls accepted; rerun pytest to check them"
    assert changed(before, snapshot_state(toy.path)) == [
        "test_toy/test_a.gv", "test_toy/test_a.png", "test_toy/test_b.gv", "test_toy/test_b.png",
    ]  # fmt: skip
    toy.runpytest().assert_outcomes(passed=4)


def test_a_file_selects_every_failing_call_under_it(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = tlgraph(capsys, "accept", "test_toy.py")
    assert code == 0 and out.splitlines()[-1].startswith("2 calls accepted")


def test_a_stored_file_edited_after_the_run_is_refused(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = toy.path / "__snapshots__" / "test_toy" / "test_a.gv"
    stored.write_bytes(stored.read_bytes() + b"\n")  # a hand edit after the run
    before = snapshot_state(toy.path)
    code, out, err = tlgraph(capsys, "accept", "--all")
    assert code == 1
    assert err.splitlines() == [
        "tlgraph accept: refused test_toy.py::test_a [test_a]: the stored "
        "__snapshots__/test_toy/test_a.gv changed or was removed since the run; rerun "
        "pytest and review the new failure"
    ]
    assert out.splitlines()[-1] == "1 call accepted, 1 refused; rerun pytest to check them"
    assert changed(before, snapshot_state(toy.path)) == [
        "test_toy/test_b.gv", "test_toy/test_b.png",
    ]  # fmt: skip


def test_accepting_twice_says_already_accepted(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tlgraph(capsys, "accept", "test_toy.py::test_b")[0] == 0
    before = snapshot_state(toy.path)
    code, out, err = tlgraph(capsys, "accept", "test_toy.py::test_b")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "already accepted test_toy.py::test_b [test_b]",
        "0 calls accepted, 1 already accepted",
    ]
    assert snapshot_state(toy.path) == before


def test_a_missing_snapshot_is_created(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    project.makepyfile(test_new=TOY)
    project.runpytest("-k", "test_a").assert_outcomes(failed=1, deselected=3)
    (record,) = records(project.path)
    assert "does not exist yet" in str(record["report"]["title"])
    assert record["verdict"] == "missing"
    info = record["accept"]
    assert isinstance(info, dict) and info["dot_sha256"] is None and info["png_sha256"] is None
    code, out, _ = tlgraph(capsys, "report")
    story = "snapshot __snapshots__/test_new/test_a.gv does not exist"
    assert f"  test_new.py::test_a [test_a]: {story}" in out
    code, out, _ = tlgraph(capsys, "accept", "test_new.py::test_a")
    assert code == 0, out
    assert sorted(snapshot_state(project.path)) == ["test_new/test_a.gv", "test_new/test_a.png"]
    project.runpytest("-k", "test_a").assert_outcomes(passed=1, deselected=3)


def test_a_parametrized_test_and_its_cases(
    toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TL_P", "1")
    toy.runpytest().assert_outcomes(failed=4)
    code, out, _ = tlgraph(capsys, "accept", "test_toy.py::test_p[5]")
    assert code == 0 and out.splitlines()[0].startswith("accepted test_toy.py::test_p[5] ")
    code, out, _ = tlgraph(capsys, "accept", "test_toy.py::test_p")
    assert out.splitlines() == [
        "already accepted test_toy.py::test_p[5] [test_p[5]]",
        "accepted test_toy.py::test_p[7] [test_p[7]]: wrote __snapshots__/test_toy/test_p[7].gv, "
        "__snapshots__/test_toy/test_p[7].png",
        "1 call accepted, 1 already accepted; rerun pytest to check them",
    ]


def test_xdist_records_are_accepted(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("TL_A", "TL_B", "TL_P"):
        monkeypatch.delenv(name, raising=False)
    project.makepyfile(test_toy=TOY)
    project.runpytest_subprocess("-n", "2", "--snapshot-update").assert_outcomes(passed=4)
    monkeypatch.setenv("TL_A", "9")
    monkeypatch.setenv("TL_P", "2")
    project.runpytest_subprocess("-n", "2").assert_outcomes(passed=1, failed=3)
    before = snapshot_state(project.path)
    code, out, _ = tlgraph(capsys, "accept", "test_toy.py::test_a", "test_toy.py::test_p")
    assert code == 0, out
    assert out.splitlines()[-1] == "3 calls accepted; rerun pytest to check them"
    assert len(changed(before, snapshot_state(project.path))) == 6
    project.runpytest_subprocess("-n", "2").assert_outcomes(passed=4)


def test_received_files_that_do_not_belong_together_are_refused(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    results = toy.path / "tlgraph-results" / "test_toy"
    results.joinpath("test_a.png").write_bytes(
        render_snapshot_png(results.joinpath("test_b.gv").read_text(encoding="utf-8"), "pure")
    )  # test_b's picture where test_a's belongs
    results.joinpath("test_b.gv").unlink()
    before = snapshot_state(toy.path)
    code, _, err = tlgraph(capsys, "accept", "--all")
    assert code == 1
    assert err.splitlines() == [
        "tlgraph accept: refused test_toy.py::test_a [test_a]: the received picture "
        "tlgraph-results/test_toy/test_a.png was not drawn from the received DOT "
        "tlgraph-results/test_toy/test_a.gv; rerun pytest to draw them again",
        "tlgraph accept: refused test_toy.py::test_b [test_b]: the received file "
        "tlgraph-results/test_toy/test_b.gv is missing from the results folder; rerun "
        "pytest to write it again",
    ]
    assert snapshot_state(toy.path) == before


def test_a_snapshot_outside_the_project_or_a_link_is_refused(
    toy: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (record_a, _) = outcome_files(toy.path / "tlgraph-results")
    data = read(record_a)
    # A record naming the snapshots elsewhere (an unknown field) changes nothing: the
    # files are recomputed from the node id (issue 37).
    data["accept"]["dot_snapshot"] = str(elsewhere / "test_a.gv")
    data["accept"]["dot_sha256"] = data["accept"]["png_sha256"] = None
    write(record_a, data)
    stored_b = toy.path / "__snapshots__" / "test_toy" / "test_b.png"
    target = elsewhere / "target.png"
    target.write_bytes(stored_b.read_bytes())
    stored_b.unlink()
    stored_b.symlink_to(target)
    code, _, err = tlgraph(capsys, "accept", "--all")
    assert code == 1
    refusals = err.splitlines()
    assert len(refusals) == 2
    assert (
        "test_a [test_a]: the stored __snapshots__/test_toy/test_a.gv was created" in (refusals[0])
    )
    assert refusals[1].startswith(
        "tlgraph accept: refused test_toy.py::test_b [test_b]: the snapshot "
        "__snapshots__/test_toy/test_b.png is a symbolic link"
    )
    assert list(elsewhere.iterdir()) == [target]
    assert target.read_bytes() == stored_b.read_bytes()


def test_a_snapshot_folder_that_links_elsewhere_is_refused(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = toy.path / "__snapshots__" / "test_toy"
    moved = toy.path / "moved"
    folder.rename(moved)
    folder.symlink_to(moved, target_is_directory=True)
    before = {p.name: p.read_bytes() for p in moved.iterdir()}
    code, _, err = tlgraph(capsys, "accept", "test_toy.py::test_a")
    assert code == 1
    assert err.splitlines() == [
        "tlgraph accept: refused test_toy.py::test_a [test_a]: the snapshot folder "
        "__snapshots__/test_toy is a link to moved, outside __snapshots__; replace the "
        "link with a real folder"
    ]
    assert {p.name: p.read_bytes() for p in moved.iterdir()} == before


def test_without_pngs_only_the_gv_is_written_and_a_stored_png_refuses(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("TL_A", "TL_B", "TL_P"):
        monkeypatch.delenv(name, raising=False)
    project.makepyfile(test_toy=TOY)
    project.runpytest("--snapshot-update", "-k", "test_a").assert_outcomes(passed=1, deselected=3)
    project.runpytest("--snapshot-update", "--tlgraph-no-png", "-k", "test_b").assert_outcomes(
        passed=1, deselected=3
    )
    monkeypatch.setenv("TL_A", "9")
    monkeypatch.setenv("TL_B", "10")
    project.runpytest("--tlgraph-no-png", "-k", "test_a or test_b").assert_outcomes(
        failed=2, deselected=2
    )
    before = snapshot_state(project.path)
    code, out, err = tlgraph(capsys, "accept", "--all")
    assert code == 1
    assert err.splitlines() == [
        "tlgraph accept: refused test_toy.py::test_a [test_a]: the run compared no PNG "
        "(--tlgraph-no-png, or the picture was over the size limit), and writing the .gv "
        "alone would leave __snapshots__/test_toy/test_a.png stale; rerun pytest with "
        "PNGs, or use pytest --snapshot-update"
    ]
    assert out.splitlines()[0] == (
        "accepted test_toy.py::test_b [test_b]: wrote __snapshots__/test_toy/test_b.gv"
    )
    assert changed(before, snapshot_state(project.path)) == ["test_toy/test_b.gv"]
    project.runpytest("--tlgraph-no-png", "-k", "test_b").assert_outcomes(passed=1, deselected=3)


def test_a_live_run_holding_the_folder_is_waited_for(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_tlgraph.results.runlock import RunLock

    lock = RunLock.acquire(toy.path / "tlgraph-results" / ".tlgraph-lock")
    assert lock is not None
    try:
        before = snapshot_state(toy.path)
        code, _, err = tlgraph(capsys, "accept", "--all")
    finally:
        lock.release()
    assert code == 2
    assert err == (
        "tlgraph accept: error: a pytest run is writing in tlgraph-results/ now; wait for "
        "it to end, then run tlgraph accept again\n"
    )
    assert snapshot_state(toy.path) == before


@pytest.mark.parametrize(
    ("given", "nodeid", "chosen"),
    [
        ("tests/test_m.py::test_a", "tests/test_m.py::test_a", True),
        ("tests/test_m.py::test_a", "tests/test_m.py::test_a[x]", True),
        ("tests/test_m.py::test_a", "tests/test_m.py::test_ab", False),
        ("tests/test_m.py::test_a[x]", "tests/test_m.py::test_a[xy]", False),
        ("tests/test_m.py", "tests/test_m.py::TestC::test_a", True),
        ("tests/test_m.py::TestC", "tests/test_m.py::TestC::test_a", True),
        ("tests", "tests/test_m.py::test_a", True),
        ("tests/", "tests/test_m.py::test_a", True),
        ("./tests/test_m.py", "tests/test_m.py::test_a", True),
        ("test", "tests/test_m.py::test_a", False),
        ("tests/test_m", "tests/test_m.py::test_a", False),
    ],
)
def test_which_node_ids_select_a_test(given: str, nodeid: str, chosen: bool) -> None:
    assert selects(given, nodeid) is chosen


def test_a_node_id_relative_to_a_subfolder(
    toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = toy.path / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)  # the results folder is found in the parent, as report finds it
    code, out, _ = tlgraph(capsys, "accept", "../test_toy.py::test_a")
    assert code == 0, out
    assert out.splitlines()[0] == (
        "accepted test_toy.py::test_a [test_a]: wrote ../__snapshots__/test_toy/test_a.gv, "
        "../__snapshots__/test_toy/test_a.png"
    )


def test_accept_needs_node_ids_or_all(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot_state(toy.path)
    for args in ((), ("--all", "test_toy.py::test_a")):
        code, out, err = tlgraph(capsys, "accept", *args)
        assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "tlgraph accept NODEID..." in tlgraph(capsys, "accept")[2]
    assert snapshot_state(toy.path) == before


def test_all_with_nothing_recorded_accepts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, _ = tlgraph(capsys, "accept", "--all", "--results", "results")
    assert (code, out) == (0, "no snapshot failures recorded in results/: nothing to accept\n")
    code, _, err = tlgraph(capsys, "accept", "test_m.py::test_a", "--results", "results")
    assert code == 2 and "(nothing is pending)" in err
    code, _, err = tlgraph(capsys, "accept", "--all")
    assert code == 2
    assert "no results folder tlgraph-results/" in err and "tlgraph accept --results DIR" in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["results"]
