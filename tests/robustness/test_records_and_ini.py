"""Items 12 and 13 of issue 37.

Item 12: with the guide's own ini setting ``tlgraph_results = build/tlgraph-results``,
the ``tlgraph accept`` command a failure prints failed in 0.4 ("the last run passed
... or wrote elsewhere"): the commands ignored the ini setting. They read it now.

Item 13: a record with a field of the wrong type crashed ``tlgraph report``, ``review``
and ``accept`` with a traceback in 0.4; now the record is left out with one line naming
it and the field."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.outcomes import outcome_files

ROOT = Path(__file__).resolve().parents[2]

pytest_plugins = ["pytester"]


def _tlgraph(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest_tlgraph", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, input=stdin,
    )  # fmt: skip


def test_the_printed_accept_command_works_with_the_ini_results_folder(
    stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    ini = stored.path / "tox.ini"
    ini.write_text(ini.read_text().rstrip("\n") + "\ntlgraph_results = build/tlgraph-results\n")
    monkeypatch.setenv("TL_HIDDEN", "32")
    result = stored.runpytest()
    result.assert_outcomes(failed=1)
    # CI=true prints the failure message again (pytest's short summary): one command.
    (printed,) = {
        line for line in result.outlines if line.startswith("to accept the received drawing")
    }
    command = re.search(r"tlgraph accept (\S+)", printed)
    assert command is not None
    assert (stored.path / "build" / "tlgraph-results").is_dir()
    done = _tlgraph("accept", command[1], cwd=stored.path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 call accepted" in done.stdout
    report = _tlgraph("report", cwd=stored.path)
    assert report.returncode == 0, report.stderr
    assert "build/tlgraph-results" in report.stdout


#: A field of a failure record and a value of the wrong type for it.
WRONG = [
    ("nodeid", 7),
    ("schema", "tlgraph-call/0"),
    ("verdict", "odd"),
    ("report.title", ["x"]),
    ("report.sections", {"a": 1}),
    ("report.sections", [["structure (snapshot -> received):", "not a list"]]),
    ("report.story", 3),
    ("places", [[1, 2]]),
    ("images", ["actual.png"]),
    ("images", {"actual": 3}),
    ("where.base", 1),
    ("where.rootdir", ["/"]),
    ("call", 1.5),
    ("structure.edits", [{"kind": "no_such_edit"}]),
    ("drift", "x"),
    ("accept", "x"),
    ("accept.received_dot", 5),
    ("accept.png_compared", "yes"),
]


@pytest.fixture(scope="module")
def failed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose one test failed; its results folder is copied per case."""
    from tests.integration.project import BASIC_TEST, INI, MODELS

    folder = tmp_path_factory.mktemp("failed")
    (folder / "tinymodels.py").write_text(MODELS)
    (folder / "tox.ini").write_text(INI)
    (folder / "test_graph.py").write_text(BASIC_TEST)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)])}
    run = [sys.executable, "-m", "pytest", "-q"]
    subprocess.run([*run, "--snapshot-update"], cwd=folder, env=env, check=True, timeout=300)
    done = subprocess.run(run, cwd=folder, env={**env, "TL_HIDDEN": "32"}, timeout=300)
    assert done.returncode == 1
    return folder


@pytest.mark.parametrize(("field", "value"), WRONG, ids=[f"{f}={v!r}" for f, v in WRONG])
def test_a_record_field_of_the_wrong_type_is_one_line_never_a_traceback(
    failed_once: Path, field: str, value: object
) -> None:
    (record,) = outcome_files(failed_once / "tlgraph-results")
    original = record.read_text()
    data = json.loads(original)
    *above, last = field.split(".")
    place = data
    for key in above:
        place = place[key]
    place[last] = value
    record.write_text(json.dumps(data))
    try:
        for args in (("report",), ("accept", "--all"), ("review",)):
            done = _tlgraph(*args, cwd=failed_once, stdin="q\n")
            out = done.stdout + done.stderr
            assert "Traceback" not in out, (args, out)
            assert done.returncode in (0, 1, 2), (args, out)
            damaged = [line for line in done.stderr.splitlines() if "left out the record" in line]
            assert len(damaged) == 1, (args, out)
            assert field.split(".")[-1] in damaged[0]
    finally:
        record.write_text(original)
