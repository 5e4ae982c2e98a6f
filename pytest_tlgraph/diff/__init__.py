"""The model diff: two drawings read once, compared at op level, told as typed edits.

Each side's canonical DOT is read once (:func:`.graph.read_graph`, one parser:
:mod:`.dotparse`); modules are paired first (:mod:`.alignment`), nodes by structure
and dataflow (:mod:`.pairing`). :mod:`.record` expands every view's collapsed nodes
(boxes, folds, fold frames, segments) into the ops they hide (``tl_ops``), so
:mod:`.engine` compares two drawings of any view at full detail and returns typed
edits (:mod:`.edits`); :mod:`.text` is the one place they become lines, at the view's
addresses. This package imports neither torch nor syrupy: ``tlgraph diff`` and the
fixture share it.
"""

from __future__ import annotations
