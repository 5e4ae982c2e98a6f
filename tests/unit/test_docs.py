"""The user's guide and the README run as written: every ``python`` and ``sh`` block, in
order, in one fresh folder, with ``tlgraph`` and ``pytest`` on the path."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
RUN = {"python", "sh"}
#: Blocks that need the network or the reader's repository, and configuration.
NOT_RUN = {"console", "yaml", "ini", "text"}
CONSOLE_COMMANDS = ("pip install ", "git ", "python -m build ")

sys.path.insert(0, str(ROOT / "scripts"))
from render_options_reference import with_table  # noqa: E402

sys.path.remove(str(ROOT / "scripts"))


def blocks(path: Path) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(path.read_text(encoding="utf-8"))]


def _environment(folder: Path) -> dict[str, str]:
    """``tlgraph`` and ``pytest`` on PATH, running this checkout's package."""
    bin_dir = folder.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, module in (("tlgraph", "pytest_tlgraph"), ("pytest", "pytest")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n')
        shim.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    python_path = os.pathsep.join([str(ROOT), str(folder)])
    # PYTEST_ADDOPTS: the outer run's plugins (randomisation, xdist worker state) stay out.
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")},
        "PATH": path,
        "PYTHONPATH": python_path,
        "PYTEST_ADDOPTS": "-p no:cacheprovider -p no:randomly",
    }


def run_blocks(found: list[tuple[str, str]], folder: Path) -> list[str]:
    """Run each block in ``folder``; a ``# file: NAME`` python block is written to NAME.
    Returns the output of every block that ran; a block that fails fails the test."""
    env = _environment(folder)
    outputs = []
    for number, (language, body) in enumerate(found, start=1):
        if language not in RUN:
            continue
        first = body.splitlines()[0]
        if language == "python" and first.startswith("# file: "):
            (folder / first.removeprefix("# file: ").strip()).write_text(body, encoding="utf-8")
            continue
        command = [sys.executable, "-"] if language == "python" else ["bash", "-eo", "pipefail"]
        done = subprocess.run(
            command, input=body, cwd=folder, env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"block {number} failed:\n{body}\n{done.stdout}{done.stderr}"
        outputs.append(done.stdout + done.stderr)
    return outputs


def test_every_block_is_run_or_says_why_not() -> None:
    for path in (GUIDE, README):
        for language, body in blocks(path):
            assert language in RUN | NOT_RUN, f"{path.name}: a ```{language} block"
            if language == "console":
                for line in body.splitlines():
                    assert line.startswith(CONSOLE_COMMANDS), f"{path.name}: {line!r} would not run"


def test_the_options_table_is_generated_from_the_options() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    assert with_table(text) == text, "stale: run python scripts/render_options_reference.py"


def test_the_guide_runs(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    outputs = run_blocks(blocks(GUIDE), folder)
    text = "\n".join(outputs)
    assert "4 snapshots passed" not in text  # two: a .gv and its .png are one snapshot
    assert "2 snapshots passed." in text
    snapshots = sorted(p.name for p in (folder / "__snapshots__" / "test_models").iterdir())
    assert snapshots == [
        "test_classifier.gv",
        "test_classifier.png",
        "test_encoder.gv",
        "test_encoder.png",
    ]
    for name in ("classifier.png", "encoder.png", "classifier-diff.png", "classifier-depth1.png"):
        assert (folder / name).read_bytes().startswith(b"\x89PNG"), name
    assert (folder / "encoder.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert (folder / "encoder.gv").read_text(encoding="utf-8").startswith("digraph tlgraph {")
    assert "added dropout_1 @drop" in text  # tlgraph diff: the one added node, by address
    assert "no results folder tlgraph-results/ here or in a parent folder" in text
    assert not (folder / "tlgraph-results").exists()
    assert "bad --input-shape '1,three,32,32'" in text and "exit status 2" in text
    assert (folder / ".gitignore").read_text() == "tlgraph-results/\n"


def test_the_readme_snippet_runs_as_a_test(tmp_path: Path) -> None:
    snippets = [body for language, body in blocks(README) if language == "python"]
    assert len(snippets) == 1
    (tmp_path / "test_readme.py").write_text(snippets[0], encoding="utf-8")
    run_blocks([("sh", "pytest -q --snapshot-update\npytest -q\n")], tmp_path)
    assert len(list((tmp_path / "__snapshots__" / "test_readme").iterdir())) == 4
