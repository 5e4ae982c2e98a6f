"""Benchmark: capture of full-size production configs on the meta device against their
meta forward.

Run as ``python benchmarks/bench_meta_capture.py [--repeats N] [--models a,b]``. For
each config of ``tests/corpus/production_configs.py`` (Llama-3-8B, Mixtral-8x7B,
DeepSeek-V3, built on the meta device from their config values, nothing downloaded) a
fresh interpreter builds the model and, after one untimed call of each, runs N rounds
(10 by default) of, in turn:

* the meta forward as the capture runs it (eval mode, autograd on);
* the same forward under ``torch.no_grad()``;
* ``capture(model, ids, kwargs=...)``;
* ``capture(...).draw(collapse="auto").dot``.

Each cell is the best of its N rounds, in CPU seconds of the process (the meta forward
runs on one thread, so on an idle machine these equal the wall-clock times; on a shared
one they leave out the time spent waiting for a core). The rounds interleave the
runners, so a burst of load slows one round of every runner, not all the rounds of
one: the ratios are of calls made side by side. The wall-clock ratio is printed beside
it. Target: the capture costs at most 1.5x the meta forward it runs; the exit status is
1 when a config misses it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_capture import in_fresh_process

TARGET = 1.5


def _rounds(runners: dict[str, Callable[[], Any]], repeats: int) -> dict[str, Any]:
    """Best CPU and wall-clock seconds of each runner over ``repeats`` interleaved rounds,
    after one untimed call of each."""
    for run in runners.values():
        run()
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    wall: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            start_cpu, start = time.process_time(), time.perf_counter()
            run()
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {
        **{name: min(times) for name, times in cpu.items()},
        **{f"{name}_wall": min(times) for name, times in wall.items()},
    }


def worker(name: str, repeats: int) -> None:
    """Build ``name`` on meta and time its forwards and captures in this process."""
    warnings.simplefilter("ignore")
    import torch

    from pytest_tlgraph import capture
    from tests.corpus.production_configs import build_production, meta_inputs

    start = time.perf_counter()
    model = build_production(name)
    build = time.perf_counter() - start
    args, kwargs = meta_inputs()

    def no_grad() -> Any:
        with torch.no_grad():
            return model(*args, **kwargs)

    runners: dict[str, Callable[[], Any]] = {
        "forward": lambda: model(*args, **kwargs),
        "no_grad": no_grad,
        "capture": lambda: capture(model, args, kwargs=kwargs),
        "draw": lambda: capture(model, args, kwargs=kwargs).draw(collapse="auto").dot,
    }
    result = {
        "build": build,
        **_rounds(runners, repeats),
        "ops": sum(op.has_function for op in capture(model, args, kwargs=kwargs).ops),
    }
    print(json.dumps(result))


def measure(name: str, repeats: int) -> dict[str, float]:
    """Run :func:`worker` in a fresh interpreter."""
    return in_fresh_process(__file__, (name,), repeats)


def main() -> int:
    from tests.corpus.production_configs import PRODUCTION

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--models", default=",".join(PRODUCTION))
    parser.add_argument("--worker", metavar="MODEL")
    options = parser.parse_args()
    if options.repeats < 1:
        parser.error("--repeats takes a positive count")
    if options.worker:
        worker(options.worker, options.repeats)
        return 0
    print(
        f"meta device, best of {options.repeats} interleaved rounds after one untimed call, "
        "CPU seconds, fresh process each\n"
    )
    header = (
        f"{'config':<14}{'ops':>6}{'build':>9}{'forward':>10}{'no_grad':>10}{'capture':>10}"
        f"{'+auto DOT':>11}{'vs fwd':>8}{'target':>8}{'wall':>8}{'vs no_grad':>12}"
    )
    print(header)
    print("-" * len(header))
    missed = []
    for name in options.models.split(","):
        r = measure(name, options.repeats)
        ratio = r["capture"] / r["forward"]
        wall = r["capture_wall"] / r["forward_wall"]
        verdict = "met" if ratio <= TARGET else "MISSED"
        print(
            f"{name:<14}{int(r['ops']):>6}{r['build']:>8.1f}s{r['forward']:>9.2f}s"
            f"{r['no_grad']:>9.2f}s{r['capture']:>9.2f}s{r['draw']:>10.2f}s"
            f"{ratio:>7.2f}x{verdict:>8}{wall:>7.2f}x{r['capture'] / r['no_grad']:>11.2f}x",
            flush=True,
        )
        if ratio > TARGET:
            missed.append(f"{name}: {ratio:.2f}x")
    print(
        f"\nforward: the meta forward as the capture runs it (autograd on); vs fwd: capture /"
        f" forward in CPU time, target <= {TARGET}x; wall: the same ratio in wall-clock time;"
        "\nvs no_grad: capture / the forward under no_grad"
    )
    if missed:
        print(f"target missed (capture <= {TARGET}x the meta forward): " + "; ".join(missed))
        return 1
    print(f"target met: capture <= {TARGET}x the meta forward on every config")
    return 0


if __name__ == "__main__":
    sys.exit(main())
