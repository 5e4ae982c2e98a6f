"""The structural comparison of two drawings: one graph model per side, one pairing,
one comparison value every view reads.

Data flow: each side's canonical DOT is read once (:func:`.graph.read_graph`, one
parser: :mod:`.dotparse`) into a :class:`.graph.GraphModel`; :func:`.comparison.compare`
pairs the two models' nodes by structure (:mod:`.pairing`) and returns one
:class:`.comparison.Comparison`. The terminal summary (:mod:`.story`), the diff drawing
(:mod:`.drawing`, with :mod:`.context`), ``report.html``, ``summary.json`` and
``tlgraph diff`` all read that value.
"""

from __future__ import annotations

from pytest_tlgraph.diff.graph import GraphModel, read_graph
from pytest_tlgraph.diff.view.comparison import Comparison, compare

#: The stage's two values by their short names (docs/architecture.md).
Graph = GraphModel
Change = Comparison

__all__ = ["Change", "Comparison", "Graph", "GraphModel", "compare", "read_graph"]
