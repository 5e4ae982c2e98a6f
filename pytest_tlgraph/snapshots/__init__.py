"""Snapshots: the syrupy glue (extensions, storage, the fixture and its calls, here),
the pixel comparison (``pixels/``), what a failure tells a reviewer (``review/``) and
the results folder (``results/``); the structural comparison lives in
:mod:`pytest_tlgraph.diff` (``diff/view/`` projects it on a view).

``compare_png``, ``PngComparison`` and ``graph_diff`` (the structural diff drawing of two
stored or received DOT texts) are public and usable outside the fixture. They load on
first use, so importing this package (as the pytest plugin does) costs no
numpy or Pillow import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_tlgraph.diff.view.drawing import graph_diff
    from pytest_tlgraph.pixels.pixeldiff import PngComparison, compare_png

__all__ = ["PngComparison", "compare_png", "graph_diff"]
_HOMES = {
    "graph_diff": "pytest_tlgraph.diff.view.drawing",
    "compare_png": "pytest_tlgraph.pixels.pixeldiff",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'pytest_tlgraph.snapshots' has no attribute {name!r}")
    value = getattr(
        importlib.import_module(_HOMES.get(name, "pytest_tlgraph.pixels.pixeldiff")),
        name,
    )
    globals()[name] = value
    return value
