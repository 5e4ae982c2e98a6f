"""pytest-tlgraph: visual regression testing of PyTorch model graphs.

The public API. Importing this package does not import torch: every name that needs it
is loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.errors import EncodingRefusal, RenderError, TlgraphError, TraceError

if TYPE_CHECKING:
    import pytest_tlgraph.node_styles as node_styles
    from pytest_tlgraph.capture import capture
    from pytest_tlgraph.draw import Drawing, Node
    from pytest_tlgraph.draw.encoding.state import EncodingState
    from pytest_tlgraph.trace import Layer, ModuleCall, Op, Trace

__all__ = [
    "Drawing",
    "EncodingRefusal",
    "EncodingState",
    "Layer",
    "ModuleCall",
    "Node",
    "Op",
    "RenderError",
    "TlgraphError",
    "Trace",
    "TraceError",
    "capture",
    "node_styles",
]

_LAZY = {
    "capture": ("pytest_tlgraph.capture", "capture"),
    "Trace": ("pytest_tlgraph.trace", "Trace"),
    "Op": ("pytest_tlgraph.trace", "Op"),
    "Layer": ("pytest_tlgraph.trace", "Layer"),
    "ModuleCall": ("pytest_tlgraph.trace", "ModuleCall"),
    "Drawing": ("pytest_tlgraph.draw", "Drawing"),
    "Node": ("pytest_tlgraph.draw", "Node"),
    "EncodingState": ("pytest_tlgraph.draw.encoding.state", "EncodingState"),
    "node_styles": ("pytest_tlgraph.node_styles", None),
}


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'pytest_tlgraph' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value
