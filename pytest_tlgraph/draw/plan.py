"""The visible-node plan: which nodes, edges and module clusters a drawing has.

A pure function of ``(Trace, view/collapse options)``: channels never change it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Final

from pytest_tlgraph.trace import Layer, Op, Trace, frozen_builder

__all__ = [
    "Cluster",
    "Plan",
    "PlanNode",
    "build_plan",
    "relative_address",
    "scopes",
    "single_frames",
    "wrap_row",
]

#: Rows longer than this wrap at argument boundaries
#: (docs/decisions.md, "Drawings a reviewer can read (0.2)").
ROW_WIDTH: Final = 80

#: A module-call chain, root first: ``(address, call_number)`` per call.
Chain = tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class PlanNode:
    """One visible node: what it stands for, in emission order."""

    id: str
    kind: str  # input, output, op, layer, box, segment, fold
    record: Any  # Op (unrolled), Layer (rolled), or a collapsed-node record
    members: tuple[str, ...]  # labels of the ops it stands for
    module: str | None
    cluster: str | None  # id of the innermost cluster that holds it
    #: The module address the innermost drawn cluster names (``None`` at the top level):
    #: the node's ``@module`` row is written relative to it.
    within: str | None = None


@dataclass(frozen=True, slots=True)
class Cluster:
    """A module-call frame drawn around its nodes: ``@address (Type)``."""

    id: str
    address: str
    type_name: str
    parent: str | None

    #: The module address the nodes inside are relative to (``address`` for a module's
    #: cluster; a repeat fold of several calls names their parent's).
    scope_address: str | None = None
    #: The caption, when it is not ``@address (Type)`` (a repeat fold's).
    caption: str | None = None
    #: The number of the module call it frames (unrolled view; ``None`` when rolled).
    call_number: int | None = None
    #: A repeat fold's first and last repetition's address and its count.
    span: tuple[str, str, int] | None = None

    @property
    def scope(self) -> str:
        """The module address the nodes inside are written relative to."""
        return self.address if self.scope_address is None else self.scope_address

    @property
    def title(self) -> str:
        """The cluster's caption text."""
        if self.caption is not None:
            return self.caption
        return f"@{self.address} ({self.type_name})"


@dataclass(frozen=True, slots=True)
class Plan:
    """Nodes in execution order, edges in source order, clusters outermost first."""

    view: str
    nodes: tuple[PlanNode, ...]
    edges: tuple[tuple[str, str], ...]
    clusters: tuple[Cluster, ...]


# One node per op and one cluster per module call: the fast frozen constructors.
_new_node: Final = frozen_builder(PlanNode)
_new_cluster: Final = frozen_builder(Cluster)
_new_plan: Final = frozen_builder(Plan)
_TUPLE: Final = frozenset({tuple})


def _clusters(
    trace: Trace, view: str, records: Sequence[Op | Layer]
) -> tuple[tuple[Cluster, ...], dict[str, str | None]]:
    """Clusters holding at least two visible nodes (a one-op module is named by its
    node's ``@module`` row instead), and each node's innermost drawn cluster."""
    return clusters_for(trace, view, {r.label: r.module_calls for r in records})


def clusters_for(
    trace: Trace,
    view: str,
    chains: Mapping[str, Sequence[tuple[str, int]]],
    *,
    forced: Mapping[tuple[str, int], tuple[str, str | None, str, tuple[str, str, int]]]
    | None = None,
) -> tuple[tuple[Cluster, ...], dict[str, str | None]]:
    """The drawn clusters for visible nodes given as node id -> module-call chain (root
    first): a call is a cluster when it holds at least two visible nodes. Also returns
    each node's innermost drawn cluster (``None`` at the top level).

    ``forced`` names calls drawn as clusters whatever they hold (repeat folds), each
    with its caption, the address its nodes are relative to (``None``: its own), its
    type and its span (first address, last address, count); a key there need not be a
    module call (a fold of several calls)."""
    # Nodes of one module call share its chain: each distinct chain is worked out once,
    # in order of first appearance (which keeps the clusters in node order).
    listed = list(chains.values())
    if not _TUPLE.issuperset(map(type, listed)):
        listed = [tuple(chain) for chain in listed]
    # A rolled drawing draws every call of one module as one cluster: its nodes are
    # counted per address there, per call in an unrolled drawing (counted in C).
    rolled = view == "rolled"
    calls = itertools.chain.from_iterable(listed)
    population: Counter[Any] = Counter(map(itemgetter(0), calls) if rolled else calls)
    types: dict[tuple[str, int], str] | None = None
    kept: dict[Any, Cluster] = {}
    innermost_of: dict[Sequence[tuple[str, int]], str | None] = {}
    for chain in dict.fromkeys(listed):
        parent: str | None = None
        for call in chain:
            address = call[0]
            if address == "":  # the root is never drawn
                continue
            drawn_as = address if rolled else call
            fold = forced.get(call) if forced else None
            # A call holds at most the nodes of its caller: below the first call with
            # fewer than two, none has two (but a fold is drawn whatever it holds).
            if population[drawn_as] < 2 and fold is None:
                if forced:
                    continue
                break
            cluster = kept.get(drawn_as)
            if cluster is None:
                if types is None:  # built once, and only for a drawing with clusters
                    types = {(c.address, c.call_number): c.type_name for c in trace.modules}
                cid = f"cluster_{address}" if rolled else f"cluster_{address}#{call[1]}"
                number = None if rolled else call[1]
                if fold is None:
                    cluster = _new_cluster(
                        cid, address, types.get(call, "?"), parent, None, None, number
                    )
                else:
                    cluster = _new_cluster(
                        cid, address, fold[2], parent, fold[1], fold[0], number, fold[3]
                    )
                kept[drawn_as] = cluster
            parent = cluster.id
        innermost_of[chain] = parent
    innermost = dict(zip(chains, map(innermost_of.__getitem__, listed), strict=True))
    clusters = tuple(kept.values())
    if len(clusters) > 1:
        clusters, innermost = single_frames(clusters, innermost)
    return clusters, innermost


