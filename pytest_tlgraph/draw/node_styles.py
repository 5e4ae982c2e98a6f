"""Ready ``node_spec_fn`` presets (docs/decisions.md, "Labels").

A preset takes the drawn node (``.kind``, ``.rows``, ``.members``, ``.module``) and its
spec (``"rows"``, ``"bold_rows"`` and DOT attributes such as ``"fillcolor"``) and
returns a changed spec, or ``None`` to leave the node as it is. Pass one to
``Trace.draw(node_spec_fn=...)``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from pytest_tlgraph.draw import style

if TYPE_CHECKING:
    from pytest_tlgraph.draw import Node

__all__ = ["ATTENTION_FUNCS", "SCORE_FUNCS", "attention_node_mode", "is_attention_module"]

#: Functions that are attention wherever they run.
ATTENTION_FUNCS: Final = frozenset({"scaled_dot_product_attention", "multi_head_attention_forward"})
#: Functions that compute attention scores or weights when they run inside an attention
#: module: the score and value matmuls and the softmax.
SCORE_FUNCS: Final = frozenset({"matmul", "bmm", "baddbmm", "mm", "einsum", "softmax"})

# A module attribute name that names attention: attn, self_attn, attn1, attention,
# cross_attention, mha. Names such as attn_dropout or attn_proj name a part of it.
_ATTENTION_NAME: Final = re.compile(r"(attn|attention|mha)\d*$", re.IGNORECASE)
# A shape row ("2x5x8, 320 B", "scalar") or a shape summary ("5->3", "2-8",
# "2x64x8x8->2x512x4x4"): the rows a trimmed attention node keeps.
_SHAPE_ROW: Final = re.compile(r"^(?:\d+(?:x\d+)*|scalar)(?:(?:->|-)(?:\d+(?:x\d+)*|scalar))?")

# Fill and border per page; on a fill set by a channel only the border changes.
_FILL: Final = {"light": "#FCE3CF", "dark": "#5B3420"}
_BORDER_ON_LIGHT: Final = "#C2410C"
_BORDER_ON_DARK: Final = "#FDBA74"
_PENWIDTH: Final = "2"


def is_attention_module(address: str | None) -> bool:
    """Whether any attribute in the module ``address`` names attention (``blocks.0.attn``)."""
    if not address:
        return False
    return any(_ATTENTION_NAME.search(part) for part in address.split("."))


def _func(label: str) -> str:
    """``matmul_2:3`` -> ``matmul``: the function an op label was named after."""
    return label.partition(":")[0].rpartition("_")[0]


def _is_attention(kind: str, members: Iterable[str], module: str | None) -> bool:
    if kind in ("op", "layer"):
        funcs = {_func(label) for label in members}
        if funcs & ATTENTION_FUNCS:
            return True
        return bool(funcs & SCORE_FUNCS) and is_attention_module(module)
    if kind in ("box", "fold") and module:
        return bool(_ATTENTION_NAME.search(module.rpartition(".")[2]))
    return False


def _page_of(fill: Any) -> str | None:
    for name, palette in style.PAGES.items():
        if fill in palette.fills.values():
            return name
    return None


def _is_light(colour: str) -> bool:
    try:
        r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    except ValueError:
        return True
    return 0.2126 * r + 0.7152 * g + 0.0722 * b >= 128


def _trimmed(rows: list[str], bold: list[int]) -> tuple[list[str], list[int]]:
    """The bold title and the shape rows, the shape without its byte count."""
    kept: list[str] = []
    kept_bold: list[int] = []
    for i, text in enumerate(rows):
        if i in bold:
            kept_bold.append(len(kept))
            kept.append(text)
        elif _SHAPE_ROW.fullmatch(text.split(", ", 1)[0]):
            kept.append(text.split(", ", 1)[0])
    return (kept, kept_bold) if kept else (rows, bold)


def attention_node_mode(node: Node, spec: dict[str, Any]) -> dict[str, Any] | None:
    """Make attention computations stand out; leave every other node unchanged.

    Attention nodes are ``scaled_dot_product_attention`` and
    ``multi_head_attention_forward`` ops anywhere, the score matmuls and softmax
    (``matmul``, ``bmm``, ``baddbmm``, ``mm``, ``einsum``, ``softmax``) inside a module
    whose address names attention (an attribute such as ``attn``, ``self_attn``,
    ``attn1``, ``attention``, ``mha``), and collapsed boxes of such modules. They get a
    warm fill and a heavy border, and an op or layer label is trimmed to its title and
    shape (plus the shape summary on rolled nodes). A fill set by a channel
    (``color_by``) is kept and only the border marks the node. Returns ``None`` for
    every other node.
    """
    if not _is_attention(node.kind, node.members, node.module):
        return None
    changed = dict(spec)
    fill = spec.get("fillcolor")
    page = _page_of(fill)
    if page is not None:
        changed["fillcolor"] = _FILL[page]
    shown = changed.get("fillcolor")
    light = _is_light(shown) if isinstance(shown, str) and shown.startswith("#") else True
    changed["color"] = _BORDER_ON_LIGHT if light else _BORDER_ON_DARK
    changed["penwidth"] = _PENWIDTH
    if node.kind in ("op", "layer"):
        rows, bold = _trimmed(list(spec.get("rows", ())), list(spec.get("bold_rows", ())))
        changed["rows"], changed["bold_rows"] = rows, bold
    return changed
