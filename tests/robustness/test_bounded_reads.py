"""Items 7 and 10 of issue 37: every reader of a stored or recorded file opens it
without blocking, refuses anything but a regular file, and reads at most
``limits.MAX_FILE_BYTES``; ``tlgraph report`` never opens a path outside the results
folders it reads.

0.4 put any PNG a record named (``../``, an absolute path) into the merged report.html,
hung on a FIFO a record named, read ``/dev/zero`` until memory ran out (``tlgraph
report`` and ``tlgraph diff``), and hung forever, plain and update runs alike, on a FIFO
where a stored ``.gv`` or ``.png`` belongs. The runs here are subprocesses with a
timeout: a hang fails the test instead of the suite."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.project import snapshot_dir

ROOT = Path(__file__).resolve().parents[2]

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _tlgraph(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest_tlgraph", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def failed(stored: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The results folder of a failing run (its record names its images)."""
    monkeypatch.setenv("TL_HIDDEN", "32")
    stored.runpytest().assert_outcomes(failed=1)
    monkeypatch.delenv("TL_HIDDEN")
    return stored.path / "tlgraph-results"


def _point_images(results: Path, **images: str) -> None:
    (record,) = (results / ".records").glob("*.outcome")
    data = json.loads(record.read_text())
    data["images"] = images
    record.write_text(json.dumps(data))


def test_report_never_inlines_an_image_outside_the_results_folder(
    stored: pytest.Pytester, failed: Path
) -> None:
    secret = stored.path / "private.png"
    shutil.copy(snapshot_dir(stored) / "test_mlp.png", secret)
    inlined = base64.b64encode(secret.read_bytes()[:300]).decode("ascii")[:200]
    _point_images(failed, actual="../private.png", expected=str(secret))
    done = _tlgraph("report", "tlgraph-results", "-o", "merged", cwd=stored.path)
    assert done.returncode == 0, done.stderr
    page = (stored.path / "merged" / "report.html").read_text()
    assert inlined not in page


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_report_refuses_a_record_image_that_is_no_regular_file(
    stored: pytest.Pytester, failed: Path, kind: str
) -> None:
    if kind == "fifo":
        os.mkfifo(failed / "trap.png")
    else:
        (failed / "trap.png").symlink_to("/dev/zero")
    _point_images(failed, actual="trap.png")
    done = _tlgraph("report", "tlgraph-results", "-o", "merged", cwd=stored.path)
    assert done.returncode == 0, done.stderr
    assert (stored.path / "merged" / "report.html").is_file()


@pytest.mark.parametrize("given", ["/dev/zero", "fifo.gv"])
def test_diff_refuses_a_device_or_fifo_in_one_line(stored: pytest.Pytester, given: str) -> None:
    os.mkfifo(stored.path / "fifo.gv")
    gv = str(snapshot_dir(stored) / "test_mlp.gv")
    done = _tlgraph("diff", given, gv, cwd=stored.path)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "not a regular file" in done.stderr, done.stderr


@pytest.mark.parametrize("suffix", [".gv", ".png"])
@pytest.mark.parametrize("update", [False, True])
def test_a_fifo_where_a_stored_file_belongs_never_hangs_a_run(
    stored: pytest.Pytester, suffix: str, update: bool
) -> None:
    stored_file = snapshot_dir(stored) / f"test_mlp{suffix}"
    stored_file.unlink()
    os.mkfifo(stored_file)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(stored.path)])}
    args = ["--snapshot-update"] if update else []
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=stored.path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    assert "FIFO" in done.stdout
    assert "Traceback" not in done.stdout
    assert stored_file.is_fifo(), "the FIFO is the user's: it stays"
