"""The drawing's grammar, declared once: what each drawn node and frame *is*.

Every node and cluster of a canonical drawing carries its identity as DOT attributes
that no renderer draws (Graphviz ignores attribute names it does not know, so the
picture is unchanged). The drawing writes them from these records and the comparison
reads them back into the same records: nothing recovers identity from ids, titles or
label rows.

Node attributes (a value that is ``None`` or empty is left out):

* ``tl_kind``: ``op`` (an op, or a rolled layer), ``box``, ``fold``, ``segment``,
  ``input`` or ``output``;
* ``tl_addr``: the full module address (``layer1.0.conv1``; ``""`` at the top);
* ``tl_op``: an op's function (``conv2d``);
* ``tl_type``: the module class (a box's or fold's, an op's innermost module's);
* ``tl_calln``: the call number of a module called more than once (``2``);
* ``tl_first``, ``tl_last``, ``tl_count``: a fold's first and last address and how
  many repetitions it stands for;
* ``tl_members``: the functions of a box's, fold's (one repetition's) or segment's
  member ops, in order, as a list (:func:`encode_list`): no address in it;
* ``tl_call`` (an op's whole call), ``tl_inside`` (the calls a collapsed node hides)
  and ``comment`` (its content signature), as before.

Cluster attributes: ``tl_kind`` (``module`` or ``fold``), ``tl_addr``, ``tl_type``,
``tl_calln``, a fold frame's ``tl_first``/``tl_last``/``tl_count``, and ``comment``.
The graph attribute ``tl_schema`` names the version (:data:`SCHEMA_VERSION`); a
drawing without it was written before structured attributes (0.3).

This module imports nothing of the package: the drawing (``draw/``) and the
comparison (``diff/view/``) both stand on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.errors import TlgraphError

__all__ = [
    "ADDRESS_ATTR",
    "CALLN_ATTR",
    "CALL_ATTR",
    "CLUSTER_KINDS",
    "COUNT_ATTR",
    "DEFAULTS_ATTR",
    "FIRST_ATTR",
    "INSIDE_ATTR",
    "KIND_ATTR",
    "LAST_ATTR",
    "MEMBERS_ATTR",
    "NODE_ATTRS",
    "NODE_KINDS",
    "OPS_ATTR",
    "OP_ATTR",
    "SCHEMA_ATTR",
    "SCHEMA_VERSION",
    "SIGNATURE_ATTR",
    "TYPE_ATTR",
    "ClusterRecord",
    "NodeRecord",
    "SchemaError",
    "cluster_attrs",
    "decode_list",
    "encode_list",
    "node_attrs",
    "read_cluster",
    "read_node",
    "schema_version",
]

#: The version this drawing writes, in the graph attribute :data:`SCHEMA_ATTR`.
SCHEMA_VERSION: Final = "0.5"
#: The graph attribute naming the schema version.
SCHEMA_ATTR: Final = "tl_schema"

#: What a node or cluster is.
KIND_ATTR: Final = "tl_kind"
#: The full module address.
ADDRESS_ATTR: Final = "tl_addr"
#: An op's function.
OP_ATTR: Final = "tl_op"
#: The module class.
TYPE_ATTR: Final = "tl_type"
#: The call number of a module called more than once.
CALLN_ATTR: Final = "tl_calln"
#: A fold's first and last repetition's address, and its count.
FIRST_ATTR: Final = "tl_first"
LAST_ATTR: Final = "tl_last"
COUNT_ATTR: Final = "tl_count"
#: The member op functions of a box, fold or segment, in order.
MEMBERS_ATTR: Final = "tl_members"
#: An op's whole call (``tensors=[in1, in2], dim=1``).
CALL_ATTR: Final = "tl_call"
#: The calls a box, fold or segment hides that have a non-tensor argument.
INSIDE_ATTR: Final = "tl_inside"
#: The content signature of a collapsed node or fold frame: Graphviz draws no comment.
SIGNATURE_ATTR: Final = "comment"
#: The args an op's args row leaves out at their constructor default, with values.
DEFAULTS_ATTR: Final = "tl_defaults"
#: Each op a box, fold or segment hides: function, shape, args and params (a list).
OPS_ATTR: Final = "tl_ops"

#: Every attribute :func:`node_attrs` may write: a drawing writes these, nothing else does.
NODE_ATTRS: Final = (
    KIND_ATTR, ADDRESS_ATTR, OP_ATTR, TYPE_ATTR, CALLN_ATTR, FIRST_ATTR, LAST_ATTR,
    COUNT_ATTR, MEMBERS_ATTR, CALL_ATTR, INSIDE_ATTR, SIGNATURE_ATTR, DEFAULTS_ATTR,
    OPS_ATTR,
)  # fmt: skip
#: The kinds a drawn node has, and a drawn cluster.
NODE_KINDS: Final = ("op", "box", "fold", "segment", "input", "output")
CLUSTER_KINDS: Final = ("module", "fold")

_SEPARATOR: Final = ","
_ESCAPES: Final = str.maketrans({"%": "%25", ",": "%2C"})


class SchemaError(TlgraphError, ValueError):
    """A stored drawing's structured attribute that this schema cannot read."""


