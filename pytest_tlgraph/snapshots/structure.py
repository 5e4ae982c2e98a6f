"""The structural summary of a snapshot failure: what changed in the drawn graph.

Both sides are reduced to the same plain data, :class:`GraphData` (node id -> label
rows, edges, cluster titles): the received side from ``Drawing.nodes`` / ``.edges`` /
``.clusters``, the snapshot side by parsing the stored canonical DOT with
:func:`parse_dot`. :func:`summarize` then compares the data, never label strings.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from pytest_tlgraph.encoding.key import KEY_ID

if TYPE_CHECKING:
    from pytest_tlgraph.drawing import Drawing

__all__ = [
    "DotParseError",
    "GraphData",
    "RowChange",
    "StructureSummary",
    "graph_from_drawing",
    "parse_dot",
    "summarize",
]

# DOT labels cannot hold a line break, so the emitter turns one into a space: applying
# the same mapping to the received rows keeps both sides comparable.
_LINE_BREAKS: Final = str.maketrans({"\n": " ", "\r": " "})
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
class GraphData:
    """A drawn graph as plain data: label rows per node id, edges, cluster titles."""

    nodes: Mapping[str, tuple[str, ...]]
    edges: tuple[tuple[str, str], ...]
    clusters: tuple[str, ...]


def graph_from_drawing(drawing: Drawing) -> GraphData:
    """The plain data of a received ``Drawing``."""
    nodes = {
        node_id: tuple(row.translate(_LINE_BREAKS) for row in node.rows)
        for node_id, node in drawing.nodes.items()
    }
    return GraphData(MappingProxyType(nodes), tuple(drawing.edges), tuple(drawing.clusters))


class DotParseError(ValueError):
    """The text is not canonical tlgraph DOT; the message names the line."""


_NODE: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*") \[(.*)\];')
_EDGE: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*") -> ("(?:[^"\\]|\\.)*");')
_MEMBER: Final = re.compile(r'\s*"(?:[^"\\]|\\.)*";')
_CLUSTER: Final = re.compile(r'\s*subgraph ("(?:[^"\\]|\\.)*") \{')
_TAG: Final = re.compile(r"<[^>]*>")
_ROW_TAG: Final = re.compile(r"<TR[^>]*>(.*?)</TR>", re.DOTALL)
_CELL: Final = re.compile(r"<TD[^>]*>(.*?)</TD>", re.DOTALL)


def _unquote(quoted: str) -> str:
    return re.sub(r"\\(.)", r"\1", quoted[1:-1])


def html_label_body(attrs: str) -> str | None:
    """The body of the ``label=<...>`` attribute in a DOT attribute list, or ``None``."""
    start = attrs.find("label=<")
    if start < 0:
        return None
    depth = 0
    # Label text is HTML-escaped, so every < and > in it belongs to a tag.
    for i in range(start + len("label="), len(attrs)):
        if attrs[i] == "<":
            depth += 1
        elif attrs[i] == ">":
            depth -= 1
            if depth == 0:
                return attrs[start + len("label=<") : i]
    raise DotParseError(f"unterminated HTML label in [{attrs[:80]}...]")


def label_rows(body: str) -> tuple[str, ...]:
    """Plain-text rows of an HTML label body: ``<BR/>`` lines, or table rows (the key)."""
    if body.startswith("<TABLE"):
        return tuple(_table_row(row) for row in _ROW_TAG.findall(body))
    if not body:
        return ()
    return tuple(html.unescape(_TAG.sub("", part)) for part in body.split("<BR/>"))


def _table_row(row: str) -> str:
    """One key line: cell texts joined by spaces, a run of empty cells read ``[bar]``."""
    words: list[str] = []
    for cell in _CELL.findall(row):
        text = html.unescape(_TAG.sub("", cell))
        if text:
            words.append(text)
        elif not words or words[-1] != "[bar]":
            words.append("[bar]")
    return " ".join(words)


def parse_dot(text: str) -> GraphData:
    """Read canonical tlgraph DOT (as ``dot.emit`` writes it) back into plain data.

    Raises :class:`DotParseError` naming the first line that is not in that format.
    """
    lines = text.splitlines()
    if not lines or lines[0] != "digraph tlgraph {":
        raise DotParseError("line 1: not a tlgraph drawing (expected 'digraph tlgraph {')")
    nodes: dict[str, tuple[str, ...]] = {}
    edges: list[tuple[str, str]] = []
    clusters: list[str] = []
    open_clusters = 0
    expect_title = False
    for number, line in enumerate(lines[1:], start=2):
        stripped = line.strip()
        if expect_title:
            body = html_label_body(stripped) if stripped.startswith("graph [") else None
            if body is None:
                raise DotParseError(f"line {number}: cluster without a title: {line[:80]!r}")
            clusters.append(html.unescape(_TAG.sub("", body)))
            expect_title = False
        elif stripped.startswith(("graph [", "node [", "edge [", "{ rank=same;")):
            continue
        elif match := _CLUSTER.fullmatch(line):
            open_clusters += 1
            expect_title = True
        elif stripped == "}":
            if open_clusters == 0:
                if number != len(lines):
                    raise DotParseError(f"line {number}: text after the end of the graph")
                return GraphData(MappingProxyType(nodes), tuple(edges), tuple(clusters))
            open_clusters -= 1
        elif match := _EDGE.fullmatch(line):
            edges.append((_unquote(match[1]), _unquote(match[2])))
        elif match := _NODE.fullmatch(line):
            body = html_label_body(match[2])
            nodes[_unquote(match[1])] = () if body is None else label_rows(body)
        elif not _MEMBER.fullmatch(line):
            raise DotParseError(f"line {number}: not canonical tlgraph DOT: {line[:80]!r}")
    raise DotParseError(f"line {len(lines)}: the graph is not closed (missing '}}')")


@dataclass(frozen=True, slots=True)
class RowChange:
    """One label-row change, read as ``<who>: <what>`` (``fc1: args row now shows ...``)."""

    who: str
    what: str

    def __str__(self) -> str:
        return f"{self.who}: {self.what}"


@dataclass(frozen=True, slots=True)
class StructureSummary:
    """What differs between the snapshot's graph and the received one."""

    nodes_added: tuple[str, ...]
    nodes_removed: tuple[str, ...]
    edges_added: tuple[tuple[str, str], ...]
    edges_removed: tuple[tuple[str, str], ...]
    row_changes: tuple[RowChange, ...]
    clusters_added: tuple[str, ...]
    clusters_removed: tuple[str, ...]

    @property
    def unchanged(self) -> bool:
        """True when nodes, edges, label rows and clusters are all the same."""
        return not (
            self.nodes_added
            or self.nodes_removed
            or self.edges_added
            or self.edges_removed
            or self.row_changes
            or self.clusters_added
            or self.clusters_removed
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
    """Compare the snapshot's graph with the received one.

    The key node is left out: it draws the channels, not the model's structure (the
    report compares its lines with the encoding state instead).
    """
    old_nodes = {k: v for k, v in snapshot.nodes.items() if k != KEY_ID}
    new_nodes = {k: v for k, v in received.nodes.items() if k != KEY_ID}
    old_edges, new_edges = set(snapshot.edges), set(received.edges)
    changes: list[RowChange] = []
    for node_id, rows in new_nodes.items():
        old_rows = old_nodes.get(node_id)
        if old_rows is not None and old_rows != rows:
            changes.extend(_row_changes(node_id, old_rows, rows))
    return StructureSummary(
        nodes_added=tuple(n for n in new_nodes if n not in old_nodes),
        nodes_removed=tuple(n for n in old_nodes if n not in new_nodes),
        edges_added=tuple(e for e in received.edges if e not in old_edges),
        edges_removed=tuple(e for e in snapshot.edges if e not in new_edges),
        row_changes=tuple(dict.fromkeys(changes)),
        clusters_added=_multiset_minus(received.clusters, snapshot.clusters),
        clusters_removed=_multiset_minus(snapshot.clusters, received.clusters),
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
