"""The package's import graph, read from source with ``ast`` (nothing is imported).

An edge ``a -> b`` means module ``a`` names module ``b`` in an import statement,
anywhere in its body: at the top, inside a function (a lazy import) or under
``if TYPE_CHECKING:``. ``from pkg import name`` points at ``pkg.name`` when that is a
module, else at ``pkg``. Importing a submodule also runs its package's ``__init__``, but
that is Python's doing, not an edge the code chose, so it is not counted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["cycles", "import_graph", "package_graph", "package_of"]


def _modules(package_dir: Path) -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package ``__init__``) for every ``.py`` below."""
    modules: dict[str, tuple[Path, bool]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        modules[".".join(parts)] = (path, is_package)
    return modules


def _imported(name: str, is_package: bool, tree: ast.AST, known: Iterable[str]) -> set[str]:
    known = set(known)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                child = f"{target}.{alias.name}"
                found.add(child if child in known else target)
    return {m for m in found if m in known and m != name}


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Every module of the package at ``package_dir`` -> the package modules it imports."""
    modules = _modules(package_dir)
    return {
        name: _imported(name, is_package, ast.parse(path.read_text(encoding="utf-8")), modules)
        for name, (path, is_package) in modules.items()
    }


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (each a cycle or a
    knot of cycles), each sorted, in sorted order (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def package_of(module: str, rooms: Iterable[str] = ()) -> str:
    """The package node ``module`` belongs to: the top-level module or subpackage of the
    root package it sits in (``pkg.draw.collapse.rows`` -> ``draw``), or the room in
    ``rooms`` it sits in (with ``snapshots.review`` a room, ``pkg.snapshots.review.html``
    -> ``snapshots.review``, while ``pkg.snapshots.call`` stays ``snapshots``). The root
    package's own ``__init__`` is the root's name."""
    parts = module.split(".")[1:]
    if not parts:
        return module
    room = ".".join(parts[:2])
    return room if room in set(rooms) else parts[0]


def package_graph(
    graph: Mapping[str, Iterable[str]], split: Iterable[str] = ()
) -> dict[str, set[str]]:
    """The module graph read at the level of packages (see :func:`package_of`): each
    subpackage of a package named in ``split`` is a room of its own. An edge ``a -> b``
    when some module of ``a`` imports some module of ``b``; every package is a key, an
    import inside one package is no edge."""
    split = set(split)
    rooms = {
        ".".join(parts[1:3])
        for module in graph
        if len(parts := module.split(".")) > 3 and parts[1] in split
    }
    packages: dict[str, set[str]] = {package_of(m, rooms): set() for m in graph}
    for module, imported in graph.items():
        source = package_of(module, rooms)
        for target in imported:
            node = package_of(target, rooms)
            if node != source:
                packages[source].add(node)
    return packages
