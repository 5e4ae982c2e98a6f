"""Content signatures: what a box, fold or segment hides, written into the canonical DOT.

Collapsing is presentation only: a collapsed node's title and shape say little of the
ops it stands for, so its DOT statement also carries, in the ``comment`` attribute
(which no renderer draws: the PNG is unchanged), a signature of everything it hides:

``3f2a9c0b1d4e 7 ops: conv2d, batch_norm, relu, conv2d, batch_norm, add_, relu``

* a 12-hex-digit BLAKE2b digest over each member op, in execution order: its function,
  where its inputs come from (an earlier member, or the n-th outside source), its output
  shape and dtype, its args row with every arg shown, its params (name below the box's
  address, shape, trainable) and the nested module calls it runs in (address below the
  box, type): no absolute address, so a box moved elsewhere keeps its digest;
  a fold hashes every repetition, a rolled box every call;
* how many ops one instance holds (a fold's representative), and their functions, with
  consecutive repeats merged (``add x3``), at most :data:`MAX_LISTED_GROUPS` groups (past
  that only the digest and the count are written).

A repeat-fold cluster (``@h.0-11 (Block) x12``: the first repetition drawn, standing for
all) carries one too, on its ``graph [...]`` line: the digest of every op of every
repetition and their count (:func:`fold_cluster_signatures`).

Any change inside therefore fails the DOT comparison, and :func:`read_signature` reads
the attribute back so a failure report can name what changed. The digest depends only
on the trace, never on the process (no ``hash()``), so a snapshot written by one run
matches the next.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.draw.collapse.records import BoxRecord, FoldRecord, SegmentRecord
from pytest_tlgraph.draw.labels import args_row, dtype_name, format_shape
from pytest_tlgraph.draw.plan import Plan, PlanNode
from pytest_tlgraph.trace import Op, Trace, outermost_first

__all__ = [
    "DIGEST_HEX",
    "MAX_INSIDE_CALLS",
    "MAX_LISTED_GROUPS",
    "Signature",
    "content_signature",
    "content_signatures",
    "expand_funcs",
    "fold_cluster_signatures",
    "inside_calls",
    "inside_texts",
    "read_signature",
]

#: Hex digits of the digest: 48 bits, no accidental collision among a drawing's nodes.
DIGEST_HEX: Final = 12
#: At most this many function groups are listed; a longer box writes its digest only.
MAX_LISTED_GROUPS: Final = 200
#: At most this many member calls are listed in ``tl_inside``.
MAX_INSIDE_CALLS: Final = 64

_SIGNATURE: Final = re.compile(rf"([0-9a-f]{{{DIGEST_HEX}}}) (\d+) ops?(?:: (.+))?")
_REPEAT: Final = re.compile(r"(.+) x(\d+)")


@dataclass(frozen=True, slots=True)
class Signature:
    """A collapsed node's signature read back: the digest, how many ops one instance
    holds, and their functions in order (``None`` when the list was left out)."""

    digest: str
    count: int
    funcs: tuple[str, ...] | None


#: Each module call's type, depth and type path (a short digest of the types of the
#: call and every call around it, outermost first).
Calls = dict[tuple[str, int], tuple[str, int, str]]


def _calls(trace: Trace) -> Calls:
    """:data:`Calls` of ``trace``, each type path built from its parent's."""
    out: Calls = {}
    for c in outermost_first({call.key: call for call in trace.modules}):
        above = out[c.parent][2] if c.parent is not None and c.parent in out else ""
        path = hashlib.blake2b(
            f"{above}/{c.type_name}".encode("utf-8", "backslashreplace"), digest_size=8
        ).hexdigest()
        out[c.key] = (c.type_name, c.depth, path)
    return out


