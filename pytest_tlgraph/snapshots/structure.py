"""The structural summary of a snapshot failure: what changed in the drawn graph.

Both sides are read into the same plain data, ``graphdata.GraphData`` (node id -> label
rows, edges, cluster titles, each node's cluster), from their canonical DOT. Nodes are
paired as the structural diff drawing pairs them (:mod:`.pairing`: an op renumbered by
a layer added before it is the same node), then :func:`summarize` compares the data.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.encoding.key import KEY_ID
from pytest_tlgraph.snapshots.graphdata import GraphData
from pytest_tlgraph.snapshots.inside import full_title, signature_changes
from pytest_tlgraph.snapshots.pairing import pair_nodes

__all__ = ["RowChange", "StructureSummary", "row_kind", "split_args", "summarize"]
_ARG: Final = re.compile(r"[A-Za-z_]\w*=")
_SHAPE: Final = re.compile(r"(?:\d+(?:x\d+)*|scalar|\?)(?:, .+)?")
_SHAPE_SUMMARY: Final = re.compile(r"[\dx]+(?:->|-)[\dx]+")
_ROW_NAMES: Final = MappingProxyType(
    {
        "module": "module row",
        "params": "params row",
        "saved": "saved-for-backward row",
        "shape": "shape row",
        "summary": "shape summary row",
        "row": "row",
    }
)


@dataclass(frozen=True, slots=True)
class RowChange:
    """One label-row change, read as ``<who>: <what>`` (``fc1: args row now shows ...``);
    a change inside a collapsed node reads ``<who>, inside: <what>`` (``sep``)."""

    who: str
    what: str
    sep: str = ": "

    def __str__(self) -> str:
        return f"{self.who}{self.sep}{self.what}"


@dataclass(frozen=True, slots=True)
class StructureSummary:
    """What differs between the snapshot's graph and the received one."""

    nodes_added: tuple[str, ...]
    nodes_removed: tuple[str, ...]
    #: ``(snapshot id, received id)`` of each node whose op number moved (a layer of its
    #: function was added or removed before it); it is compared under its received id.
    renumbered: tuple[tuple[str, str], ...]
    edges_added: tuple[tuple[str, str], ...]
    edges_removed: tuple[tuple[str, str], ...]
    row_changes: tuple[RowChange, ...]
    changed_nodes: tuple[str, ...]
    clusters_added: tuple[str, ...]
    clusters_removed: tuple[str, ...]
    #: ``<title>, inside: <what>`` of each repeat-fold cluster on both sides whose
    #: content signature changed (a later repetition differs; the drawn one may not).
    clusters_changed: tuple[str, ...] = ()
    #: Nodes and clusters on both sides with a content signature on one side only: a
    #: drawing stored before signatures were written (0.2), same rows otherwise.
    unsigned: tuple[str, ...] = ()

    @property
    def unchanged(self) -> bool:
        """True when nodes, edges, label rows and clusters are all the same."""
        return not (
            self.nodes_added
            or self.nodes_removed
            or self.renumbered
            or self.edges_added
            or self.edges_removed
            or self.row_changes
            or self.clusters_added
            or self.clusters_removed
            or self.clusters_changed
            or self.unsigned
        )


def _multiset_minus(left: Iterable[str], right: Iterable[str]) -> tuple[str, ...]:
    """Items of ``left`` not matched in ``right``, counting repeats, in ``left`` order."""
    spare = Counter(right)
    out = []
    for item in left:
        if spare[item]:
            spare[item] -= 1
        else:
            out.append(item)
    return tuple(out)


def summarize(snapshot: GraphData, received: GraphData) -> StructureSummary:
    """Compare the snapshot's graph with the received one, each snapshot node under the
    received id it pairs with (:func:`.pairing.pair_nodes`).

    The key node is left out: it draws the channels, not the model's structure (the
    report compares its lines with the encoding state instead). A box, fold or segment
    whose content signature changed is a changed node even when its rows are the same,
    named by its full address: ``@layer1.0 (BasicBlock), inside: relu -> gelu (2 ops)``.
    """
    new_nodes = {k: v for k, v in received.nodes.items() if k != KEY_ID}
    old_nodes = {k: v for k, v in snapshot.nodes.items() if k != KEY_ID}
    pairing = pair_nodes(old_nodes, snapshot.cluster_of, new_nodes, received.cluster_of)
    old_nodes = pairing.rows(old_nodes)
    old_edge_list = pairing.edges(snapshot.edges)
    old_edges, new_edges = set(old_edge_list), set(received.edges)
    old_signatures = {pairing.id(k): v for k, v in snapshot.signatures.items()}
    inside = signature_changes(old_signatures, received.signatures)
    changes: list[RowChange] = []
    changed: list[str] = []
    for node_id, rows in new_nodes.items():
        old_rows = old_nodes.get(node_id)
        if old_rows is None:
            continue
        if old_rows != rows:
            changes.extend(_row_changes(node_id, old_rows, rows))
        if node_id in inside:
            who = full_title(node_id, rows[0] if rows else node_id)
            changes.append(RowChange(who, inside[node_id], sep=", inside: "))
        if old_rows != rows or node_id in inside:
            changed.append(node_id)
    return StructureSummary(
        nodes_added=tuple(n for n in new_nodes if n not in old_nodes),
        nodes_removed=tuple(n for n in old_nodes if n not in new_nodes),
        renumbered=tuple(pairing.renamed.items()),
        edges_added=tuple(e for e in received.edges if e not in old_edges),
        edges_removed=tuple(e for e in old_edge_list if e not in new_edges),
        row_changes=tuple(dict.fromkeys(changes)),
        changed_nodes=tuple(changed),
        clusters_added=_multiset_minus(received.clusters, snapshot.clusters),
        clusters_removed=_multiset_minus(snapshot.clusters, received.clusters),
        clusters_changed=_clusters_changed(snapshot, received),
        unsigned=_unsigned(old_signatures, old_nodes, snapshot, received, new_nodes),
    )


