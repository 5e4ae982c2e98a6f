"""The house read: how big the package is, where, and how much of it one failing call runs.

``python scripts/house.py`` prints one table and exits 1 when a budget is over:

* **lines**: physical lines of every ``.py`` file, as ``wc -l`` counts them (newline
  characters; blank lines, comments and docstrings included), for the package and for each
  top-level subpackage (``(top)`` is the modules directly in ``pytest_tlgraph/``).
  Non-blank lines are shown beside them, for reference only.
* **long functions**: every function or method (nested ones too) whose ``def`` line to
  last line (``end_lineno - lineno + 1``, decorators left out) spans more than
  :data:`FUNCTION_LIMIT` lines.
* **Any**: in ``snapshots/`` and ``cli/``, every ``dict[str, Any]`` and
  ``Mapping[str, Any]`` (any of ``dict``, ``Dict``, ``Mapping``, ``MutableMapping``), and
  every other use of the name ``Any`` ("bare"), read from the syntax tree wherever it
  stands (annotations, aliases, casts); the ``import`` of ``Any`` is not a use.
* **modules per failing call**: a throw-away project (its own ``pytest.ini``, outside the
  repository) holds one test that calls ``tlgraph_snapshot`` once on the corpus model
  ``resnet18_basic``; a first run stores its snapshots with ``--snapshot-update``, a
  second run with every activation swapped for ``SiLU`` (the corpus change ``silu``)
  fails. During the second run ``sys.setprofile`` and ``threading.setprofile`` record
  every Python code object that starts running (a function, a generator resumed, a
  module's body on import) whose file lies in the package, and the package modules those
  files are, in three nested scopes: **call** (inside the one ``tlgraph_snapshot(...)``
  call), **test** (the test item: fixture set-up, the call, the teardown that raises the
  mismatch) and **run** (from the end of collection to the end of ``pytest_unconfigure``:
  the test plus the session's end, where the terminal summary and the results folder
  are written). Collection and plugin loading are left out. Code run in a subprocess
  (``dot``) is not Python and not counted. The budget applies to **run**, what one
  failing call costs from the first hook after collection to the last line printed.

A subpackage's ``__init__`` counts in that subpackage.

``--no-trace`` skips the two pytest runs (seconds instead of about a minute);
``--modules`` also lists the modules of the run scope by subpackage.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_tlgraph"
#: The longest a function may be, in lines.
FUNCTION_LIMIT = 80
#: Most lines the whole package may hold.
PACKAGE_BUDGET = 21_000
#: Most lines ``snapshots/`` may hold.
SNAPSHOTS_BUDGET = 5_000
#: Most package modules one failing call may run code in (the run scope).
MODULES_BUDGET = 40
#: The subpackages whose ``Any`` count is read.
ANY_FOLDERS = ("snapshots", "cli")
_MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}

__all__ = [
    "FUNCTION_LIMIT",
    "LongFunction",
    "any_uses",
    "failing_call_modules",
    "line_counts",
    "long_functions",
]


def _sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _group(package: Path, path: Path) -> str:
    parts = path.relative_to(package).parts
    return parts[0] if len(parts) > 1 else "(top)"


def line_counts(package: Path) -> dict[str, tuple[int, int]]:
    """``group -> (physical lines, non-blank lines)`` for every top-level subpackage of
    ``package`` and ``(top)``, plus ``total``."""
    counts: dict[str, tuple[int, int]] = {}
    for path in _sources(package):
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        filled = sum(1 for line in text.splitlines() if line.strip())
        for key in (_group(package, path), "total"):
            old = counts.get(key, (0, 0))
            counts[key] = (old[0] + lines, old[1] + filled)
    return counts


@dataclass(frozen=True)
class LongFunction:
    """A function over the limit: where it starts and how long it is."""

    path: str
    line: int
    name: str
    lines: int


def _functions(node: ast.AST, prefix: str) -> Iterator[tuple[str, ast.AST]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + child.name, child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def long_functions(package: Path, limit: int = FUNCTION_LIMIT) -> list[LongFunction]:
    """Every function or method in ``package`` longer than ``limit`` lines, longest
    first."""
    found = []
    for path in _sources(package):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, node in _functions(tree, ""):
            assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            span = (node.end_lineno or node.lineno) - node.lineno + 1
            if span > limit:
                where = path.relative_to(package.parent).as_posix()
                found.append(LongFunction(where, node.lineno, name, span))
    return sorted(found, key=lambda f: (-f.lines, f.path, f.line))


def _is_any(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "Any") or (
        isinstance(node, ast.Attribute) and node.attr == "Any"
    )


def _mapping_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def any_uses(paths: Iterable[Path]) -> Counter[str]:
    """``dict[str, Any]`` / ``Mapping[str, Any]`` / bare ``Any`` uses in ``paths``."""
    counts: Counter[str] = Counter()
    for folder in paths:
        for path in _sources(folder):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            inside: set[int] = set()
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Subscript)
                    and _mapping_name(node.value) in _MAPPINGS
                    and isinstance(node.slice, ast.Tuple)
                    and len(node.slice.elts) == 2
                    and _is_any(node.slice.elts[1])
                ):
                    base = _mapping_name(node.value)
                    counts["Mapping[str, Any]" if "Mapping" in str(base) else "dict[str, Any]"] += 1
                    inside.add(id(node.slice.elts[1]))
            for node in ast.walk(tree):
                if _is_any(node) and id(node) not in inside:
                    counts["bare Any"] += 1
    return counts


_TRACER = '''
"""Records the package modules whose code runs, in three scopes (see scripts/house.py)."""
import json, os, sys, threading

PACKAGE = os.environ["HOUSE_PACKAGE"] + os.sep
SCOPES = {"call": set(), "test": set(), "run": set()}
ACTIVE = {"call": False, "test": False, "run": False}
_seen = {}


def _module(filename):
    name = _seen.get(filename)
    if name is None:
        name = ""
        if filename.startswith(PACKAGE) and filename.endswith(".py"):
            rel = filename[len(PACKAGE):-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join(["pytest_tlgraph", *rel])
        _seen[filename] = name
    return name


def _profile(frame, event, arg):
    if event == "call":
        name = _module(frame.f_code.co_filename)
        if name:
            for scope, on in ACTIVE.items():
                if on:
                    SCOPES[scope].add(name)


def pytest_collection_finish(session):
    ACTIVE["run"] = True
    threading.setprofile(_profile)
    sys.setprofile(_profile)


def pytest_runtest_logstart(nodeid, location):
    ACTIVE["test"] = True


def pytest_runtest_logfinish(nodeid, location):
    ACTIVE["test"] = False


import pytest


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    sys.setprofile(None)
    threading.setprofile(None)
    with open(os.environ["HOUSE_OUT"], "w") as out:
        json.dump({k: sorted(v) for k, v in SCOPES.items()}, out)
'''

_TEST = """
import os

