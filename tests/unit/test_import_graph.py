"""The package's house rules: data flows one way through the stages.

The only import that may point back up the pipeline is ``Trace.draw``'s call into the
drawing stage (``pytest_tlgraph.trace -> pytest_tlgraph.draw``, the public facade);
any other cycle among the package's modules fails here, whether the import is at the
top of a module, lazy inside a function, or only for the type checker. The same holds
between packages: with each subpackage and each top-level module a node, the package
graph has no cycle but the same facade.
"""

from __future__ import annotations

import ast
import importlib
import textwrap
from pathlib import Path

import pytest

from tests.import_graph import cycles, import_graph, package_graph
from tests.runtime_imports import reaches, runtime_imports

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_tlgraph"

#: The one back-pointing import the architecture allows: ``Trace.draw`` -> ``draw``.
ALLOWED_BACK_EDGES = {("pytest_tlgraph.trace", "pytest_tlgraph.draw")}
#: The same facade between packages, the one package edge that may close a circle.
ALLOWED_PACKAGE_EDGES = {("trace", "draw")}
#: The packages whose subpackages are rooms of their own in the package graph (none
#: since the results folder, the disk, the pixels and the review left ``snapshots/``).
SPLIT: tuple[str, ...] = ()
#: What a snapshot call stands on, layer by layer below the syrupy glue.
ROOMS = ("pixels", "review", "results", "disk")


def _graph_without_allowed() -> dict[str, set[str]]:
    graph = import_graph(PACKAGE)
    for source, target in ALLOWED_BACK_EDGES:
        graph[source].discard(target)
    return graph


def test_the_package_has_no_import_cycle_but_the_facade() -> None:
    assert cycles(_graph_without_allowed()) == []


def test_the_allowed_back_edge_is_really_the_facade() -> None:
    # Without the exception the facade closes the one cycle the rule names (trace is
    # read by every drawing stage), so the exception is needed and covers no other edge.
    graph = import_graph(PACKAGE)
    assert "pytest_tlgraph.draw" in graph["pytest_tlgraph.trace"]
    knots = cycles(graph)
    assert len(knots) == 1
    assert {"pytest_tlgraph.trace", "pytest_tlgraph.draw"} <= set(knots[0])


def _packages() -> dict[str, set[str]]:
    return package_graph(import_graph(PACKAGE), SPLIT)


def test_the_packages_have_no_circle_but_the_facade() -> None:
    graph = _packages()
    # Every stage the architecture names is a node of its own.
    stages = {"capture", "trace", "draw", "render", "schema", "options", "cli", "plugin"}
    assert stages | set(ROOMS) | {"snapshots"} <= set(graph)
    for source, target in ALLOWED_PACKAGE_EDGES:
        graph[source].discard(target)
    assert cycles(graph) == []


def test_the_allowed_package_edge_is_really_the_facade() -> None:
    graph = _packages()
    assert "draw" in graph["trace"]
    assert cycles(graph) == [["draw", "trace"]]


def test_encoding_is_a_stage_inside_draw() -> None:
    graph = _packages()
    # The value channels live in draw/encoding/ and the request they read in draw/:
    # the orchestrator and the vocabulary it shares with encoding (plan, DOT, style,
    # font metrics) are one package, so no package points back at drawing.
    assert "encoding" not in graph and "request" not in graph
    assert (PACKAGE / "draw" / "encoding" / "channels.py").is_file()
    drawing = import_graph(PACKAGE)["pytest_tlgraph.draw.encoding.channels"]
    assert {"pytest_tlgraph.draw.plan", "pytest_tlgraph.draw.dot"} <= drawing
    # Drawing reads no snapshot room: the PNG header it checks sits below both.
    assert not graph["draw"] & {"snapshots", *ROOMS}
    assert "pngheader" in graph["draw"] and "pngheader" in graph["pixels"]


def test_the_snapshot_rooms_stand_in_layers() -> None:
    graph = _packages()
    # disk < results < review < the glue: each reads only those below it.
    # disk reads the one file-size limit (limits.py, a leaf beside errors).
    assert graph["disk"] <= {"errors", "limits"}
    assert "review" not in graph["results"]
    assert "results" in graph["review"]
    for room in ROOMS:
        assert "snapshots" not in graph[room], room
    # The pixel comparison reads pictures, never the glue, the review or the results.
    assert not graph["pixels"] & {"snapshots", "review", "results", "disk"}


def test_stages_do_not_reach_back() -> None:
    graph = import_graph(PACKAGE)
    # plan and labels never import collapse: the orchestrator chooses between them.
    for stage in ("pytest_tlgraph.draw.plan", "pytest_tlgraph.draw.labels"):
        assert not {m for m in graph[stage] if m.startswith("pytest_tlgraph.draw.collapse")}
    # Encoding reads plans, never the orchestrator; nothing below capture reads it.
    for module, imported in graph.items():
        if module.startswith("pytest_tlgraph.draw.encoding"):
            assert "pytest_tlgraph.draw" not in imported, module
        if module.startswith("pytest_tlgraph.draw"):
            assert not {m for m in imported if m.startswith("pytest_tlgraph.capture")}, module


def test_the_drawing_schema_stands_below_drawing_and_comparison() -> None:
    graph = import_graph(PACKAGE)
    # The grammar both ends share imports nothing of the package but the error base
    # (a leaf: it imports nothing itself); both ends read it.
    found = {m for m in graph["pytest_tlgraph.schema"] if m.startswith("pytest_tlgraph")}
    assert found <= {"pytest_tlgraph.errors"}
    assert not {m for m in graph["pytest_tlgraph.errors"] if m.startswith("pytest_tlgraph")}
    assert "pytest_tlgraph.schema" in graph["pytest_tlgraph.draw.identity"]
    assert "pytest_tlgraph.schema" in graph["pytest_tlgraph.diff.graph"]