def _op_lines(
    trace: Trace, members: Sequence[str], depth: int | None, calls: Calls
) -> Iterator[str]:
    """One line per member op: everything the full-detail drawing would show of it,
    its module calls written below the box's call (at ``depth``; ``None``: a segment,
    below nothing)."""
    position = {label: i for i, label in enumerate(members)}
    outside: dict[str, int] = {}
    for label in members:
        op = trace.op(label)
        sources = []
        for parent in op.parents:
            if parent in position:
                sources.append(str(position[parent]))
            else:
                sources.append(f"in{outside.setdefault(parent, len(outside))}")
        prefix = _box_prefix(op, depth, calls)[1]
        params = ";".join(
            f"{_below(n, prefix)}:{format_shape(shape)}:{int(t)}" for n, shape, t in op.params
        )
        fields = [
            op.func,
            ",".join(sources),
            format_shape(op.shape),
            dtype_name(op.dtype) or "",
            _args(op),
            params,
            _nested(op, depth, calls),
        ]
        if op.call or op.grad_mode:
            # Every argument of the call and the grad mode it ran under (absent from a
            # call of tensors alone, so such ops keep the digest they had before).
            fields.append(", ".join(f"{a.name}={a.text}" for a in op.call))
            fields.append(op.grad_mode or "")
        yield "\x1f".join(fields)


def _args(op: Op) -> str:
    """The op's args row with every arg shown (a hidden default is still content)."""
    row = args_row(
        op.module_args,
        family=op.module_family,
        input_shape=None,
        output_shape=None,
        show_redundant=True,
    )
    return row or ""


def _nested(op: Op, depth: int | None, calls: Calls) -> str:
    """The module calls ``op`` runs in below the box's call (the one at ``depth``): the
    innermost one's address below the box's, its type and the type path of every call
    around it (the addresses of the calls between are prefixes of the innermost's)."""
    chain = op.module_calls
    start, prefix = _box_prefix(op, depth, calls)
    if start >= len(chain):
        return ""
    key = chain[-1]
    type_name, _, path = calls.get(key, ("?", 0, ""))
    return f"{len(chain) - start}:{_below(key[0], prefix)}:{type_name}:{path}"


def _box_prefix(op: Op, depth: int | None, calls: Calls) -> tuple[int, str]:
    """Where the box's call (the one at ``depth``) sits in ``op``'s module calls (the
    index just past it) and its address with a trailing dot; ``(0, "")`` for none."""
    if depth is not None:
        for i, key in enumerate(op.module_calls):
            if calls.get(key, ("", -1, ""))[1] == depth:
                return i + 1, f"{key[0]}."
    return 0, ""


def _below(name: str, prefix: str) -> str:
    """``name`` (a module address or parameter name) relative to the box's address, so
    a box moved to another address keeps its digest."""
    return name[len(prefix) :] if prefix and name.startswith(prefix) else name


def inside_calls(trace: Trace, members: Sequence[str]) -> str | None:
    """The ``tl_inside`` text of a collapsed node: each member op whose call has a
    non-tensor argument or ran under another grad mode, in order, as ``func: args``
    (``softmax: dim=-1; scaled_dot_product_attention: is_causal=True``), so that a
    change inside names the op and the argument. At most :data:`MAX_INSIDE_CALLS`
    entries (the digest covers the rest); ``None`` when no member has one."""
    parts: list[str] = []
    for label in members:
        op = trace.op(label)
        shown = [f"{a.name}={a.text}" for a in op.call if not a.operand]
        if op.grad_mode:
            shown.append(f"grad={op.grad_mode}")
        if shown:
            if len(parts) == MAX_INSIDE_CALLS:
                parts.append("...")
                break
            parts.append(f"{op.func}: {', '.join(shown)}")
    return "; ".join(parts) if parts else None


def inside_texts(trace: Trace, nodes: Iterable[PlanNode]) -> dict[str, str]:
    """The ``tl_inside`` text of each box, fold and segment among ``nodes`` that has one."""
    out: dict[str, str] = {}
    for node in nodes:
        record = node.record
        if isinstance(record, (BoxRecord, FoldRecord, SegmentRecord)):
            text = inside_calls(trace, record.members)
            if text is not None:
                out[node.id] = text
    return out


def content_signatures(trace: Trace, nodes: Iterable[PlanNode]) -> dict[str, str]:
    """The ``comment`` text of each box, fold and segment among ``nodes``, by node id."""
    calls = _calls(trace)
    out: dict[str, str] = {}
    for node in nodes:
        record = node.record
        if isinstance(record, (BoxRecord, FoldRecord, SegmentRecord)):
            out[node.id] = content_signature(trace, node, calls)
    return out