def encode_list(items: Sequence[str]) -> str | None:
    """``("conv2d", "relu")`` -> ``"conv2d,relu"``: each item with ``%`` and ``,``
    written ``%25`` and ``%2C``, so any text reads back whole; ``None`` (the attribute
    left out) for no item."""
    if not items:
        return None
    return _SEPARATOR.join(item.translate(_ESCAPES) for item in items)


def decode_list(text: str | None) -> tuple[str, ...]:
    """The inverse of :func:`encode_list` (``None``: no item)."""
    if text is None:
        return ()
    return tuple(
        item.replace("%2C", ",").replace("%25", "%") if "%" in item else item
        for item in text.split(_SEPARATOR)
    )


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """What one drawn node is, as the drawing knows it (see the module docstring)."""

    id: str
    kind: str
    address: str = ""
    op: str | None = None
    type: str | None = None
    call_number: int | None = None
    first: str | None = None
    last: str | None = None
    count: int | None = None
    members: tuple[str, ...] | None = None
    call: str | None = None
    inside: str | None = None
    signature: str | None = None
    defaults: str | None = None
    ops: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class ClusterRecord:
    """What one drawn frame is: a module call's, or a repeat fold's."""

    id: str
    kind: str
    address: str = ""
    type: str | None = None
    call_number: int | None = None
    first: str | None = None
    last: str | None = None
    count: int | None = None
    signature: str | None = None


def _number(value: int | None) -> str | None:
    return None if value is None else str(value)


def node_attrs(record: NodeRecord) -> dict[str, str]:
    """The DOT attributes of ``record``: only those with a value (the usual op has
    three or four), in no particular order (the writer orders them)."""
    out = {KIND_ATTR: record.kind}
    if record.address:
        out[ADDRESS_ATTR] = record.address
    if record.op is not None:
        out[OP_ATTR] = record.op
    if record.type is not None:
        out[TYPE_ATTR] = record.type
    if record.call_number is not None:
        out[CALLN_ATTR] = str(record.call_number)
    if record.first is not None:
        out[FIRST_ATTR] = record.first
    if record.last is not None:
        out[LAST_ATTR] = record.last
    if record.count is not None:
        out[COUNT_ATTR] = str(record.count)
    if record.members:
        out[MEMBERS_ATTR] = encode_list(record.members) or ""
    if record.call is not None:
        out[CALL_ATTR] = record.call
    if record.inside is not None:
        out[INSIDE_ATTR] = record.inside
    if record.signature is not None:
        out[SIGNATURE_ATTR] = record.signature
    if record.defaults is not None:
        out[DEFAULTS_ATTR] = record.defaults
    if record.ops:
        out[OPS_ATTR] = encode_list(record.ops) or ""
    return out


