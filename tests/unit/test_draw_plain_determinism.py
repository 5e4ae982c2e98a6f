"""Plain draws are byte-identical across processes and ``PYTHONHASHSEED`` values
(ENCODING.md §2.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from pytest_tlgraph import capture
from tests.models import CNN, seeded

ROOT = Path(__file__).resolve().parents[2]

# Builds the same drawings in any process: fixed weights, fixed inputs.
SCRIPT = """
import json, sys, torch
from pytest_tlgraph import capture
from tests.models import CNN, HostileCluster, RecurrentCell, SharedModule, WithBuffer, seeded

def drawings():
    torch.manual_seed(0)
    cases = [
        (seeded(CNN()).eval(), torch.randn(2, 3, 8, 8)),
        (seeded(RecurrentCell(steps=3)), torch.randn(2, 8)),
        (seeded(SharedModule()), torch.randn(2, 6)),
        (HostileCluster(), torch.randn(1, 4)),
        (WithBuffer(), torch.randn(2, 4)),
    ]
    out = []
    for model, x in cases:
        trace = capture(model, x)
        out += [trace.draw().dot, trace.draw(view="rolled", page="dark").dot]
    return out

if __name__ == "__main__":
    json.dump(drawings(), sys.stdout)
"""


def _in_process() -> list[str]:
    namespace: dict[str, object] = {}
    exec(compile(SCRIPT, "<determinism>", "exec"), namespace)
    drawings = namespace["drawings"]
    assert callable(drawings)
    result: list[str] = drawings()
    return result


def test_the_script_draws_what_this_process_draws() -> None:
    # Guards the script itself: its drawings are real plain draws of these models.
    torch.manual_seed(0)
    dots = _in_process()
    assert len(dots) == 10 and len(set(dots)) == 10
    torch.manual_seed(0)
    assert dots[0] == capture(seeded(CNN()).eval(), torch.randn(2, 3, 8, 8)).draw().dot
    assert all(d.startswith("digraph tlgraph {\n") for d in dots)


def test_plain_draws_are_identical_across_processes_and_hash_seeds() -> None:
    expected = _in_process()
    runs = {}
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        runs[seed] = subprocess.Popen(
            [sys.executable, "-c", SCRIPT],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    for seed, process in runs.items():
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err.decode()
        dots = json.loads(out)
        for index, (got, want) in enumerate(zip(dots, expected, strict=True)):
            assert got == want, f"PYTHONHASHSEED={seed}, drawing {index} differs"
