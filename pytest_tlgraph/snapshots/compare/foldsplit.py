"""A repeat fold that the received drawing breaks into parts.

A fold (``x4 @blocks.0-3 (EncoderBlock)``) stands for repetitions of one module whose
content is the same. When one repetition changes, the received drawing can no longer
fold it with the others: it draws ``x2 @blocks.0-1``, then ``@blocks.2`` and
``@blocks.3`` as boxes of their own. Read node by node that is a fold that shrank and
two blocks added; what happened is that one repetition changed. :func:`fold_splits`
finds such a fold (the module pairing has already paired each repetition's address)
and tells each part that now stands apart against the fold's repetition: ``relu ->
gelu (2 ops)`` for the one that changed, nothing for one that is still a repetition.
The story then reads ``@blocks.2 (EncoderBlock): relu -> gelu (2 ops); fold x4 -> x2 +
1 + 1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_tlgraph.draw.collapse.signature import Signature, read_signature
from pytest_tlgraph.snapshots.compare.alignment import Alignment, fold_count, repetitions
from pytest_tlgraph.snapshots.compare.calls import inside_edits
from pytest_tlgraph.snapshots.compare.graph import GraphModel, GraphNode
from pytest_tlgraph.snapshots.compare.inside import inside_change
from pytest_tlgraph.snapshots.compare.rows import row_edits

__all__ = ["FoldSplit", "fold_splits"]


@dataclass(frozen=True, slots=True)
class FoldSplit:
    """A stored fold drawn in parts: its stored id, the received parts in address order
    (``(id, repetitions it stands for)``: the fold's partner first among them), and
    what changed in each part that now stands apart (``None``: still a repetition)."""

    old_id: str
    new_id: str
    parts: tuple[tuple[str, int], ...]
    changes: Mapping[str, str | None]

    @property
    def count_line(self) -> str:
        """``fold x4 -> x2 + 1 + 1``."""
        total = sum(count for _, count in self.parts)
        shown = " + ".join(f"x{n}" if n > 1 else "1" for _, n in self.parts)
        return f"fold x{total} -> {shown}"


def _signature(node: GraphNode) -> Signature | None:
    return read_signature(node.signature) if node.signature else None


def rep_change(fold: GraphNode, part: GraphNode) -> str | None:
    """What a part that now stands apart shows unlike the fold's repetition: its
    functions (``relu -> gelu (2 ops)``), rows or arguments; ``None`` when it shows
    nothing else (it is one of the repetitions)."""
    before, after = _signature(fold), _signature(part)
    if before is not None and after is not None and before.funcs != after.funcs:
        # The digests differ by construction (the fold's covers every repetition).
        text = inside_change(Signature("fold", before.count, before.funcs), after)
        if text is not None:
            return text
    whats = [e.what for e in row_edits(fold.body, part.body) if e.kind != "title"]
    whats += [f"inside: {w}" for w in inside_edits(fold.inside_calls, part.inside_calls)]
    return "; ".join(whats) or None


def fold_splits(
    old: GraphModel,
    new: GraphModel,
    pairs: Mapping[str, str],
    alignment: Alignment,
    added: Iterable[str],
) -> list[FoldSplit]:
    """Every stored fold paired with a received node that stands for fewer repetitions,
    whose other repetitions are received boxes or folds among ``added``."""
    at: dict[str, list[str]] = {}
    for node_id in added:
        node = new.nodes[node_id]
        if node.kind in ("box", "fold"):
            at.setdefault(node.address, []).append(node_id)
    out: list[FoldSplit] = []
    for old_id, new_id in pairs.items():
        fold, partner = old.nodes[old_id], new.nodes[new_id]
        if fold.kind != "fold" or partner.kind not in ("box", "fold"):
            continue
        reps = [alignment.translate(a) for a in repetitions(fold.address, fold_count(fold))]
        covered = set(repetitions(partner.address, fold_count(partner)))
        parts: list[tuple[str, int]] = [(new_id, fold_count(partner))]
        changes: dict[str, str | None] = {}
        for address in reps:
            if address in covered:
                continue
            found = next((n for n in at.get(address, ()) if n not in changes), None)
            if found is None:
                continue
            node = new.nodes[found]
            count = fold_count(node)
            covered.update(repetitions(node.address, count))
            parts.append((found, count))
            changes[found] = rep_change(fold, node)
        if changes:
            out.append(FoldSplit(old_id, new_id, tuple(_in_order(parts, new)), changes))
    return out


def _in_order(parts: Sequence[tuple[str, int]], graph: GraphModel) -> list[tuple[str, int]]:
    """The parts by the address of the first repetition each stands for."""

    def key(part: tuple[str, int]) -> tuple[int, int, str]:
        last = graph.nodes[part[0]].address.rpartition(".")[2]
        return (0, int(last), "") if last.isdigit() else (1, 0, last)

    return sorted(parts, key=key)
