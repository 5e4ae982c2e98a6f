"""Which node of the stored drawing is which node of the received one: pairing by
structure, never by id.

Op ids number the calls of one function in execution order (``conv2d_7``), so a block
added early renumbers every later op; and ops without a module of their own (residual
adds) carry no ``@module`` row at all. A node is therefore known by where it sits: its
full module address (its cluster's address and its ``@module`` row), what it computes
(function, or module type for a box), and its place in the dataflow. Pairs are found
in rounds, each only among the nodes no earlier round paired:

1. **same place, same content**: same address, function and kind, with the same rows
   after the title: the node of the same id first (among nodes alike in place and
   content the id is the one tiebreak), then the k-th such node on each side;
2. **same content, in order**: the remaining nodes of each side, in drawing order,
   aligned on their rows (without the ``@module`` row) as ``diff`` aligns lines, so a
   layer inserted before another of its type shifts that one's address, not its rows;
3. **same place, other content**: same address, function and kind, in order (a changed
   node: its rows differ);
4. **same place, other function**: same address and kind, in order, for a node that
   names a module of its own (a box, a fold, an op with a module row), or one whose
   neighbours are paired to the other's (a swap: ``relu`` became ``silu``, a ``ReLU``
   box a ``SiLU`` box): a *replacement*;
5. **same module, drawn otherwise**: a box on one side, its op on the other (same
   address, paired neighbours);
6. **same neighbours**: same function and kind whose paired inputs are the same.

What is left is added (received side) or removed (stored side).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.diff.alignment import Alignment, align_modules
from pytest_tlgraph.diff.graph import GraphModel, GraphNode

__all__ = ["Pairing", "pair_graphs"]


@dataclass(frozen=True, slots=True)
class Pairing:
    """Stored node id -> received node id of each node on both sides (``pairs``), and
    the pairs that are a replacement (another function in the same place)."""

    pairs: Mapping[str, str]
    replaced: frozenset[str]
    #: The modules paired before the nodes (:func:`.alignment.align_modules`).
    alignment: Alignment = field(
        default_factory=lambda: Alignment({"": ""}, frozenset(), frozenset())
    )
    _reverse: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Built once: a view that looks up one node's partner per node stays linear.
        reverse = MappingProxyType({new: old for old, new in self.pairs.items()})
        object.__setattr__(self, "_reverse", reverse)

    @property
    def reverse(self) -> Mapping[str, str]:
        """Received id -> stored id (built once, with the pairing)."""
        return self._reverse


def _content(node: GraphNode) -> tuple[Hashable, ...]:
    """What a node shows apart from its title and ``@module`` row."""
    return (node.kind, node.func, *(row for row in node.body if not row.startswith("@")))


#: Kinds a replacement pairs: the same kind of node computing another function.
_OWN: Final = frozenset({"op", "box", "fold"})


def _own_address(node: GraphNode) -> bool:
    """The node names a module of its own: a box or fold, or an op with a module row."""
    return node.kind in ("box", "fold") or (node.kind == "op" and node.module_row is not None)


def _anchored(node: GraphNode) -> bool:
    """A node known by its address alone: an input or output, or one naming a module
    of its own."""
    return node.kind in ("input", "output") or _own_address(node)


def _same_content(old: GraphNode, new: GraphNode) -> bool:
    return _content(old) == _content(new)


def _slot(node: GraphNode) -> tuple[str, str, str]:
    return (node.address, node.func, node.kind)


class _Rounds:
    """The state the rounds share: what is paired so far, both ways."""

    def __init__(self, old: GraphModel, new: GraphModel, alignment: Alignment) -> None:
        self.old, self.new, self.alignment = old, new, alignment
        self.pairs: dict[str, str] = {}
        self.taken: set[str] = set()
        self.replaced: set[str] = set()

    def free_old(self) -> list[str]:
        return [n for n in self.old.nodes if n not in self.pairs]

    def free_new(self) -> list[str]:
        return [n for n in self.new.nodes if n not in self.taken]

    def add(self, old_id: str, new_id: str, *, replaced: bool = False) -> None:
        self.pairs[old_id] = new_id
        self.taken.add(new_id)
        if replaced:
            self.replaced.add(old_id)

    def by_key(
        self,
        key: Callable[[GraphNode], Hashable | None],
        accept: Callable[[GraphNode, GraphNode], bool] = lambda a, b: True,
        *,
        replaced: bool = False,
    ) -> None:
        """Pair free nodes with equal keys, the k-th of one side with the k-th of the
        other, when ``accept`` agrees (a refused pair leaves both free)."""
        queues: dict[Hashable, deque[str]] = {}
        for node_id in self.free_new():
            k = key(self.new.nodes[node_id])
            if k is not None:
                queues.setdefault(k, deque()).append(node_id)
        for node_id in self.free_old():
            node = self.old.nodes[node_id]
            k = key(node)
            queue = queues.get(k) if k is not None else None
            if queue and accept(node, self.new.nodes[queue[0]]):
                self.add(node_id, queue.popleft(), replaced=replaced)

    def same_id(self, accept: Callable[[GraphNode, GraphNode], bool]) -> None:
        """Pair each free node with the free node of the same id on the other side,
        when ``accept`` agrees (one lookup a node: no queues for a key one node has)."""
        for node_id in self.free_old():
            other = self.new.nodes.get(node_id)
            if (
                other is not None
                and node_id not in self.taken
                and accept(self.old.nodes[node_id], other)
            ):
                self.add(node_id, node_id)

    def aligned(self) -> None:
        """Round 2: the free nodes of both sides aligned on their content."""
        old_ids, new_ids = self.free_old(), self.free_new()
        a = [_content(self.old.nodes[n]) for n in old_ids]
        b = [_content(self.new.nodes[n]) for n in new_ids]
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for block in matcher.get_matching_blocks():
            for i in range(block.size):
                old_id, new_id = old_ids[block.a + i], new_ids[block.b + i]
                if self.may_pair(old_id, new_id):
                    self.add(old_id, new_id)

    def may_pair(self, old_id: str, new_id: str) -> bool:
        """Whether two nodes of other addresses may pair (:meth:`.Alignment.may_pair`)."""
        return self.alignment.may_pair(
            self.old.nodes[old_id].address, self.new.nodes[new_id].address
        )

    def by_flow(self, *, forward: bool) -> None:
        """Pair each free node with a free node of the same place and content whose
        inputs (``forward``) or outputs are the partners of its own, all of them
        paired: one pass in drawing order (the order the ops ran), or against it, so a
        chain of such nodes pairs link by link."""

        def links(graph: GraphModel, node_id: str) -> list[str]:
            return graph.preds(node_id) if forward else graph.succs(node_id)

        index: dict[Hashable, deque[str]] = {}
        for node_id in self.free_new():
            node = self.new.nodes[node_id]
            around = links(self.new, node_id)
            if around:
                key = (_slot(node), _content(node), frozenset(around))
                index.setdefault(key, deque()).append(node_id)
        order = self.free_old() if forward else list(reversed(self.free_old()))
        for node_id in order:
            around = links(self.old, node_id)
            if not around or any(p not in self.pairs for p in around):
                continue
            node = self.old.nodes[node_id]
            key = (_slot(node), _content(node), frozenset(self.pairs[p] for p in around))
            queue = index.get(key)
            if not forward:  # walking backwards: the last of the alike is the partner
                while queue and queue[-1] in self.taken:
                    queue.pop()
                if queue:
                    self.add(node_id, queue.pop())
                continue
            while queue and queue[0] in self.taken:
                queue.popleft()
            if queue:
                self.add(node_id, queue.popleft())

    def neighbours_paired(self, old: GraphNode, new: GraphNode) -> bool:
        """Some input or output of ``old`` is paired with one of ``new``'s."""
        new_preds, new_succs = set(self.new.preds(new.id)), set(self.new.succs(new.id))
        return any(self.pairs.get(p) in new_preds for p in self.old.preds(old.id)) or any(
            self.pairs.get(s) in new_succs for s in self.old.succs(old.id)
        )

    def inputs_key(self, graph: GraphModel, node: GraphNode, mapped: bool) -> Hashable | None:
        """A node's function, kind and paired inputs (``None`` when it has no paired
        input: nothing to know it by)."""
        preds: Iterable[str] = graph.preds(node.id)
        if mapped:
            preds = (self.pairs[p] for p in preds if p in self.pairs)
        else:
            preds = (p for p in preds if p in self.taken)
        inputs = tuple(sorted(preds))
        return (node.func, node.kind, inputs) if inputs else None


