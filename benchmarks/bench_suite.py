"""Benchmark: what the plugin adds to a test suite's wall time, run as a user runs it.

Run as ``python benchmarks/bench_suite.py [--repeats N] [--suites zoo,corpus]``. Two
suites (see ``suite_projects.py``) are each written twice into a fresh directory without
stored snapshots: with the plugin's ``tlgraph_snapshot`` and with plain
``assert model(x).shape == ...`` tests of the same models:

* ``zoo``: the example zoo (``examples/models.py``, ``examples/test_zoo.py``);
* ``corpus``: ten real models of ``tests/corpus`` (BERT, GPT-2, T5, Llama, Mistral,
  Qwen2, ViT, Whisper, Mamba, ``nn.Transformer``), one snapshot each.

Each ``python -m pytest`` run is a subprocess, timed wall-clock, best of ``N``, the two
sides in alternation, four ways:

* ``first run``: with ``--snapshot-update`` (every snapshot is written);
* ``passing``: nothing changed;
* ``passing -n 2``: the same with pytest-xdist on two workers;
* ``failing``: after a one-layer change, which the snapshots must catch and the plain
  shape asserts cannot.

It prints both sides' times, the plugin's ratio to the plain suite and its share of the
plugin run (``(plugin - plain) / plugin``), then where the plugin run's time goes: pytest
start-up (process start to the first test, torch and the models' imports included),
capture, draw, render, compare, syrupy, the failure report, the rest of the fixture,
the models' own test code and the session's end (measured by ``suite_timing.py`` in
the best single-process run of each kind). The target is a passing run costing at
most 1.5x the plain suite; the exit status is 1 when it is missed or when a run's
outcome is not the expected one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite_projects import ROOT, Suite, corpus_shapes, make_corpus, make_zoo

TARGET = 1.5


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


class Timed(NamedTuple):
    """One run's wall time, exit code and (single-process runs) its stage timings."""

    seconds: float
    code: int
    stages: dict[str, float]


def pytest_run(project: Path, args: tuple[str, ...], timing: Path | None) -> Timed:
    """Wall time, exit code and stage timings of ``python -m pytest -q`` in ``project``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's plugin
    extra: tuple[str, ...] = ()
    if timing is not None:
        env["TLGRAPH_SUITE_TIMING"] = str(timing)
        extra = ("-p", "benchmarks.suite_timing")
        timing.unlink(missing_ok=True)
    launched = time.time()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *extra, *args],
        cwd=project,
        env=env,
        capture_output=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    ended = launched + seconds
    stages: dict[str, float] = {}
    if timing is not None and timing.exists():
        stages = _stages(json.loads(timing.read_text()), launched, ended, seconds)
    return Timed(seconds, done.returncode, stages)


def _stages(data: dict[str, Any], launched: float, ended: float, total: float) -> dict[str, float]:
    """The run's time by stage (see the module docstring), summing to ``total``."""
    spent, marks = data["spent"], data["marks"]
    get = spent.get
    start = marks.get("loop start", launched) - launched
    end = ended - marks.get("loop end", ended)
    assertions, report_all = get("assertions", 0.0), get("compare and report", 0.0)
    compare = get("compare", 0.0)
    report = max(0.0, report_all - assertions)
    named = get("capture", 0.0) + get("draw", 0.0) + get("render", 0.0)
    fixture = get("fixture", 0.0)
    if not spent:  # a plain suite: no plugin stage ran
        return {"pytest start-up": start, "session end": end, "test code": total - start - end}
    stages = {
        "pytest start-up": start,
        "capture": get("capture", 0.0),
        "draw": get("draw", 0.0),
        "render": get("render", 0.0),
        "compare": compare,
        "syrupy": max(0.0, assertions - compare),
        "failure report": report,
        "fixture other": max(0.0, fixture - named - report_all - max(0.0, assertions - report_all)),
        "session end": end,
    }
    stages["test code"] = max(0.0, total - sum(stages.values()))
    return stages


