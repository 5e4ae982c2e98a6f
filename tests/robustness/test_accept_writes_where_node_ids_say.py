"""Items 4 and 5 of issue 37: ``tlgraph accept`` writes only to the snapshot files a
record's node id and snapshot name give, in the project the call was recorded by.

0.4 wrote wherever a record's accept entry said, as long as it was a ``.gv``/``.png``
pair inside the project (a record naming ``docs/logo.png`` overwrote the project's
logo), and a project reading a results folder shared with another project accepted
that project's drawing into its own snapshot (equal baselines pass the hash check)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from pytest_tlgraph.cli import main
from tests.integration.project import BASIC_TEST, INI, MODELS
from tests.outcomes import outcome_files

pytest_plugins = ["pytester"]


def _tlgraph(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().err


def test_a_record_naming_another_file_of_the_project_is_refused(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TL_HIDDEN", "32")
    stored.runpytest().assert_outcomes(failed=1)
    logo = stored.path / "docs" / "logo.png"
    logo.parent.mkdir()
    logo.write_bytes(b"\x89PNG the project's logo")
    (record,) = outcome_files(stored.path / "tlgraph-results")
    data = json.loads(record.read_text())
    info = data["accept"]
    for suffix, key in ((".gv", "dot"), (".png", "png")):
        info[f"{key}_snapshot"] = str(stored.path / "docs" / f"logo{suffix}")
        info[f"{key}_snapshot_rel"] = f"docs/logo{suffix}"
    info["dot_sha256"] = None
    info["png_sha256"] = hashlib.sha256(logo.read_bytes()).hexdigest()
    record.write_text(json.dumps(data))
    code, err = _tlgraph(capsys, "accept", "--all")
    assert code == 1, err
    assert logo.read_bytes() == b"\x89PNG the project's logo"
    assert not (stored.path / "docs" / "logo.gv").exists()
    assert "refused test_graph.py::test_mlp" in err


def test_a_record_naming_a_snapshot_its_test_does_not_store_is_refused(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TL_HIDDEN", "32")
    stored.runpytest().assert_outcomes(failed=1)
    (record,) = outcome_files(stored.path / "tlgraph-results")
    data = json.loads(record.read_text())
    data["name"] = "../../docs/logo"
    record.write_text(json.dumps(data))
    code, err = _tlgraph(capsys, "accept", "--all")
    assert code == 1
    assert "does not store" in err and "Traceback" not in err
    assert not (stored.path / "docs").exists()


def test_two_projects_sharing_a_results_folder_never_cross_accept(
    stored: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    shared = tmp_path_factory.mktemp("shared") / "results"
    other = tmp_path_factory.mktemp("project-b")
    (other / "tinymodels.py").write_text(MODELS)
    (other / "tox.ini").write_text(INI)
    (other / "test_graph.py").write_text(BASIC_TEST)
    shutil.copytree(stored.path / "__snapshots__", other / "__snapshots__")
    ours = stored.path / "__snapshots__" / "test_graph"
    before = {p.name: p.read_bytes() for p in ours.iterdir()}
    # Project B's model changed; its run fails and records into the shared folder.
    monkeypatch.setenv("TL_HIDDEN", "32")
    monkeypatch.chdir(other)
    stored.runpytest(f"--tlgraph-results={shared}", str(other)).assert_outcomes(failed=1)
    monkeypatch.chdir(stored.path)
    code, err = _tlgraph(capsys, "accept", "--all", "--results", str(shared))
    assert code == 1
    assert "recorded by the project" in err
    assert {p.name: p.read_bytes() for p in ours.iterdir()} == before