def _unsigned(
    old_signatures: Mapping[str, str],
    old_nodes: Mapping[str, object],
    snapshot: GraphData,
    received: GraphData,
    new_nodes: Mapping[str, object],
) -> tuple[str, ...]:
    """Node ids, then cluster ids, on both sides that carry a signature on one only."""
    signed = received.signatures
    nodes = [
        node_id
        for node_id in new_nodes
        if node_id in old_nodes and (node_id in signed) != (node_id in old_signatures)
    ]
    old, new = snapshot.cluster_signatures, received.cluster_signatures
    on_both = {*snapshot.cluster_of.values(), *old} & {*received.cluster_of.values(), *new}
    clusters = [cid for cid in {**new, **old} if cid in on_both and (cid in new) != (cid in old)]
    return (*nodes, *clusters)


def _clusters_changed(snapshot: GraphData, received: GraphData) -> tuple[str, ...]:
    """Repeat-fold clusters on both sides (same id) whose content signature changed."""
    old = {cid: text for cid, (_, text) in snapshot.cluster_signatures.items()}
    new = {cid: text for cid, (_, text) in received.cluster_signatures.items()}
    return tuple(
        f"{received.cluster_signatures[cid][0]}, inside: {what}"
        for cid, what in signature_changes(old, new).items()
    )


def row_kind(index: int, text: str) -> str:
    """What a label row shows, from its position and form (the same on both sides)."""
    if index == 0:
        return "title"
    if text.startswith("@"):
        return "module"
    if text.startswith("params: "):
        return "params"
    if text.startswith("saved for backward: "):
        return "saved"
    if _ARG.match(text):
        return "args"
    if _SHAPE.fullmatch(text):
        return "shape"
    if _SHAPE_SUMMARY.fullmatch(text):
        return "summary"
    return "row"


def split_args(text: str) -> dict[str, str]:
    """``kernel_size=(3, 3), stride=1`` -> ``{"kernel_size": "(3, 3)", "stride": "1"}``.

    Splits on commas outside brackets, so tuple values stay whole.
    """
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    out: dict[str, str] = {}
    for part in parts:
        name, sep, value = part.strip().partition("=")
        if sep:
            out[name] = value
        elif out:
            # A comma inside an unbracketed value: it belongs to the previous arg.
            last = next(reversed(out))
            out[last] += "," + part
    return out


def _grouped(rows: Sequence[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for i, text in enumerate(rows):
        groups.setdefault(row_kind(i, text), []).append(text)
    return groups


def _row_changes(node_id: str, old: Sequence[str], new: Sequence[str]) -> list[RowChange]:
    before, after = _grouped(old), _grouped(new)
    module = (after.get("module") or before.get("module") or ["@"])[0][1:]
    out: list[RowChange] = []
    for kind in dict.fromkeys([*after, *before]):
        was, now = before.get(kind, []), after.get(kind, [])
        if was == now:
            continue
        if kind == "args":
            out.extend(_args_changes(module or node_id, ", ".join(was), ", ".join(now)))
        elif kind == "title":
            out.append(RowChange(node_id, f"title {was[0]} -> {now[0]}"))
        else:
            out.extend(_plain_changes(node_id, _ROW_NAMES[kind], was, now))
    return out


def _args_changes(who: str, was: str, now: str) -> list[RowChange]:
    before, after = split_args(was), split_args(now)
    out = []
    for name, value in after.items():
        if name not in before:
            out.append(RowChange(who, f"args row now shows {name}={value}"))
        elif before[name] != value:
            out.append(RowChange(who, f"args row changed {name}={before[name]} -> {name}={value}"))
    out.extend(
        RowChange(who, f"args row no longer shows {name}={value}")
        for name, value in before.items()
        if name not in after
    )
    return out


_PREFIXES: Final = ("params: ", "saved for backward: ")


def _plain_changes(who: str, name: str, was: list[str], now: list[str]) -> list[RowChange]:
    gone, added = _multiset_minus(was, now), _multiset_minus(now, was)
    # The row kind is named already: "params row weight 4x8", not "params row params: ...".
    gone = tuple(_strip_prefix(text) for text in gone)
    added = tuple(_strip_prefix(text) for text in added)
    if len(gone) == 1 and len(added) == 1:
        return [RowChange(who, f"{name} {gone[0]} -> {added[0]}")]
    out = [RowChange(who, f"now shows {name} {text}") for text in added]
    out.extend(RowChange(who, f"no longer shows {name} {text}") for text in gone)
    if not out:
        out.append(RowChange(who, f"{name}s reordered"))
    return out


def _strip_prefix(text: str) -> str:
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text