def run_once(suite: Suite, side: int, run: Run, timing: Path | None) -> Timed:
    """One run of ``run`` on one side of ``suite``; the changed file is restored."""
    project = (suite.plugin, suite.plain)[side]
    changed = project / suite.changed_file
    pristine = changed.read_text()
    if run.name == "first run":
        shutil.rmtree(project / "examples" / "__snapshots__", ignore_errors=True)
    if run.changed:
        changed.write_text(pristine.replace(suite.before, suite.after, 1))
    try:
        return pytest_run(project, run.args, None if "-n" in run.args else timing)
    finally:
        changed.write_text(pristine)


def measure(suite: Suite, repeats: int, timing: Path) -> tuple[dict[tuple[str, int], Timed], bool]:
    """Best of ``repeats`` of every run kind on both sides; whether any outcome was wrong."""
    best: dict[tuple[str, int], Timed] = {}
    failed = False
    for _ in range(repeats):
        for run in RUNS:
            for side in (0, 1):
                timed = run_once(suite, side, run, timing)
                if timed.code != run.expected[side]:
                    print(
                        f"{suite.name} {run.name}, {('plugin', 'plain')[side]} suite: exit "
                        f"{timed.code}, expected {run.expected[side]}",
                        file=sys.stderr,
                    )
                    failed = True
                key = (run.name, side)
                if key not in best or timed.seconds < best[key].seconds:
                    best[key] = timed
    return best, failed


def report(suite: Suite, best: dict[tuple[str, int], Timed]) -> bool:
    """Print the suite's tables; whether every passing run met the target."""
    met_all = True
    print(f"\n{suite.name} suite")
    print(f"{'run':<16}{'plugin (s)':>12}{'plain (s)':>11}{'ratio':>8}{'share':>8}  verdict")
    for run in RUNS:
        plugin, plain = best[(run.name, 0)].seconds, best[(run.name, 1)].seconds
        verdict = ""
        if run.name.startswith("passing"):
            met = plugin / plain <= TARGET
            met_all &= met
            verdict = f"{TARGET}x target {'met' if met else 'MISSED'}"
        share = (plugin - plain) / plugin
        print(
            f"{run.name:<16}{plugin:>12.2f}{plain:>11.2f}{plugin / plain:>7.2f}x"
            f"{share:>7.0%}  {verdict}"
        )
    kinds = [run.name for run in RUNS if "-n" not in run.args]
    stages = list(best[(kinds[0], 0)].stages)
    if "test code" in stages:  # last, after the session's end
        stages.remove("test code")
        stages.append("test code")
    if not stages:
        return met_all
    print(f"\nwhere the {suite.name} runs' time goes (s; plugin | plain)")
    print(f"{'stage':<16}" + "".join(f"{name:>22}" for name in kinds))
    for stage in stages:
        row = f"{stage:<16}"
        for name in kinds:
            plugin = best[(name, 0)].stages.get(stage, 0.0)
            plain = best[(name, 1)].stages.get(stage)
            row += f"{plugin:>13.2f} | " + ("    -" if plain is None else f"{plain:>5.2f}") + " "
        print(row)
    return met_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each kind")
    parser.add_argument("--suites", default="zoo,corpus", help="comma-separated: zoo, corpus")
    options = parser.parse_args(argv)
    chosen = options.suites.split(",")
    if options.repeats < 1 or not set(chosen) <= {"zoo", "corpus"}:
        parser.error("--repeats takes a positive count, --suites a list of zoo and corpus")
    failed = False
    with tempfile.TemporaryDirectory(prefix="tlgraph-suite-") as tmp:
        base = Path(tmp)
        timing = base / "timing.json"
        for name in chosen:
            suite = make_zoo(base) if name == "zoo" else make_corpus(base, corpus_shapes)
            best, wrong = measure(suite, options.repeats, timing)
            failed |= wrong
            failed |= not report(suite, best)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