def single_frames(
    clusters: Sequence[Cluster], innermost: Mapping[str, str | None]
) -> tuple[tuple[Cluster, ...], dict[str, str | None]]:
    """``clusters`` with no frame drawn twice: a cluster that holds one cluster and no
    node of its own is dropped, and what it held moves to its parent. The inner frame
    stays (it names the same nodes more closely), unless the outer one is a repeat
    fold's, whose count must stay: then the inner frame goes instead. Returns the kept
    clusters, in order, and each node's innermost drawn cluster."""
    holds = Counter(innermost.values())
    kids: dict[str, list[str]] = {}
    for cluster in clusters:
        if cluster.parent is not None:
            kids.setdefault(cluster.parent, []).append(cluster.id)
    by_id = {c.id: c for c in clusters}
    gone: dict[str, str | None] = {}  # dropped cluster id -> the cluster taking its place
    for cluster in clusters:  # outermost first
        inner = kids.get(cluster.id, ())
        if holds[cluster.id] or len(inner) != 1:
            continue
        if cluster.caption is None:
            gone[cluster.id] = None  # resolved to its parent below
        elif by_id[inner[0]].caption is None:
            gone[inner[0]] = cluster.id
    if not gone:
        return tuple(clusters), dict(innermost)

    def placed(cid: str | None) -> str | None:
        while cid is not None and cid in gone:
            cid = gone[cid] if gone[cid] is not None else by_id[cid].parent
        return cid

    kept = tuple(
        c if placed(c.parent) == c.parent else _replace_parent(c, placed(c.parent))
        for c in clusters
        if c.id not in gone
    )
    return kept, {node: placed(cid) for node, cid in innermost.items()}


def _replace_parent(cluster: Cluster, parent: str | None) -> Cluster:
    return _new_cluster(
        cluster.id,
        cluster.address,
        cluster.type_name,
        parent,
        cluster.scope_address,
        cluster.caption,
        cluster.call_number,
        cluster.span,
    )


def scopes(clusters: Sequence[Cluster]) -> dict[str, str]:
    """Cluster id -> the module address its nodes are written relative to."""
    return {c.id: c.scope for c in clusters}


def build_plan(trace: Trace, *, view: str = "unrolled") -> Plan:
    """The full-detail plan for ``trace`` in ``view``: one node per op (unrolled) or per
    layer (rolled). Boxed plans (``depth``/``collapse``) are the collapse stage's; the
    drawing orchestrator chooses between the two."""
    records: list[Op | Layer] = list(trace.layers.values()) if view == "rolled" else list(trace.ops)
    clusters, innermost = _clusters(trace, view, records)
    scope = scopes(clusters)
    rolled = view == "rolled"
    body = "layer" if rolled else "op"
    nodes = []
    for r in records:
        func, label = r.func, r.label
        record_kind = func == "input" or func == "output"
        cluster = innermost[label]
        nodes.append(
            _new_node(
                label,
                func if record_kind else body,
                r,
                r.ops if isinstance(r, Layer) else (label,),
                None if record_kind else r.module,
                cluster,
                None if cluster is None else scope[cluster],
            )
        )
    edges = tuple(dict.fromkeys([(parent, r.label) for r in records for parent in r.parents]))
    return _new_plan(view=view, nodes=tuple(nodes), edges=edges, clusters=clusters)


def relative_address(address: str, within: str | None) -> str | None:
    """``address`` as seen from inside the cluster of module ``within``: ``query`` for
    ``encoder.layer.0.attention.self.query`` inside ``encoder.layer.0.attention.self``;
    ``None`` when they are the same module (the cluster already names it)."""
    if not within:
        return address
    if address == within:
        return None
    if address.startswith(within) and address[len(within)] == ".":
        return address[len(within) + 1 :]
    return address


def _parts(text: str) -> list[str]:
    """``text`` split at its top-level ``", "`` (never inside brackets or a value)."""
    parts: list[str] = []
    depth = start = 0
    i = 0
    while i < len(text):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and text.startswith(", ", i):
            parts.append(text[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(text[start:])
    return parts


def wrap_row(text: str, width: int = ROW_WIDTH) -> tuple[str, ...]:
    """``text`` as lines of at most ``width`` characters, broken only after a top-level
    ``", "`` (the comma stays at the end of the line); a single value longer than
    ``width`` is kept whole."""
    if len(text) <= width:
        return (text,)
    lines: list[str] = []
    current = ""
    for part in _parts(text):
        if not current:
            current = part
        elif len(current) + 2 + len(part) <= width - 1:
            current = f"{current}, {part}"
        else:
            lines.append(current + ",")
            current = part
    lines.append(current)
    return tuple(lines)
