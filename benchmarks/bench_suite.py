"""Benchmark: what the plugin adds to a test suite's wall time, run as a user runs it.

Run as ``python benchmarks/bench_suite.py [--repeats N]``. The example zoo
(``examples/models.py`` and ``examples/test_zoo.py``) is copied into a fresh
directory without stored snapshots, and beside it the same suite is written with plain
``assert model(x).shape == ...`` tests (one forward pass for each snapshot call). Each
``python -m pytest`` run is a subprocess, timed wall-clock, best of ``N``, the two
suites in alternation:

* ``first run``: with ``--snapshot-update`` (every snapshot is written);
* ``passing``: nothing changed;
* ``passing -n 2``: the same with pytest-xdist on two workers;
* ``failing``: after a one-layer change in ``models.py`` (MnistMLP's first activation
  becomes a GELU), which the snapshots must catch and the plain shape asserts cannot.

It prints both suites' times and the plugin's ratio to the plain suite. The target is a
passing run costing at most 1.5x the plain suite; the exit status is 1 when it is
missed or when a run's outcome is not the expected one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.5
LAYER_BEFORE = "self.act1 = nn.ReLU()"
LAYER_AFTER = "self.act1 = nn.GELU()"

PLAIN_SUITE = '''\
"""The example zoo's models with plain shape asserts, one per snapshot call."""

import torch

from examples.models import ConvNet, MnistMLP, RecurrentTagger, TinyTransformer


def test_mlp():
    model = MnistMLP()
    for _ in range(4):
        assert model(model.example_input_array).shape == (4, 10)


def test_convnet():
    model = ConvNet()
    for _ in range(2):
        assert model(model.example_input_array).shape == (2, 10)
    assert model(torch.zeros(1, 3, 64, 64)).shape == (1, 10)


def test_convnet_dark_page():
    model = ConvNet()
    assert model(model.example_input_array).shape == (2, 10)


def test_recurrent():
    model, sequence = RecurrentTagger(), torch.zeros(2, 4, 6)
    for _ in range(2):
        assert model(sequence).shape == (2, 4, 4)


def test_transformer():
    model = TinyTransformer()
    for _ in range(2):
        assert model(model.example_input_array).shape == (2, 8, 100)
'''


class Run(NamedTuple):
    """One kind of pytest run: its name, extra arguments and expected exit codes
    (plugin suite, plain suite)."""

    name: str
    args: tuple[str, ...]
    expected: tuple[int, int]
    changed: bool = False


RUNS = (
    Run("first run", ("--snapshot-update",), (0, 0)),
    Run("passing", (), (0, 0)),
    Run("passing -n 2", ("-n", "2"), (0, 0)),
    Run("failing", (), (1, 0), changed=True),
)


def make_suites(base: Path) -> tuple[Path, Path]:
    """The zoo with the plugin (no snapshots yet) and the plain suite, each a project."""
    plugin, plain = base / "plugin", base / "plain"
    for project in (plugin, plain):
        (project / "examples").mkdir(parents=True)
        shutil.copy(ROOT / "examples" / "models.py", project / "examples" / "models.py")
        (project / "pytest.ini").write_text("[pytest]\ntestpaths = examples\n")
    shutil.copy(ROOT / "examples" / "test_zoo.py", plugin / "examples" / "test_zoo.py")
    (plain / "examples" / "test_plain.py").write_text(PLAIN_SUITE)
    return plugin, plain


def pytest_run(project: Path, args: tuple[str, ...]) -> tuple[float, int]:
    """Wall time and exit code of ``python -m pytest -q`` in ``project``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's plugin
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *args],
        cwd=project,
        env=env,
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - start, done.returncode


def run_once(project: Path, run: Run, pristine: str) -> tuple[float, int]:
    """One run of ``run`` in ``project``; models.py is restored afterwards."""
    models = project / "examples" / "models.py"
    if run.name == "first run":
        shutil.rmtree(project / "examples" / "__snapshots__", ignore_errors=True)
    if run.changed:
        models.write_text(pristine.replace(LAYER_BEFORE, LAYER_AFTER, 1))
    try:
        return pytest_run(project, run.args)
    finally:
        models.write_text(pristine)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each kind")
    repeats = parser.parse_args(argv).repeats
    best: dict[tuple[str, int], float] = {}
    failed = False
    pristine = (ROOT / "examples" / "models.py").read_text()
    if LAYER_BEFORE not in pristine:
        raise SystemExit(f"examples/models.py no longer has {LAYER_BEFORE!r}: update this script")
    with tempfile.TemporaryDirectory(prefix="tlgraph-suite-") as tmp:
        suites = make_suites(Path(tmp))
        for _ in range(repeats):
            for run in RUNS:
                for side, project in enumerate(suites):
                    elapsed, code = run_once(project, run, pristine)
                    if code != run.expected[side]:
                        suite = ("plugin", "plain")[side]
                        print(
                            f"{run.name}, {suite} suite: exit {code}, expected "
                            f"{run.expected[side]}",
                            file=sys.stderr,
                        )
                        failed = True
                    key = (run.name, side)
                    best[key] = min(best.get(key, float("inf")), elapsed)
    print(f"\n{'run':<16}{'plugin (s)':>12}{'plain (s)':>11}{'ratio':>8}  verdict")
    for run in RUNS:
        plugin, plain = best[(run.name, 0)], best[(run.name, 1)]
        verdict = ""
        if run.name.startswith("passing"):
            met = plugin / plain <= TARGET
            failed |= not met
            verdict = f"{TARGET}x target {'met' if met else 'MISSED'}"
        print(f"{run.name:<16}{plugin:>12.2f}{plain:>11.2f}{plugin / plain:>7.2f}x  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
