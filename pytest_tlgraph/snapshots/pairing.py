"""Which node of a stored drawing is which node of a received one, when op numbers moved.

Op node ids number the ops of one function in execution order (``linear_3``): a layer
added or removed early renumbers every later op of its function, and pairing nodes by
id would then report the untouched ``fc3`` as changed and a new node in its place. The
structural diff drawing and the structural summary both pair nodes with
:func:`pair_nodes`, so the picture and the text of a failure tell the same story.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Pairing", "family", "pair_nodes"]

#: Node id -> label rows, title first.
Rows = Mapping[str, tuple[str, ...]]
#: Node id -> id of its innermost cluster (``None`` at the top level).
ClusterOf = Mapping[str, str | None]

_NUMBER: Final = re.compile(r"_\d+(?::\d+)?$")


def family(node_id: str) -> str:
    """The op's function without its number (``linear_13`` and ``linear_19`` are one
    family, ``relu_1`` and ``gelu_1`` are not)."""
    return _NUMBER.sub("", node_id)


@dataclass(frozen=True, slots=True)
class Pairing:
    """How the stored side's ids read on the received side.

    ``renamed``: old id -> new id of each old node that is a received node under another
    number. ``set_apart``: old id -> ``"<id> (old)"`` for each old node that pairs with
    no received node while a received node now has its id (it shows as removed).
    """

    renamed: Mapping[str, str] = field(default_factory=dict)
    set_apart: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.renamed or self.set_apart)

    def id(self, node_id: str) -> str:
        """``node_id`` of the stored side as the received side reads it."""
        return self.renamed.get(node_id) or self.set_apart.get(node_id) or node_id

    def rows(self, rows: Rows) -> dict[str, tuple[str, ...]]:
        """The stored side's rows under their received ids; a title that is the node's
        id follows the rename (a node set apart keeps its old title)."""
        out: dict[str, tuple[str, ...]] = {}
        for node_id, texts in rows.items():
            new_id = self.id(node_id)
            if texts and texts[0] == node_id and node_id in self.renamed:
                texts = (new_id, *texts[1:])
            out[new_id] = texts
        return out

    def edges(self, edges: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """The stored side's edges under received ids, each once, in order."""
        return list(dict.fromkeys((self.id(a), self.id(b)) for a, b in edges))


def _module_key(
    rows: Rows, cluster_of: ClusterOf, node_id: str
) -> tuple[str, str | None, str] | None:
    """What makes an op node the same node across versions when its number moved: its
    function, its cluster and its ``@module`` row (``None`` for a node with none)."""
    modules = [row for row in rows[node_id][1:] if row.startswith("@")]
    if not modules:
        return None
    return family(node_id), cluster_of.get(node_id), modules[-1]


def pair_nodes(old: Rows, old_clusters: ClusterOf, new: Rows, new_clusters: ClusterOf) -> Pairing:
    """Pair the stored side's nodes (``old``) with the received side's (``new``):

    * an op of the same function in the same module (``relu_2`` at ``@act2`` is now
      ``relu_1`` at ``@act2``, because the ``relu`` at ``@act1`` became a ``gelu``), the
      same id first, then in drawing order;
    * else a node that only its number tells apart from a new node (``linear_13`` is
      now ``linear_19``, every other row the same).
    """
    # Linear in the nodes: queues popped from the front, membership by set, so a
    # function called thousands of times in one module costs no search of a list.
    rename: dict[str, str] = {}
    new_keys = {node_id: _module_key(new, new_clusters, node_id) for node_id in new}
    by_module: dict[tuple[str, str | None, str], deque[str]] = {}
    for node_id, key in new_keys.items():
        if key is not None:
            by_module.setdefault(key, deque()).append(node_id)
    old_keys = {node_id: _module_key(old, old_clusters, node_id) for node_id in old}
    for node_id, key in old_keys.items():
        if key is not None and new_keys.get(node_id) == key:
            rename[node_id] = node_id
    free = set(new_keys) - set(rename)  # new ids no old node has claimed yet
    for node_id, key in old_keys.items():
        if node_id in rename or key is None:
            continue
        queue = by_module.get(key)
        while queue and queue[0] not in free:
            queue.popleft()
        if queue:
            rename[node_id] = claimed = queue.popleft()
            free.discard(claimed)
    taken = set(rename.values())
    spare: dict[tuple[str, ...], deque[str]] = {}
    for node_id, rows in new.items():
        if node_id not in old and node_id not in taken and len(rows) > 1:
            spare.setdefault((family(node_id), *rows[1:]), deque()).append(node_id)
    for node_id, rows in old.items():
        same_rows = (family(node_id), *rows[1:])
        if node_id not in rename and node_id not in new and spare.get(same_rows):
            rename[node_id] = spare[same_rows].popleft()
    taken = set(rename.values())
    return Pairing(
        renamed={k: v for k, v in rename.items() if k != v},
        set_apart={k: f"{k} (old)" for k in old if k not in rename and k in taken},
    )
