"""A pytest plugin for ``bench_suite.py``: where a run's time goes.

Loaded with ``-p benchmarks.suite_timing`` when ``TLGRAPH_SUITE_TIMING`` names a JSON
file to write. It wraps the plugin's stages and writes, at the end of the session, the
seconds spent in each and the wall-clock instants the test loop started and ended:

* ``capture``: the fixture's capture of the model;
* ``draw``: the drawing, to canonical DOT;
* ``render``: rendering a PNG (a passing run reuses the stored PNG when it provably
  came from the same DOT, and renders none);
* ``compare``: the PNG comparison (the DOT comparison is one string equality, inside
  ``syrupy``);
* ``syrupy``: syrupy's assertions around them (reading and writing snapshot files,
  its bookkeeping), without the PNG comparison;
* ``failure report``: writing a failing call's artifacts, graph diff and record;
* ``fixture other``: the rest of the fixture calls (option checks, reuse checks, ...).

Each wrapper costs two clock reads per call.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

_spent: dict[str, float] = {}
_depth: dict[str, int] = {}
_marks: dict[str, float] = {}


def _timed(stage: str, func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # A stage re-entered from within itself is counted once.
        if _depth.get(stage):
            return func(*args, **kwargs)
        _depth[stage] = 1
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            _spent[stage] = _spent.get(stage, 0.0) + time.perf_counter() - start
            _depth[stage] = 0

    return wrapper


def _wrap(module_name: str, owner: str | None, attr: str, stage: str) -> None:
    module = sys.modules[module_name]
    target = getattr(module, owner) if owner else module
    setattr(target, attr, _timed(stage, getattr(target, attr)))


def _install() -> None:
    import pytest_tlgraph.draw
    import pytest_tlgraph.snapshots.call
    import pytest_tlgraph.snapshots.extensions
    import pytest_tlgraph.snapshots.fixture  # noqa: F401

    fixture, call = "pytest_tlgraph.snapshots.fixture", "pytest_tlgraph.snapshots.call"
    _wrap(fixture, "TlgraphSnapshot", "__call__", "fixture")
    _wrap(fixture, None, "_capture", "capture")
    _wrap("pytest_tlgraph.draw", None, "draw", "draw")
    _wrap(call, None, "render_snapshot_png", "render")
    _wrap(call, "SnapshotCall", "check", "assertions")
    _wrap(call, "SnapshotCall", "compare", "compare and report")
    _wrap("pytest_tlgraph.snapshots.extensions", "TlgraphPairExtension", "matches", "compare")


def pytest_configure(config: pytest.Config) -> None:
    """Wrap the plugin's stages (when the plugin is installed and the run uses it)."""
    if os.environ.get("TLGRAPH_SUITE_TIMING") and config.pluginmanager.has_plugin("tlgraph"):
        _install()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Note the wall-clock instant the first test starts (collection is done)."""
    _marks["loop start"] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Note the loop's end and write the totals."""
    path = os.environ.get("TLGRAPH_SUITE_TIMING")
    if not path:
        return
    _marks.setdefault("loop end", time.time())
    with open(path, "w") as out:
        json.dump({"spent": _spent, "marks": _marks}, out)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """The loop's end: after the last test's teardown."""
    yield
    if nextitem is None:
        _marks["loop end"] = time.time()