def cluster_attrs(record: ClusterRecord) -> dict[str, str | None]:
    """The DOT attributes of a frame's ``record`` (``None`` values are left out)."""
    return {
        KIND_ATTR: record.kind,
        ADDRESS_ATTR: record.address or None,
        TYPE_ATTR: record.type,
        CALLN_ATTR: _number(record.call_number),
        FIRST_ATTR: record.first,
        LAST_ATTR: record.last,
        COUNT_ATTR: _number(record.count),
        SIGNATURE_ATTR: record.signature,
    }


def _text(attrs: Mapping[str, object], name: str) -> str | None:
    value = attrs.get(name)
    return None if value is None else str(value)


def _int(owner: str, attrs: Mapping[str, object], name: str) -> int | None:
    value = attrs.get(name)
    if value is None:
        return None
    text = str(value)
    if not (text.isascii() and text.isdigit()):
        raise SchemaError(
            f"{owner}: {name}={text!r} is not a whole number; the stored drawing is "
            "damaged: redraw it (pytest --snapshot-update)"
        )
    return int(text)


def _kind(owner: str, attrs: Mapping[str, object], kinds: Sequence[str]) -> str:
    """The kind written, ``kinds[0]`` (``op``, ``module``) for one written before the
    schema (nothing else is guessed)."""
    kind = attrs.get(KIND_ATTR, kinds[0])
    if kind not in kinds:
        raise SchemaError(
            f"{owner}: {KIND_ATTR}={kind!r} is not one of {', '.join(kinds)}; the stored "
            "drawing is damaged or from another version: redraw it (pytest --snapshot-update)"
        )
    return str(kind)


def read_node(node_id: str, attrs: Mapping[str, object]) -> NodeRecord:
    """The record a node's attributes hold (the inverse of :func:`node_attrs`).
    Raises :class:`SchemaError` naming the node when one cannot be read."""
    owner = f"node {node_id!r}"
    members = attrs.get(MEMBERS_ATTR)
    return NodeRecord(
        id=node_id,
        kind=_kind(owner, attrs, NODE_KINDS),
        address=_text(attrs, ADDRESS_ATTR) or "",
        op=_text(attrs, OP_ATTR),
        type=_text(attrs, TYPE_ATTR),
        call_number=_int(owner, attrs, CALLN_ATTR),
        first=_text(attrs, FIRST_ATTR),
        last=_text(attrs, LAST_ATTR),
        count=_int(owner, attrs, COUNT_ATTR),
        members=None if members is None else decode_list(str(members)),
        call=_text(attrs, CALL_ATTR),
        inside=_text(attrs, INSIDE_ATTR),
        signature=_text(attrs, SIGNATURE_ATTR),
        defaults=_text(attrs, DEFAULTS_ATTR),
        ops=None if (ops := attrs.get(OPS_ATTR)) is None else decode_list(str(ops)),
    )


def read_cluster(cluster_id: str, attrs: Mapping[str, object]) -> ClusterRecord:
    """The record a frame's attributes hold (the inverse of :func:`cluster_attrs`)."""
    owner = f"cluster {cluster_id!r}"
    return ClusterRecord(
        id=cluster_id,
        kind=_kind(owner, attrs, CLUSTER_KINDS),
        address=_text(attrs, ADDRESS_ATTR) or "",
        type=_text(attrs, TYPE_ATTR),
        call_number=_int(owner, attrs, CALLN_ATTR),
        first=_text(attrs, FIRST_ATTR),
        last=_text(attrs, LAST_ATTR),
        count=_int(owner, attrs, COUNT_ATTR),
        signature=_text(attrs, SIGNATURE_ATTR),
    )


def schema_version(graph_attrs: Mapping[str, object]) -> str | None:
    """The schema version a drawing's graph attributes name, ``None`` before 0.4."""
    return _text(graph_attrs, SCHEMA_ATTR)
