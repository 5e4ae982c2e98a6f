"""Which module of the stored drawing is which module of the received one.

Node pairing (:mod:`.pairing`) knows a node by its place: its module address. An edit
that moves modules (a block inserted at the head of a stage, a block removed, a layer
renamed, a fold that now repeats another number of times) shifts the addresses of
everything after it, so addresses must be paired before nodes are. This module does
that, top down, like ``diff`` on each module's children:

* each module address of a side gets an address-free *content key*: the functions,
  rows and signatures of the nodes it holds, each with its address below the module's;
  a fold stands for each module it repeats (``layers.0*4``: ``layers.0`` to
  ``layers.3``), known by its type and the functions of one repetition;
* the children of two paired modules of the same name (not a number) and key are the
  same module; the
  others are aligned on their keys (longest matching runs first, as
  :class:`difflib.SequenceMatcher` does): equal children are the same module, moved
  when their names differ, and so is everything below them;
* children left over are paired by name (a module of the same attribute name changed
  inside: ``conv1``), then, among numbered children between the same two matched runs,
  by type in order (a block of a stage that changed inside); both such pairs are
  aligned again one level down;
* what is left is a module added (received side) or removed (stored side).

:meth:`Alignment.translate` writes a stored address as the received side addresses the
same module, so "same place" means the same module, not the same string.
"""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from pytest_tlgraph.diff.graph import GraphCluster, GraphModel, GraphNode

__all__ = ["Alignment", "align_modules", "fold_count", "frame_fold_count", "repetitions"]

#: The prefix a removed module's addresses are translated to: no received address has it.
_GONE: Final = "\x00removed:"


@dataclass(frozen=True, slots=True)
class Alignment:
    """Stored module address -> received module address of each module on both sides
    (``paired``); the stored modules with no partner (``removed``) and the received
    ones (``added``). The root (``""``) is always paired with itself."""

    paired: Mapping[str, str]
    removed: frozenset[str]
    added: frozenset[str]
    #: Paired modules whose content is the same on both sides (their addresses may
    #: differ: a moved module).
    same: frozenset[str] = frozenset()
    #: Received module address -> its type, where the drawing names one.
    types: Mapping[str, str] = field(default_factory=dict)
    #: Siblings that run in another order: their stored addresses in the stored order
    #: and in the order they run now.
    reordered: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    _cache: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def translate(self, address: str) -> str:
        """``address`` of the stored side as the received side writes the same module:
        its longest paired prefix replaced by its partner (``layer2.0.conv1`` ->
        ``layer2.1.conv1`` when a block was inserted in front of ``layer2.0``). An
        address below a removed module gets a form no received address has."""
        hit = self._cache.get(address)
        if hit is not None:
            return hit
        parts = address.split(".") if address else []
        out = address
        for cut in range(len(parts), -1, -1):
            prefix = ".".join(parts[:cut])
            if prefix in self.paired:
                rest = ".".join(parts[cut:])
                head = self.paired[prefix]
                out = f"{head}.{rest}" if head and rest else head or rest
                break
            if prefix in self.removed:
                out = _GONE + address
                break
        self._cache[address] = out
        return out

    def may_pair(self, translated: str, received: str) -> bool:
        """Whether a stored node at ``translated`` (an address :meth:`translate` gave)
        may pair with a received node at ``received`` when their addresses differ: only
        a node of a removed module with one of an added module (a module the alignment
        could not pair), or with one of a module of the same name (a frame around it
        removed or added: ``n1.fc`` is ``fc``), never across two modules it paired
        otherwise."""
        if translated == received:
            return True
        if not translated.startswith(_GONE):
            return False
        parts = received.split(".") if received else []
        if parts and translated.rpartition(".")[2] == parts[-1]:
            return True
        return any(".".join(parts[:cut]) in self.added for cut in range(1, len(parts) + 1))

    def moves(self) -> list[tuple[str, str]]:
        """``(stored address, received address)`` of each module that only moved (same
        content, another address), outermost only; modules that changed places with
        their siblings are :attr:`reordered` instead."""
        out: list[tuple[str, str]] = []
        taken: set[str] = set()
        swapped = {old for _, after in self.reordered for old in after}
        for old, new in sorted(self.paired.items(), key=lambda item: item[0].count(".")):
            if old == new or old not in self.same or old in swapped:
                continue
            parts = old.split(".")
            if any(".".join(parts[:cut]) in taken for cut in range(1, len(parts))):
                continue  # inside a module that moved: said with it
            taken.add(old)
            out.append((old, new))
        return out


