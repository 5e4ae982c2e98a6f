"""Page palettes and base DOT attributes: fixed values, so plain draws are canonical."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

__all__ = [
    "FONT",
    "FONTSIZE",
    "PAGES",
    "RANKDIR",
    "Palette",
    "cluster_attrs",
    "fold_cluster_attrs",
]

#: graphviz-pure carries metrics for Helvetica (its Arimo font); bold comes from <B>.
FONT: Final = "Helvetica"
FONTSIZE: Final = 10
RANKDIR: Final = MappingProxyType({"bottomup": "BT", "topdown": "TB", "leftright": "LR"})


@dataclass(frozen=True, slots=True)
class Palette:
    """Colours of one page."""

    background: str
    text: str
    line: str
    cluster: str
    fills: Mapping[str, str]

    def fill(self, kind: str) -> str:
        """The role fill of a node kind."""
        return self.fills.get(kind, self.fills["op"])


PAGES: Final = MappingProxyType(
    {
        "light": Palette(
            background="#FFFFFF",
            text="#1A1A1A",
            line="#5A6270",
            cluster="#9AA3AF",
            fills=MappingProxyType(
                {
                    "input": "#D9EAD3",
                    "output": "#D0E0F0",
                    "op": "#F3F4F6",
                    "layer": "#F3F4F6",
                    "box": "#E8E4F3",
                    "segment": "#EFEFEF",
                    "fold": "#E8E4F3",
                    "key": "#FFFFFF",
                }
            ),
        ),
        "dark": Palette(
            background="#1E1F22",
            text="#E8E8E8",
            line="#A0A7B4",
            cluster="#6B7280",
            fills=MappingProxyType(
                {
                    "input": "#2F4A33",
                    "output": "#2B3F55",
                    "op": "#2D2F34",
                    "layer": "#2D2F34",
                    "box": "#3A3450",
                    "segment": "#333333",
                    "fold": "#3A3450",
                    "key": "#1E1F22",
                }
            ),
        ),
    }
)


def graph_attrs(page: str, direction: str, caption: str) -> dict[str, Any]:
    """Graph-level attributes of a drawing."""
    palette = PAGES[page]
    return {
        "label": caption,
        "bgcolor": palette.background,
        "fontcolor": palette.text,
        "fontname": FONT,
        "fontsize": FONTSIZE,
        "labelloc": "t",
        "rankdir": RANKDIR[direction],
        "nodesep": "0.25",
        "ranksep": "0.35",
    }


def node_defaults(page: str) -> dict[str, Any]:
    """Default node attributes of a drawing."""
    palette = PAGES[page]
    return {
        "shape": "box",
        "style": "rounded,filled",
        "color": palette.line,
        "fontcolor": palette.text,
        "fontname": FONT,
        "fontsize": FONTSIZE,
        "margin": "0.11,0.055",
        "penwidth": "1",
    }


def edge_defaults(page: str) -> dict[str, Any]:
    """Default edge attributes of a drawing."""
    return {"color": PAGES[page].line, "arrowsize": "0.6", "penwidth": "1"}


def cluster_attrs(page: str, title_label: str) -> dict[str, Any]:
    """Attributes of a module cluster with its (already escaped) HTML title."""
    palette = PAGES[page]
    return {
        "label": title_label,
        "style": "rounded,dashed",
        "color": palette.cluster,
        "fontcolor": palette.text,
        "fontname": FONT,
        "fontsize": FONTSIZE,
        "labeljust": "l",
    }


#: ``labelloc`` that puts a cluster title at the top of the picture: graphviz flips
#: "top" and "bottom" with the ranks, so a bottom-up drawing names the bottom.
_TOP: Final = MappingProxyType({"bottomup": "b", "topdown": "t", "leftright": "t"})


def fold_cluster_attrs(page: str, direction: str, title_label: str) -> dict[str, Any]:
    """Attributes of a repeat fold's cluster: a module cluster's, with its (already
    escaped, bold) title at the top of the picture, where the eye starts."""
    return {**cluster_attrs(page, title_label), "labelloc": _TOP[direction]}
