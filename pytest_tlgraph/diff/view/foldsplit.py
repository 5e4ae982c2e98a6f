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

import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_tlgraph.diff.alignment import (
    Alignment,
    fold_count,
    frame_fold_count,
    repetitions,
)
from pytest_tlgraph.diff.graph import GraphModel, GraphNode
from pytest_tlgraph.diff.inside import inside_change
from pytest_tlgraph.diff.view.calls import inside_edits
from pytest_tlgraph.diff.view.rows import row_edits
from pytest_tlgraph.draw.collapse.signature import Signature

__all__ = ["FoldSplit", "fold_splits", "funcs_of", "rep_change"]


@dataclass(frozen=True, slots=True)
class FoldSplit:
    """A stored fold (a node, or a frame) drawn in parts: the stored and received ids
    of the fold and its partner, each part in address order (its name and how many
    repetitions it stands for, the partner first among them), what changed in each part
    that now stands apart (``None``: still a repetition), and the received nodes and
    frames of those parts (explained by the split, not added)."""

    old_id: str
    new_id: str
    parts: tuple[tuple[str, int], ...]
    changes: tuple[tuple[str, str | None], ...]
    members: frozenset[str] = frozenset()
    frames: frozenset[str] = frozenset()
    #: Received nodes of a changed part that differ from the fold's repetition, each
    #: with the note its drawing shows (the part's change on the first, else ``""``).
    marks: Mapping[str, str] = field(default_factory=dict)

    @property
    def count_line(self) -> str:
        """``fold x4 -> x2 + 1 + 1``."""
        total = sum(count for _, count in self.parts)
        shown = " + ".join(f"x{n}" if n > 1 else "1" for _, n in self.parts)
        return f"fold x{total} -> {shown}"


def rep_change(fold: GraphNode, part: GraphNode) -> str | None:
    """What a part that now stands apart shows unlike the fold's repetition: its
    functions (``relu -> gelu (2 ops)``), rows or arguments; ``None`` when it shows
    nothing else (it is one of the repetitions)."""
    before, after = fold.members, part.members
    if before is not None and after is not None and before != after:
        # Told by their functions (the fold's digest covers every repetition).
        text = inside_change(
            Signature("fold", len(before), before), Signature("part", len(after), after)
        )
        if text is not None:
            return text
    whats = [e.what for e in row_edits(fold.body, part.body) if e.kind != "title"]
    whats += [f"inside: {w.text}" for w in inside_edits(fold.inside_calls, part.inside_calls)]
    return "; ".join(whats) or None


def fold_splits(
    old: GraphModel,
    new: GraphModel,
    pairs: Mapping[str, str],
    cluster_pairs: Mapping[str, str],
    alignment: Alignment,
    added: Iterable[str],
) -> list[FoldSplit]:
    """Every stored fold (node or frame) paired with a received one that stands for
    fewer repetitions, whose other repetitions the received side draws apart."""
    return [
        *_node_splits(old, new, pairs, alignment, added),
        *_frame_splits(old, new, cluster_pairs, alignment),
    ]


def _node_splits(
    old: GraphModel,
    new: GraphModel,
    pairs: Mapping[str, str],
    alignment: Alignment,
    added: Iterable[str],
) -> Iterator[FoldSplit]:
    at: dict[str, list[str]] = {}
    for node_id in added:
        node = new.nodes[node_id]
        if node.kind in ("box", "fold"):
            at.setdefault(node.address, []).append(node_id)
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
            ordered = _in_order(parts, lambda n: new.nodes[n].address)
            yield FoldSplit(
                old_id,
                new_id,
                tuple((new.nodes[n].name, c) for n, c in ordered),
                tuple((new.nodes[n].name, what) for n, what in changes.items()),
                members=frozenset(changes),
            )


def funcs_of(graph: GraphModel, node_ids: Iterable[str]) -> list[str]:
    """The functions ``node_ids`` run, in drawing order: an op's own, the listed
    functions of a box or segment (a fold's once per repetition)."""
    out: list[str] = []
    for node_id in node_ids:
        node = graph.nodes[node_id]
        if node.kind == "op":
            out.append(node.func)
        elif node.kind in ("box", "fold", "segment"):
            out += list(node.members or (node.func,)) * fold_count(node)
    return out


def _under(address: str, prefix: str) -> bool:
    return address == prefix or address.startswith(f"{prefix}.")


def _frame_splits(
    old: GraphModel, new: GraphModel, cluster_pairs: Mapping[str, str], alignment: Alignment
) -> Iterator[FoldSplit]:
    for old_cid, new_cid in cluster_pairs.items():
        frame, partner = old.clusters[old_cid], new.clusters[new_cid]
        count = frame_fold_count(frame)
        if count < 2:
            continue
        kept = frame_fold_count(partner)
        covered = set(repetitions(partner.address, kept))
        reps = [alignment.translate(a) for a in repetitions(frame.address, count)]
        apart = [a for a in reps if a not in covered]
        if not apart or len(apart) + kept != count:
            continue
        before = funcs_of(old, old.members(old_cid))
        kind = alignment.types.get(partner.address)
        suffix = f" ({kind})" if kind else ""
        parts: list[tuple[str, int]] = [(partner.title, kept)]
        changes: list[tuple[str, str | None]] = []
        members: set[str] = set()
        stored = [n for n in old.members(old_cid) if old.nodes[n].kind != "input"]
        marks: dict[str, str] = {}
        for address in apart:
            held = new.nodes_under(address)
            members.update(held)
            after = funcs_of(new, held)
            what = None
            if after != before:
                what = inside_change(
                    Signature("stored", len(before), tuple(before)),
                    Signature("received", len(after), tuple(after)),
                )
                for i, node_id in enumerate(_differing(old, stored, new, held)):
                    marks[node_id] = (what or "") if i == 0 else ""
            name = f"@{address}{suffix}"
            parts.append((name, 1))
            changes.append((name, what))
        frames = frozenset(
            cid for cid, c in new.clusters.items() if any(_under(c.address, a) for a in apart)
        )
        yield FoldSplit(
            old_cid,
            new_cid,
            tuple(parts),
            tuple(changes),
            members=frozenset(members),
            frames=frames,
            marks=marks,
        )


def _differing(
    old: GraphModel, stored: Sequence[str], new: GraphModel, held: Sequence[str]
) -> list[str]:
    """The received nodes of ``held`` that the fold's repetition (``stored``) does not
    run alike: aligned on what each computes, those outside the equal runs."""
    # Function by function (a box on one side is its ops on the other), each received
    # function owned by the node that runs it.
    a = funcs_of(old, stored)
    b: list[str] = []
    owner: list[str] = []
    for node_id in held:
        funcs = funcs_of(new, [node_id])
        b += funcs
        owner += [node_id] * len(funcs)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    out: dict[str, None] = {}
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            out.update(dict.fromkeys(owner[j1:j2]))
    return list(out)


def _in_order(
    parts: Sequence[tuple[str, int]], address_of: Callable[[str], str]
) -> list[tuple[str, int]]:
    """The parts by the address of the first repetition each stands for."""

    def key(part: tuple[str, int]) -> tuple[int, int, str]:
        last = address_of(part[0]).rpartition(".")[2]
        return (0, int(last), "") if last.isdigit() else (1, 0, last)

    return sorted(parts, key=key)