def _parts(address: str) -> list[str]:
    return address.split(".") if address else []


def fold_count(node: GraphNode) -> int:
    """How many repetitions a node stands for: a fold's count, else 1."""
    return node.fold_count or 1 if node.kind == "fold" else 1


def frame_fold_count(cluster: GraphCluster) -> int:
    """How many repetitions a frame stands for: a fold frame's count, else 1."""
    return cluster.fold_count or 1 if cluster.kind == "fold" else 1


def repetitions(address: str, count: int) -> list[str]:
    """The module addresses a node at ``address`` standing for ``count`` repetitions
    covers: ``layers.0`` and 3 -> ``layers.0``, ``layers.1``, ``layers.2``."""
    parts = _parts(address)
    if count > 1 and parts and parts[-1].isdigit():
        first = int(parts[-1])
        return [".".join([*parts[:-1], str(first + i)]) for i in range(count)]
    return [address]


def _node_key(node: GraphNode) -> Hashable:
    """What a node shows, its address left out: kind, function, rows (no ``@module``
    row) and content signature."""
    rows = tuple(row for row in node.body if not row.startswith("@"))
    # The digest is left out: a box inside a fold's frame hashes every repetition.
    funcs = node.members
    if node.kind == "fold":
        return ("rep", node.func, funcs)  # one repetition: its type and functions
    return (node.kind, node.func, rows, funcs)


class _Side:
    """One side's module tree: each module address's children in drawing order, its
    content key and its type."""

    def __init__(self, graph: GraphModel) -> None:
        self.children: dict[str, list[str]] = {"": []}
        keys: dict[str, list[Hashable]] = {"": []}
        self.types: dict[str, str] = {}
        for cluster in graph.clusters.values():
            if cluster.type:
                self.types.setdefault(cluster.address, cluster.type)
        # A fold's frame draws its first repetition for all of them.
        frames = {
            cid: (cluster.address, count)
            for cid, cluster in graph.clusters.items()
            if (count := frame_fold_count(cluster)) > 1
        }
        for address, count in frames.values():
            for rep in repetitions(address, count):
                self.types.setdefault(rep, self.types.get(address, ""))
        for node in graph.nodes.values():
            if node.kind in ("input", "output"):
                keys[""].append((node.kind, node.title))
                continue
            key = _node_key(node)
            if node.kind in ("box", "fold"):
                self.types.setdefault(node.address, node.func)
            stands_for = repetitions(node.address, fold_count(node))
            frame = next((frames[c] for c in graph.cluster_path(node.id) if c in frames), None)
            if frame is not None:
                start, count = frame
                rest = node.address[len(start) :]
                stands_for = [rep + rest for rep in repetitions(start, count)]
            for address in stands_for:
                self._add(address)
                if node.kind in ("box", "fold"):
                    self.types.setdefault(address, node.func)
                own = _parts(address)
                for cut in range(len(own) + 1):
                    prefix = ".".join(own[:cut])
                    rel = ".".join(own[cut:])
                    keys.setdefault(prefix, []).append((rel if cut < len(own) else "", key))
        self.keys: dict[str, Hashable] = {a: hash(tuple(k)) for a, k in keys.items()}

    def _add(self, address: str) -> None:
        parts = _parts(address)
        for cut in range(1, len(parts) + 1):
            child = ".".join(parts[:cut])
            if child not in self.children:
                self.children[child] = []
                self.children[".".join(parts[: cut - 1])].append(child)


