"""pytest-tlgraph: visual regression testing of PyTorch model graphs."""

from __future__ import annotations
