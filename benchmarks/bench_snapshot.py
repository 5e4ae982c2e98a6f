"""Benchmark: what a passing ``tlgraph_snapshot`` call costs against its parts.

Run as ``python benchmarks/bench_snapshot.py``. On each model of the example zoo it
times, as the best of a few repeats in this one process:

* ``capture``: ``capture(model, inputs)`` (eval mode);
* ``draw``: ``trace.draw(**options)`` (the canonical DOT);
* ``render``: graphviz-pure at 96 dpi;
* ``fixture``: one passing ``tlgraph_snapshot`` call inside a real pytest session
  (snapshots written once beforehand), with the skip-render shortcut (the stored PNG
  provably came from the same DOT and renderer) and with ``--tlgraph-force-render``;
  the best call over ``SESSIONS`` sessions.

It prints the times and the ratios of each fixture call to capture + draw + render: a
passing test should cost little more than capture plus one render, and with the
shortcut less than that.
"""

from __future__ import annotations

import contextlib
import gc
import io
import statistics
import sys
import tempfile
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.models import ConvNet, MnistMLP, RecurrentTagger, TinyTransformer  # noqa: E402
from pytest_tlgraph import capture  # noqa: E402
from pytest_tlgraph.render import render_png  # noqa: E402
from pytest_tlgraph.snapshots.fixture import TlgraphSnapshot  # noqa: E402

REPEATS = 15
SESSIONS = 7
CASES: dict[str, tuple[Callable[[], torch.nn.Module], str, dict[str, Any]]] = {
    "mlp": (MnistMLP, "model.example_input_array", {}),
    "mlp flops": (MnistMLP, "model.example_input_array", {"color_by": "flops"}),
    "convnet": (ConvNet, "model.example_input_array", {}),
    "recurrent stacked": (
        RecurrentTagger,
        "torch.zeros(2, 4, 6)",
        {"stack_by": True, "direction": "leftright"},
    ),
    "transformer": (TinyTransformer, "model.example_input_array", {}),
    "transformer folded": (
        TinyTransformer,
        "model.example_input_array",
        {"collapse": "max", "color_by": "flops"},
    ),
}


def best(function: Callable[[], object]) -> float:
    """Best of ``REPEATS`` wall-clock runs, in milliseconds (the garbage collector off,
    as pytest sessions leave a large heap behind)."""
    times = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(REPEATS):
            start = time.perf_counter()
            function()
            times.append(time.perf_counter() - start)
    finally:
        gc.enable()
    return min(times) * 1000


def parts(name: str) -> tuple[float, float, float]:
    """Capture, draw and render times of one case."""
    factory, inputs, options = CASES[name]
    model = factory().eval()
    args = eval(inputs, {"torch": torch, "model": model})
    trace = capture(model, args)
    dot = trace.draw(**options).dot
    return (
        best(lambda: capture(model, args)),
        best(lambda: trace.draw(**options)),
        best(lambda: render_png(dot, renderer="pure", dpi=96)),
    )


def test_module() -> str:
    """One test per case, each a single fixture call."""
    lines = ["import torch", "from examples.models import *", ""]
    for i, (name, (factory, inputs, options)) in enumerate(CASES.items()):
        lines += [
            f"def test_case_{i}(tlgraph_snapshot):  # {name}",
            f"    model = {factory.__name__}()",
            f"    tlgraph_snapshot(model, {inputs}, **{options!r})",
            "",
        ]
    return "\n".join(lines)


@contextlib.contextmanager
def timed_calls() -> Iterator[dict[str, list[float]]]:
    """Record the wall-clock time of every fixture call, by test name."""
    found: dict[str, list[float]] = defaultdict(list)
    original = TlgraphSnapshot.__call__

    def wrapper(self: TlgraphSnapshot, *args: Any, **kwargs: Any) -> Any:
        gc.disable()
        start = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            found[self._nodeid.rsplit("::", 1)[-1]].append(time.perf_counter() - start)
            gc.enable()

    TlgraphSnapshot.__call__ = wrapper  # type: ignore[method-assign]
    try:
        yield found
    finally:
        TlgraphSnapshot.__call__ = original  # type: ignore[method-assign]


def run_pytest(folder: Path, *args: str) -> None:
    """One in-process pytest session on ``folder`` (its modules dropped afterwards)."""
    out = io.StringIO()
    quiet = ["-q", "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning"]
    with contextlib.redirect_stdout(out):
        code = pytest.main([str(folder), *quiet, *args])
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(folder)):
            del sys.modules[name]
    if code != 0:
        raise SystemExit(f"pytest failed ({code}):\n{out.getvalue()}")


def fixture_times(*args: str) -> dict[str, float]:
    """Best passing fixture call per case, in milliseconds."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_bench.py").write_text(textwrap.dedent(test_module()))
        (folder / "conftest.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n")
        run_pytest(folder, "--snapshot-update")
        with timed_calls() as found:
            for _ in range(SESSIONS):
                run_pytest(folder, "-p", "no:unraisableexception", *args)
    names = list(CASES)
    return {names[int(test.split("_")[-1])]: min(times) * 1000 for test, times in found.items()}


def main() -> None:
    print(f"torch {torch.__version__}; best of {REPEATS}; times in ms\n")
    shortcut, forced = fixture_times(), fixture_times("--tlgraph-force-render")
    header = (
        f"{'case':<20}{'capture':>9}{'draw':>8}{'render':>8}{'c+d+r':>8}"
        f"{'fixture':>9}{'forced':>9}{'fix/cdr':>9}{'forced/cdr':>11}"
    )
    print(header)
    print("-" * len(header))
    ratios, forced_ratios = [], []
    for name in CASES:
        cap, drw, ren = parts(name)
        total = cap + drw + ren
        ratios.append(shortcut[name] / total)
        forced_ratios.append(forced[name] / total)
        print(
            f"{name:<20}{cap:>9.1f}{drw:>8.1f}{ren:>8.1f}{total:>8.1f}"
            f"{shortcut[name]:>9.1f}{forced[name]:>9.1f}"
            f"{ratios[-1]:>9.2f}{forced_ratios[-1]:>11.2f}"
        )
    print(
        f"\nmedian fixture / (capture + draw + render): {statistics.median(ratios):.2f} "
        f"with the skip-render shortcut, {statistics.median(forced_ratios):.2f} forced"
    )


if __name__ == "__main__":
    main()
