"""What each module of the package imports when it runs, read from source with ``ast``.

Unlike :mod:`tests.import_graph` (the package's own modules, every import counted), this
lists every module named, the package's and others' (``torch``, ``torch.nn``), and
leaves out imports under ``if TYPE_CHECKING:``, which never run. Lazy imports inside a
function count: they run when the function does.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

__all__ = ["reaches", "runtime_imports"]


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _named(module: str, is_package: bool, tree: ast.AST) -> set[str]:
    found: set[str] = set()
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if _type_checking_only(node):
            todo.extend(getattr(node, "orelse", []))
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        todo.extend(ast.iter_child_nodes(node))
    return found


def runtime_imports(package_dir: Path) -> dict[str, set[str]]:
    """Every module of the package at ``package_dir`` -> every name its running code
    imports (``from a import b`` names both ``a`` and ``a.b``)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        name = ".".join(parts)
        graph[name] = _named(name, is_package, ast.parse(path.read_text(encoding="utf-8")))
    return graph


def reaches(graph: Mapping[str, set[str]], start: str, wanted: str) -> list[str] | None:
    """A chain of imports from module ``start`` through the package's modules to a
    module named ``wanted`` or below it (``torch`` covers ``torch.nn``), or ``None``."""
    seen = {start}
    todo = [[start]]
    while todo:
        chain = todo.pop(0)
        for name in sorted(graph.get(chain[-1], ())):
            if name == wanted or name.startswith(wanted + "."):
                return [*chain, name]
            if name in graph and name not in seen:
                seen.add(name)
                todo.append([*chain, name])
    return None