def test_every_module_imports() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 40
    for name in sorted(graph):
        assert importlib.import_module(name).__name__ == name


def test_moved_public_paths_still_work() -> None:
    import pytest_tlgraph
    import pytest_tlgraph.node_styles as public_styles
    from pytest_tlgraph.draw import node_styles

    assert public_styles.attention_node_mode is node_styles.attention_node_mode
    assert pytest_tlgraph.node_styles.attention_node_mode is node_styles.attention_node_mode
    from pytest_tlgraph.snapshots import compare_png

    assert callable(compare_png)
    # The comparison stage's values under their short names (docs/architecture.md).
    from pytest_tlgraph.diff import graph, view

    assert view.Graph is graph.GraphModel
    assert view.Change is view.comparison.Comparison


#: What the typed model diff (``pytest_tlgraph/diff/``) may never name: it serves
#: ``tlgraph diff`` without torch or syrupy, and the snapshots read it, not the reverse.
DIFF_FORBIDDEN = ("pytest_tlgraph.snapshots", "pytest_tlgraph.review", "torch", "syrupy")


def _statement_imports(path: Path, module: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, module named)`` of every import statement in ``path``: at the top, inside
    a function or class, under ``if TYPE_CHECKING:``; relative ones made absolute."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
    return found


def _forbidden_in(package_dir: Path) -> list[str]:
    """``file:line: module`` for each import in ``package_dir`` of a forbidden module."""
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        # Named from above the package (``pytest_tlgraph.diff.x``): relative imports resolve.
        parts = list(path.relative_to(package_dir.parents[1]).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        for line, name in _statement_imports(path, module, is_package):
            if any(name == f or name.startswith(f + ".") for f in DIFF_FORBIDDEN):
                out.append(f"{path.name}:{line}: {name}")
    return out


def test_the_model_diff_imports_neither_snapshots_nor_torch_nor_syrupy() -> None:
    # Every import statement of the package, wherever it sits: a lazy import inside
    # a method is the same edge back as one at the top.
    assert (PACKAGE / "diff" / "engine.py").is_file()
    assert _forbidden_in(PACKAGE / "diff") == []
    # Nor through the modules it reads: the whole chain of what runs stays clear.
    graph = runtime_imports(PACKAGE)
    for module in (m for m in graph if m.startswith("pytest_tlgraph.diff")):
        for wanted in DIFF_FORBIDDEN:
            assert reaches(graph, module, wanted) is None, (module, wanted)


@pytest.mark.parametrize(
    "source",
    [
        "import torch\n",
        "from syrupy.assertion import SnapshotAssertion\n",
        "class G:\n    def name(self):\n        from pkg.snapshots.review import c\n",
        "def f():\n    from ..snapshots import compare\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch.nn\n",
    ],
)
def test_the_diff_scan_finds_every_kind_of_import(tmp_path: Path, source: str) -> None:
    root = tmp_path / "pytest_tlgraph"
    (root / "diff").mkdir(parents=True)
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "diff" / "__init__.py").write_text("", encoding="utf-8")
    (root / "diff" / "ok.py").write_text("import ast\nfrom . import ok\n", encoding="utf-8")
    assert _forbidden_in(root / "diff") == []
    bad = source.replace("pkg.", "pytest_tlgraph.")
    (root / "diff" / "bad.py").write_text(bad, encoding="utf-8")
    assert len(_forbidden_in(root / "diff")) >= 1


def _package(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "pkg"


@pytest.mark.parametrize(
    "back_import",
    [
        "from pkg.a import f\n",  # at the top
        "def g():\n    from pkg.a import f\n    return f\n",  # lazy, inside a function
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
        "from . import a\n",  # relative
        "import pkg.a\n",
    ],
)
def test_a_back_import_in_a_synthetic_package_is_a_cycle(tmp_path: Path, back_import: str) -> None:
    clean = {"__init__.py": "", "a.py": "from pkg.b import g\ndef f(): ...\n", "b.py": ""}
    assert cycles(import_graph(_package(tmp_path / "clean", clean))) == []
    knotted = {**clean, "b.py": back_import}
    assert cycles(import_graph(_package(tmp_path / "knot", knotted))) == [["pkg.a", "pkg.b"]]


def test_cycles_are_found_through_subpackages(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "draw/__init__.py": "from pkg.draw.plan import p\n",
        "draw/plan.py": "from ..trace import T\ndef p(): ...\n",
        "trace.py": "class T:\n    def draw(self):\n        from pkg.draw import plan\n",
    }
    found = cycles(import_graph(_package(tmp_path, files)))
    assert found == [["pkg.draw.plan", "pkg.trace"]]


def test_a_circle_between_packages_is_found_where_modules_have_none(tmp_path: Path) -> None:
    # a.x -> b.y and b.z -> a.w: no module cycle, yet the packages a and b import each
    # other; and a room of a split package is a node of its own.
    files = {
        "__init__.py": "",
        "a/__init__.py": "",
        "a/x.py": "from pkg.b.y import f\n",
        "a/w.py": "",
        "b/__init__.py": "",
        "b/y.py": "def f(): ...\n",
        "b/z.py": "from pkg.a import w\n",
        "s/__init__.py": "",
        "s/glue.py": "from pkg.s.low.m import g\n",
        "s/low/__init__.py": "",
        "s/low/m.py": "def g(): ...\n",
    }
    graph = import_graph(_package(tmp_path, files))
    assert cycles(graph) == []
    packages = package_graph(graph, ["s"])
    assert cycles(packages) == [["a", "b"]]
    assert packages["s"] == {"s.low"} and packages["s.low"] == set()
