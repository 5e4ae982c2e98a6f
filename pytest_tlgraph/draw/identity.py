"""What each drawn node and frame is, as :mod:`pytest_tlgraph.schema` records.

The drawing writes every node's and cluster's identity from what its plan knows (the
record a node stands for, the cluster's module call or fold), never from its label:
kind, full module address, function, module class, call number, a fold's span and
count, the member functions of a collapsed node, an op's whole call, the calls a
collapsed node hides and its content signature. The comparison reads the same
records back (``pytest_tlgraph.draw.schema_records`` gives a drawing's without
drawing it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, Final

from pytest_tlgraph.draw.callrows import call_text
from pytest_tlgraph.draw.collapse.records import BoxRecord
from pytest_tlgraph.draw.collapse.signature import (
    content_signatures,
    fold_cluster_signatures,
    inside_texts,
)
from pytest_tlgraph.draw.labels import defaults_text, member_row
from pytest_tlgraph.draw.plan import Cluster, Plan, PlanNode
from pytest_tlgraph.schema import ClusterRecord, NodeRecord
from pytest_tlgraph.trace import Layer, Op, Trace, frozen_builder

__all__ = ["cluster_records", "node_records"]

_new_record: Final = frozen_builder(NodeRecord)
#: The plan node kinds that stand for a group of ops.
_COLLAPSED: Final = frozenset({"box", "fold", "segment"})


def _repeated(trace: Trace) -> frozenset[str]:
    """The module addresses called more than once: their calls carry a call number."""
    counts = Counter(call.address for call in trace.modules)
    return frozenset(address for address, n in counts.items() if n > 1)


def _op_record(node: PlanNode, record: Op | Layer, repeated: frozenset[str]) -> NodeRecord:
    """An op's (or a rolled layer's) record: its function, module, class and call."""
    func = record.func
    if func == "input" or func == "output":
        return _new_record(node.id, func, "", None, None, None, None, None, None, None, None)
    number = None
    chain = record.module_calls
    if node.kind != "layer" and chain and chain[-1][0] in repeated:
        number = chain[-1][1]
    call = call_text(record) if record.call != () else None
    return _new_record(
        node.id, "op", record.module, func, record.module_type, number,
        None, None, None, None, call, None, None, defaults_text(record.module_args),
    )  # fmt: skip


def _box_number(box: BoxRecord, repeated: frozenset[str]) -> int | None:
    """The call number of a box of one call of a module called more than once."""
    if len(box.calls) == 1 and box.module in repeated:
        return box.calls[0][1]
    return None


def _collapsed_record(
    trace: Trace,
    node: PlanNode,
    repeated: frozenset[str],
    signature: str | None,
    inside: str | None,
) -> NodeRecord:
    """A box's, fold's or segment's record."""
    record = node.record
    funcs = tuple(trace.op(label).func for label in record.members) or None
    default = trace.default_dtype
    if node.kind == "fold":
        within = record.boxes[0].module
    elif node.kind == "box":
        within = record.module
    else:
        within = trace.op(record.members[0]).module if record.members else ""
    rows = (member_row(trace.op(label), default, within) for label in record.members)
    ops = tuple(rows) or None
    if node.kind == "fold":
        boxes = record.boxes
        rep = boxes[0]
        return NodeRecord(
            id=node.id, kind="fold", address=rep.module, type=rep.module_type,
            call_number=_box_number(rep, repeated), first=rep.module, last=boxes[-1].module,
            count=len(boxes), members=funcs, inside=inside, signature=signature, ops=ops,
        )  # fmt: skip
    if node.kind == "box":
        return NodeRecord(
            id=node.id, kind="box", address=record.module, type=record.module_type,
            call_number=_box_number(record, repeated), members=funcs, inside=inside,
            signature=signature, defaults=defaults_text(record.module_args), ops=ops,
        )  # fmt: skip
    if node.kind != "segment":
        raise TypeError(f"node {node.id!r} of kind {node.kind!r} is not a collapsed node")
    address = trace.op(record.members[0]).module if record.members else ""
    return NodeRecord(
        id=node.id, kind="segment", address=address, members=funcs, inside=inside,
        signature=signature, ops=ops,
    )  # fmt: skip


def node_records(trace: Trace, plan: Plan, *, collapsed: bool) -> list[NodeRecord]:
    """The record of each of ``plan``'s nodes, in plan order (``collapsed``: the plan
    was drawn with ``depth`` or ``collapse``, so its boxes carry signatures)."""
    repeated = _repeated(trace)
    signatures = content_signatures(trace, plan.nodes) if collapsed else {}
    inside = inside_texts(trace, plan.nodes) if collapsed else {}
    out = []
    for node in plan.nodes:
        record: Any = node.record
        if node.kind not in _COLLAPSED:
            out.append(_op_record(node, record, repeated))
        else:
            sig = signatures.get(node.id)
            out.append(_collapsed_record(trace, node, repeated, sig, inside.get(node.id)))
    return out


def _cluster_record(
    cluster: Cluster, repeated: frozenset[str], signature: str | None
) -> ClusterRecord:
    span = cluster.span
    if span is not None:
        first, last, count = span
        return ClusterRecord(
            id=cluster.id, kind="fold", address=first, type=cluster.type_name,
            first=first, last=last, count=count, signature=signature,
        )  # fmt: skip
    number = cluster.call_number if cluster.address in repeated else None
    return ClusterRecord(
        id=cluster.id, kind="module", address=cluster.address, type=cluster.type_name,
        call_number=number, signature=signature,
    )  # fmt: skip


def cluster_records(trace: Trace, plan: Plan, *, collapsed: bool) -> dict[str, ClusterRecord]:
    """The record of each of ``plan``'s clusters, by id (a fold frame's signature
    only when ``collapsed``)."""
    if not plan.clusters:
        return {}
    repeated = _repeated(trace)
    signatures: Mapping[str, str] = fold_cluster_signatures(trace, plan) if collapsed else {}
    return {c.id: _cluster_record(c, repeated, signatures.get(c.id)) for c in plan.clusters}