def _name(address: str) -> str:
    return address.rpartition(".")[2]


def align_modules(old: GraphModel, new: GraphModel) -> Alignment:
    """Pair the stored side's modules with the received side's (module docstring)."""
    a, b = _Side(old), _Side(new)
    paired: dict[str, str] = {"": ""}
    same: set[str] = set()
    if a.keys.get("") == b.keys.get(""):
        same.add("")
    todo: list[tuple[str, str]] = [("", "")]
    reordered: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    while todo:
        old_parent, new_parent = todo.pop()
        olds, news = a.children.get(old_parent, []), b.children.get(new_parent, [])
        found = list(_align_children(a, b, olds, news))
        for old_child, new_child, equal in found:
            paired[old_child] = new_child
            if equal:
                same.add(old_child)
            todo.append((old_child, new_child))
        order = _reorder(olds, news, {o: n for o, n, _ in found})
        if order is not None:
            reordered.append(order)
    taken = set(paired.values())
    return Alignment(
        paired=paired,
        removed=frozenset(x for x in a.children if x not in paired),
        added=frozenset(x for x in b.children if x not in taken),
        same=frozenset(same),
        types=b.types,
        reordered=tuple(reordered),
    )


def _reorder(
    olds: Sequence[str], news: Sequence[str], partner: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The stored children between the first and the last one out of order, in the
    stored order and in the order their partners run now; ``None`` when in order."""
    position = {child: i for i, child in enumerate(news)}
    kept = [c for c in olds if c in partner]
    now = sorted(kept, key=lambda c: position[partner[c]])
    wrong = [i for i, (x, y) in enumerate(zip(kept, now, strict=True)) if x != y]
    if not wrong:
        return None
    span = slice(wrong[0], wrong[-1] + 1)
    return tuple(kept[span]), tuple(now[span])


def _runs(
    children: Sequence[str], keys: Mapping[str, Hashable]
) -> list[tuple[Hashable, list[str]]]:
    """``children`` as runs of equal keys, in order."""
    out: list[tuple[Hashable, list[str]]] = []
    for child in children:
        key = keys[child]
        if out and out[-1][0] == key:
            out[-1][1].append(child)
        else:
            out.append((key, [child]))
    return out


def _align_children(
    a: _Side, b: _Side, olds: Sequence[str], news: Sequence[str]
) -> Iterator[tuple[str, str, bool]]:
    """``(old child, new child, same content)`` of each pair of two paired modules'
    children (module docstring)."""
    # Same name, same content: the same module (among equal siblings the name decides).
    # Numbered children are left to the alignment (a block inserted at a stage's head
    # shifts every index).
    by_name = {_name(c): c for c in news}
    kept: set[str] = set()
    for child in olds:
        partner = by_name.get(_name(child))
        if partner is None or _name(child).isdigit():
            continue
        if a.keys[child] == b.keys[partner]:
            kept.add(partner)
            yield child, partner, True
    olds = [c for c in olds if by_name.get(_name(c)) not in kept]
    news = [c for c in news if c not in kept]
    # Aligned run by run: a stage of 2,000 alike blocks is one run (aligning alike
    # items one by one costs the product of their counts).
    old_runs, new_runs = _runs(olds, a.keys), _runs(news, b.keys)
    matcher = difflib.SequenceMatcher(
        a=[k for k, _ in old_runs], b=[k for k, _ in new_runs], autojunk=False
    )
    matched: list[tuple[str, str]] = []
    opcodes = matcher.get_opcodes()
    for k, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag != "equal":
            continue
        # A run that grew or shrank leaves the end next to the other changes: its head
        # when only changes come before it, else its tail.
        changes_before = k > 0 and opcodes[k - 1][0] != "equal"
        changes_after = k + 1 < len(opcodes) and opcodes[k + 1][0] != "equal"
        for (_, old_run), (_, new_run) in zip(old_runs[i1:i2], new_runs[j1:j2], strict=True):
            width = min(len(old_run), len(new_run))
            if changes_before and not changes_after:
                ends_kept = old_run[len(old_run) - width :], new_run[len(new_run) - width :]
            else:
                ends_kept = old_run[:width], new_run[:width]
            matched += zip(*ends_kept, strict=True)
    # The gaps: the children between two matched pairs, on each side.
    old_at = {c: i for i, c in enumerate(olds)}
    new_at = {c: j for j, c in enumerate(news)}
    gaps: list[tuple[list[str], list[str]]] = []
    i = j = 0
    ends: list[tuple[str | None, str | None]] = [*matched, (None, None)]
    for before, after in ends:
        i_end = len(olds) if before is None else old_at[before]
        j_end = len(news) if after is None else new_at[after]
        gaps.append((list(olds[i:i_end]), list(news[j:j_end])))
        if before is not None and after is not None:
            yield before, after, True
            i, j = i_end + 1, j_end + 1
    for old_gap, new_gap in gaps:
        yield from _pair_gap(a, b, old_gap, new_gap)
    # What the gaps left (each gap's lists lose what _pair_gap paired).
    left_old = [c for gap, _ in gaps for c in gap]
    left_new = [c for _, gap in gaps for c in gap]
    # Leftovers of the same content anywhere among the children: moved (two swapped).
    by_key: dict[Hashable, list[str]] = {}
    for child in left_new:
        by_key.setdefault(b.keys[child], []).append(child)
    taken: set[str] = set()
    rest: list[str] = []
    for child in left_old:
        queue = by_key.get(a.keys[child])
        if queue:
            partner = queue.pop(0)
            taken.add(partner)
            yield child, partner, True
        else:
            rest.append(child)
    # Leftovers of the same name anywhere among the children: the same attribute.
    free_new = {_name(c): c for c in left_new if not _name(c).isdigit() and c not in taken}
    for child in rest:
        partner = free_new.get(_name(child))
        if partner is not None and partner not in taken:
            taken.add(partner)
            yield child, partner, False


def _agree(old_type: str, new_type: str) -> bool:
    """Two modules' types agree: equal, or one side does not name it (a module inside
    a box, whose members name their module but not its type)."""
    return old_type == new_type or not old_type or not new_type


def _pair_gap(
    a: _Side, b: _Side, old_gap: list[str], new_gap: list[str]
) -> Iterator[tuple[str, str, bool]]:
    """Pair the children of one gap between two matched runs, removing them from the
    gap's lists: same name and content first; then, as many on each side, in order
    when their types agree (a block that changed inside, or several); else the
    numbered ones of one type, the k-th with the k-th."""
    by_name = {_name(c): c for c in new_gap}
    for child in list(old_gap):
        partner = by_name.get(_name(child))
        if partner is not None and partner in new_gap and a.keys[child] == b.keys[partner]:
            old_gap.remove(child)
            new_gap.remove(partner)
            yield child, partner, True
    if len(old_gap) == len(new_gap) and all(
        _agree(a.types.get(x, ""), b.types.get(y, ""))
        for x, y in zip(old_gap, new_gap, strict=True)
    ):
        pairs = list(zip(old_gap, new_gap, strict=True))
        old_gap.clear()
        new_gap.clear()
        for x, y in pairs:
            yield x, y, a.keys[x] == b.keys[y]
        return
    queues: dict[str, list[str]] = {}
    for child in new_gap:
        if _name(child).isdigit():
            queues.setdefault(b.types.get(child, ""), []).append(child)
    for child in list(old_gap):
        if not _name(child).isdigit():
            continue
        queue = queues.get(a.types.get(child, ""))
        if queue:
            partner = queue.pop(0)
            old_gap.remove(child)
            new_gap.remove(partner)
            yield child, partner, False
