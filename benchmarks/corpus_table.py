"""The corpus table: every ``tests/corpus`` model with its op count, capture time,
plain forward time, and our FLOP total against torch's counter.

Run as ``python benchmarks/corpus_table.py [--repeats N] [names...]``. Times are the best
of N calls in this one process (1 thread); ``FLOPs`` is the sum of ``flops_forward`` over
the ops torch's counter measures, ``counter`` is ``FlopCounterMode``'s total for the
same forward with the math attention backend and oneDNN off. The exit status is 1 when
any model's two FLOP totals differ.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pytest_tlgraph import capture
from pytest_tlgraph.capture.flops import COUNTED_FUNCS
from tests.corpus import build, names


def best(fn: Callable[[], Any], repeats: int) -> float:
    """The fastest of ``repeats`` calls after one warm-up, in seconds."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("names", nargs="*")
    options = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    header = f"{'model':<28}{'ops':>5}{'capture':>12}{'forward':>12}{'FLOPs':>12}{'counter':>12}"
    print(header)
    print("-" * len(header))
    mismatched = []
    for name in options.names or names():
        case = build(name)

        def forward(case: Any = case) -> Any:
            return case.run()

        def traced(case: Any = case) -> Any:
            return capture(case.model, case.inputs, kwargs=case.kwargs)

        trace = traced()
        ours = sum(op.flops_forward or 0 for op in trace.ops if op.func in COUNTED_FUNCS)
        with (
            sdpa_kernel(SDPBackend.MATH),
            torch.backends.mkldnn.flags(enabled=False),
            FlopCounterMode(display=False) as counter,
        ):
            case.run()
        theirs = int(counter.get_total_flops())
        ops = sum(op.has_function for op in trace.ops)
        print(
            f"{name:<28}{ops:>5}{best(traced, options.repeats) * 1e3:>10.1f}ms"
            f"{best(forward, options.repeats) * 1e3:>10.2f}ms{ours:>12}{theirs:>12}",
            flush=True,
        )
        if ours != theirs:
            mismatched.append(name)
    if mismatched:
        print("FLOP totals differ: " + ", ".join(mismatched))
        return 1
    print("FLOP totals equal torch's counter on every model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