def pair_graphs(old: GraphModel, new: GraphModel) -> Pairing:
    """Pair the stored side's nodes (``old``) with the received side's (``new``) in the
    rounds of the module docstring, each stored address first written as the received
    side writes the same module (:meth:`.alignment.Alignment.translate`)."""
    alignment = align_modules(old, new)
    translated = {
        node_id: dataclasses.replace(node, address=alignment.translate(node.address))
        for node_id, node in old.nodes.items()
    }
    old = dataclasses.replace(old, nodes=MappingProxyType(translated))
    rounds = _Rounds(old, new, alignment)
    # Nodes that name a module of their own first: their address is their identity.
    rounds.same_id(
        lambda a, b: _anchored(a) and _anchored(b) and _slot(a) == _slot(b) and _same_content(a, b)
    )
    rounds.by_key(lambda n: _slot(n) if _anchored(n) else None, _same_content)
    # Then the ops between them by the dataflow: the same content fed by the same
    # (paired) inputs, or feeding the same outputs: a residual ``add`` or a ``view`` is
    # known by what it reads, not by its number (independent branches that now run in
    # another order renumber their ops).
    rounds.by_flow(forward=True)
    rounds.by_flow(forward=False)
    # Among nodes alike in place and content, the same id is the better partner (a
    # node moved out from between two of its kind must not shift their pairs).
    rounds.same_id(lambda a, b: _slot(a) == _slot(b) and _same_content(a, b))
    rounds.by_key(_slot, _same_content)
    rounds.aligned()
    rounds.by_key(_slot)
    rounds.by_key(
        lambda n: (n.address, n.kind) if n.kind in _OWN else None,
        lambda a, b: (_own_address(a) and _own_address(b)) or rounds.neighbours_paired(a, b),
        replaced=True,
    )
    # A module drawn as a box on one side and as its op on the other.
    rounds.by_key(
        lambda n: n.address if _own_address(n) else None,
        lambda a, b: rounds.neighbours_paired(a, b),
    )
    # Round 6 keys each side's nodes by their inputs as the received side names them.
    queues: dict[Hashable, deque[str]] = {}
    for node_id in rounds.free_new():
        k = rounds.inputs_key(new, new.nodes[node_id], mapped=False)
        if k is not None:
            queues.setdefault(k, deque()).append(node_id)
    for node_id in rounds.free_old():
        k = rounds.inputs_key(old, old.nodes[node_id], mapped=True)
        queue = queues.get(k) if k is not None else None
        if queue and rounds.may_pair(node_id, queue[0]):
            rounds.add(node_id, queue.popleft())
    return Pairing(
        pairs=dict(rounds.pairs), replaced=frozenset(rounds.replaced), alignment=alignment
    )
