"""Text and fill colours of a drawing's nodes, read from its DOT (tests and gallery)."""

from __future__ import annotations

import re

from pytest_tlgraph.draw import Drawing
from pytest_tlgraph.draw.contrast import contrast_ratio

__all__ = ["lowest_contrast", "node_colours"]

_NODE = re.compile(r'^\s+"((?:[^"\\]|\\.)*)" \[(.*)\];$')
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_DEFAULT = re.compile(r"^  node \[(.*)\];$")


def node_colours(drawing: Drawing) -> dict[str, tuple[str, str]]:
    """``node id -> (fillcolor, fontcolor)`` as the DOT draws them (defaults applied)."""
    defaults: dict[str, str] = {}
    found = {}
    for line in drawing.dot.splitlines():
        head = _DEFAULT.match(line)
        if head:
            defaults = dict(_ATTR.findall(head[1]))
            continue
        match = _NODE.match(line)
        if match and match[1] != "tlgraph_key":
            attrs = {**defaults, **dict(_ATTR.findall(match[2]))}
            found[match[1]] = (attrs["fillcolor"], attrs["fontcolor"])
    return found


def lowest_contrast(drawing: Drawing) -> float:
    """The lowest text-on-fill contrast among the drawing's nodes."""
    return min(contrast_ratio(fill, font) for fill, font in node_colours(drawing).values())