from torch import nn

import housetracer
from tests.corpus.models_faithful_collapse import resnet18_basic_case


def test_resnet(tlgraph_snapshot):
    if os.environ.get("HOUSE_CHANGE"):
        case = resnet18_basic_case(lambda: nn.SiLU(inplace=True))
    else:
        case = resnet18_basic_case()
    housetracer.ACTIVE["call"] = True
    try:
        tlgraph_snapshot(case.model, case.inputs)
    finally:
        housetracer.ACTIVE["call"] = False
"""

_INI = (
    "[pytest]\naddopts = -p no:cacheprovider -p no:xdist -p no:hypothesispytest -p no:benchmark\n"
)


def failing_call_modules() -> dict[str, list[str]]:
    """``scope -> package modules`` of one failing ``tlgraph_snapshot`` call (see the
    module's docstring)."""
    with tempfile.TemporaryDirectory(prefix="house-") as tmp:
        project = Path(tmp)
        (project / "housetracer.py").write_text(textwrap.dedent(_TRACER), encoding="utf-8")
        (project / "test_house.py").write_text(textwrap.dedent(_TEST), encoding="utf-8")
        (project / "pytest.ini").write_text(_INI, encoding="utf-8")
        out = project / "modules.json"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(project), str(ROOT)]),
            "HOUSE_PACKAGE": str(PACKAGE),
            "HOUSE_OUT": str(out),
        }
        command = [sys.executable, "-m", "pytest", "-q", "-p", "housetracer", "test_house.py"]
        first = subprocess.run(
            [*command, "--snapshot-update"], cwd=project, env=env, capture_output=True, text=True
        )
        if first.returncode != 0:
            raise SystemExit(f"storing the snapshot failed:\n{first.stdout}{first.stderr}")
        second = subprocess.run(
            command, cwd=project, env={**env, "HOUSE_CHANGE": "1"}, capture_output=True, text=True
        )
        if second.returncode != 1 or "1 failed" not in second.stdout:
            raise SystemExit(f"the changed model did not fail:\n{second.stdout}{second.stderr}")
        scopes: dict[str, list[str]] = json.loads(out.read_text(encoding="utf-8"))
        return scopes


def _by_group(modules: Iterable[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for name in modules:
        parts = name.split(".")
        counts[parts[1] if (PACKAGE / parts[1]).is_dir() else "(top)"] += 1
    return counts


def _row(label: str, value: object, budget: object = "", over: bool = False) -> str:
    mark = "OVER" if over else ("ok" if budget != "" else "")
    return f"{label:<38} {value!s:>8} {budget!s:>8}  {mark}"


def main(argv: list[str] | None = None) -> int:
    """Print the house table; 1 when a budget is over."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-trace", action="store_true", help="skip the failing-call run")
    parser.add_argument("--modules", action="store_true", help="list the run scope's modules")
    args = parser.parse_args(argv)
    over = False
    print(_row("what", "value", "budget") + "\n" + "-" * 64)
    counts = line_counts(PACKAGE)
    for group, (lines, filled) in sorted(counts.items()):
        budget = {"total": PACKAGE_BUDGET, "snapshots": SNAPSHOTS_BUDGET}.get(group)
        bad = budget is not None and lines > budget
        over |= bad
        name = {"total": "package", "(top)": "(top)"}.get(group, group + "/")
        label = f"lines {name} ({filled} non-blank)"
        print(_row(label, lines, "" if budget is None else budget, bad))
    long = long_functions(PACKAGE)
    over |= bool(long)
    print(_row(f"functions over {FUNCTION_LIMIT} lines", len(long), 0, bool(long)))
    for f in long:
        print(f"    {f.lines:>4}  {f.path}:{f.line} {f.name}")
    uses = any_uses(PACKAGE / name for name in ANY_FOLDERS)
    for kind in ("dict[str, Any]", "Mapping[str, Any]", "bare Any"):
        print(_row(f"{kind} in snapshots/ cli/", uses[kind]))
    if not args.no_trace:
        scopes = failing_call_modules()
        for scope in ("call", "test", "run"):
            modules = scopes[scope]
            groups = ", ".join(f"{g} {n}" for g, n in sorted(_by_group(modules).items()))
            bad = scope == "run" and len(modules) > MODULES_BUDGET
            over |= bad
            limit = MODULES_BUDGET if scope == "run" else ""
            print(_row(f"modules, failing call: {scope}", len(modules), limit, bad))
            print(f"    {groups}")
        if args.modules:
            for name in scopes["run"]:
                print(f"    {name}")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