def fold_cluster_signatures(trace: Trace, plan: Plan) -> dict[str, str]:
    """The ``comment`` text of each repeat-fold cluster (``@h.0-11 (Block) x12``), by
    cluster id: a digest of every op of every repetition it folds (the nodes inside
    stand for them all) and how many there are. No function list: the representative's
    ops are drawn, and a repetition running other functions is not folded."""
    folds = {c.id for c in plan.clusters if c.caption is not None}
    if not folds:
        return {}
    parent = {c.id: c.parent for c in plan.clusters}
    hidden: dict[str, list[str]] = {cid: [] for cid in folds}
    for node in plan.nodes:
        cid = node.cluster
        while cid is not None:
            if cid in hidden:
                hidden[cid].extend(node.members)
            cid = parent[cid]
    calls = _calls(trace)
    index = {label: trace.op(label).index for labels in hidden.values() for label in labels}
    out = {}
    for cid, labels in hidden.items():
        members = sorted(labels, key=index.__getitem__)
        lines = ["repeat fold", *_op_lines(trace, members, None, calls)]
        out[cid] = f"{_digest(lines)} {len(members)} {'op' if len(members) == 1 else 'ops'}"
    return out


def _digest(lines: Sequence[str]) -> str:
    text = "\n".join(lines).encode("utf-8", "backslashreplace")
    return hashlib.blake2b(text, digest_size=DIGEST_HEX // 2).hexdigest()


def content_signature(trace: Trace, node: PlanNode, calls: Calls | None = None) -> str:
    """The ``comment`` text of one collapsed node (see the module docstring): its digest
    covers every op it stands for (``node.members``: every folded repetition too), its
    list the ops of the one instance its rows show."""
    if calls is None:
        calls = _calls(trace)
    record = node.record
    if isinstance(record, FoldRecord):
        box: BoxRecord | None = record.representative_box
        head = f"fold {record.count} {record.boxes[0].module_type}"
    elif isinstance(record, BoxRecord):
        box = record
        head = f"box {record.module_type} {record.num_calls}"
    elif isinstance(record, SegmentRecord):
        box, head = None, "segment"
    else:
        raise TypeError(f"node {node.id!r} of kind {node.kind!r} hides no ops")
    depth = None if box is None else box.depth
    digest = _digest([head, *_op_lines(trace, node.members, depth, calls)])
    funcs = [trace.op(label).func for label in record.members]
    noun = "op" if len(funcs) == 1 else "ops"
    listed = _listing(funcs)
    return f"{digest} {len(funcs)} {noun}" + (f": {listed}" if listed else "")


def _listing(funcs: Sequence[str]) -> str | None:
    """``conv2d, batch_norm, add x3``; ``None`` past :data:`MAX_LISTED_GROUPS` groups or
    when a function name could not be read back from the list."""
    groups: list[list[str | int]] = []
    for func in funcs:
        if ", " in func or _REPEAT.fullmatch(func) or not func:
            return None
        if groups and groups[-1][0] == func:
            groups[-1][1] = int(groups[-1][1]) + 1
        else:
            groups.append([func, 1])
            if len(groups) > MAX_LISTED_GROUPS:
                return None
    return ", ".join(f"{f} x{n}" if n != 1 else str(f) for f, n in groups) or None


def expand_funcs(listed: str) -> tuple[str, ...]:
    """``conv2d, add x3`` -> ``("conv2d", "add", "add", "add")``."""
    out: list[str] = []
    for part in listed.split(", "):
        repeat = _REPEAT.fullmatch(part)
        if repeat is not None:
            out.extend([repeat[1]] * int(repeat[2]))
        else:
            out.append(part)
    return tuple(out)


def read_signature(text: object) -> Signature | None:
    """The signature in a node's ``comment`` attribute, or ``None`` when it holds none."""
    if not isinstance(text, str):
        return None
    match = _SIGNATURE.fullmatch(text)
    if match is None:
        return None
    funcs = expand_funcs(match[3]) if match[3] else None
    return Signature(match[1], int(match[2]), funcs)
