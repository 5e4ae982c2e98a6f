"""A drawn graph as plain data, parsed from canonical DOT.

The snapshot side of a failure exists only as the ``.gv`` text, so it is read back with
:func:`parse_dot`; the received side is read from its drawing's DOT by the same parser,
so both sides are read alike. The parser knows only the canonical form ``dot.emit``
writes: one statement a line, every identifier quoted, every label HTML-like.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

__all__ = [
    "MAX_NESTING",
    "DotParseError",
    "GraphData",
    "html_label_body",
    "label_rows",
    "parse_dot",
]


@dataclass(frozen=True, slots=True)
class GraphData:
    """A drawn graph as plain data: label rows per node id, edges, cluster titles, each
    node's innermost cluster (its id, ``None`` at the top level), and the content
    signature (``comment``) of each box, fold and segment, and of each repeat-fold
    cluster (cluster id -> its title and signature)."""

    nodes: Mapping[str, tuple[str, ...]]
    edges: tuple[tuple[str, str], ...]
    clusters: tuple[str, ...]
    cluster_of: Mapping[str, str | None]
    signatures: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cluster_signatures: Mapping[str, tuple[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )


class DotParseError(ValueError):
    """The text is not canonical tlgraph DOT; the message names the line."""


#: Deepest cluster nesting a stored drawing may have. The plugin draws one cluster per
#: module call, and torch walks modules recursively, so no model it can capture nests
#: near this; the bound keeps a hostile file's canonical re-indentation (two spaces a
#: level, so quadratic in the depth) and the renderer's work small.
MAX_NESTING: Final = 2_000


def check_nesting(depth: int) -> None:
    """Raise :class:`DotParseError` when clusters open ``depth`` deep (over the bound)."""
    if depth > MAX_NESTING:
        raise DotParseError(
            f"clusters nested deeper than {MAX_NESTING:,}: not a drawing pytest-tlgraph writes"
        )


_NODE: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*") \[(.*)\];', re.DOTALL)
_EDGE: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*") -> ("(?:[^"\\]|\\.)*");', re.DOTALL)
_MEMBER: Final = re.compile(r'\s*("(?:[^"\\]|\\.)*");', re.DOTALL)
_CLUSTER: Final = re.compile(r'\s*subgraph ("(?:[^"\\]|\\.)*") \{', re.DOTALL)
_TAG: Final = re.compile(r"<[^>]*>")
_ESCAPE: Final = re.compile(r"\\.")
_ROW_TAG: Final = re.compile(r"<TR[^>]*>(.*?)</TR>", re.DOTALL)
_CELL: Final = re.compile(r"<TD[^>]*>(.*?)</TD>", re.DOTALL)
# Label text is escaped (&quot;), so the first `, comment="` is the attribute.
_COMMENT: Final = re.compile(r', comment=("(?:[^"\\]|\\.)*")', re.DOTALL)


def _unquote(quoted: str) -> str:
    # Only the two escapes quote() writes: a control character's escape stays visible.
    return re.sub(r'\\([\\"])', r"\1", quoted[1:-1])


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


def _statements(text: str) -> list[tuple[int, str]]:
    """``(line number, statement)``: physical lines, joined where a quoted identifier
    holds a line break (module names may).

    Linear in the text: each line's quote count is taken once, and the lines of one
    statement are joined once, so a stray ``"`` (every later line then joins the
    statement it opened) costs no more than a clean file.
    """
    out: list[tuple[int, str]] = []
    start = 0
    parts: list[str] = []  # the lines of an open statement (one with an odd quote count)
    # Only "\n" ends a line: splitlines() would also break on characters such as
    # U+2028 that the emitter leaves in labels.
    for number, line in enumerate(text.split("\n"), start=1):
        # Label text is escaped (&quot;), so every bare " delimits an identifier; an
        # escape never spans a line break, so the counts of the lines add up.
        odd = (line.count('"') - _escaped_quotes(line)) % 2 == 1
        if not parts:
            if odd:
                start, parts = number, [line]
            else:
                out.append((number, line))
        else:
            parts.append(line)
            if odd:
                out.append((start, "\n".join(parts)))
                parts = []
    if parts:
        out.append((start, "\n".join(parts)))
    while out and out[-1][1] == "":
        out.pop()
    return out


def _escaped_quotes(line: str) -> int:
    """How many ``"`` of ``line`` are escaped (``\\"``, read left to right as DOT does)."""
    if "\\" not in line:
        return 0
    return sum(1 for escape in _ESCAPE.findall(line) if escape == '\\"')


def parse_dot(text: str) -> GraphData:
    """Read canonical tlgraph DOT (as ``dot.emit`` writes it) back into plain data.

    Raises :class:`DotParseError` naming the first line that is not in that format.
    """
    statements = _statements(text)
    if not statements or statements[0][1] != "digraph tlgraph {":
        raise DotParseError("line 1: not a tlgraph drawing (expected 'digraph tlgraph {')")
    nodes: dict[str, tuple[str, ...]] = {}
    edges: list[tuple[str, str]] = []
    clusters: list[str] = []
    cluster_of: dict[str, str | None] = {}
    signatures: dict[str, str] = {}
    cluster_signatures: dict[str, tuple[str, str]] = {}
    open_clusters: list[str] = []
    expect_title = False
    for position, (number, line) in enumerate(statements[1:], start=2):
        try:
            stripped = line.strip()
            if expect_title:
                body = html_label_body(stripped) if stripped.startswith("graph [") else None
                if body is None:
                    raise DotParseError(f"cluster without a title: {line[:80]!r}")
                clusters.append(html.unescape(_TAG.sub("", body)))
                if comment := _COMMENT.search(stripped):
                    cluster_signatures[open_clusters[-1]] = (clusters[-1], _unquote(comment[1]))
                expect_title = False
            elif stripped.startswith(("graph [", "node [", "edge [", "{ rank=same;")):
                continue
            elif cluster := _CLUSTER.fullmatch(line):
                open_clusters.append(_unquote(cluster[1]))
                check_nesting(len(open_clusters))
                expect_title = True
            elif stripped == "}":
                if not open_clusters:
                    if position < len(statements):
                        number = statements[position][0]
                        raise DotParseError("text after the end of the graph")
                    return GraphData(
                        MappingProxyType(nodes),
                        tuple(edges),
                        tuple(clusters),
                        MappingProxyType({n: cluster_of.get(n) for n in nodes}),
                        MappingProxyType(signatures),
                        MappingProxyType(cluster_signatures),
                    )
                open_clusters.pop()
            elif match := _EDGE.fullmatch(line):
                edges.append((_unquote(match[1]), _unquote(match[2])))
            elif match := _NODE.fullmatch(line):
                body = html_label_body(match[2])
                node_id = _unquote(match[1])
                nodes[node_id] = () if body is None else label_rows(body)
                if comment := _COMMENT.search(match[2]):
                    signatures[node_id] = _unquote(comment[1])
            elif member := _MEMBER.fullmatch(line):
                if open_clusters:
                    cluster_of[_unquote(member[1])] = open_clusters[-1]
            else:
                raise DotParseError(f"not canonical tlgraph DOT: {line[:80]!r}")
        except DotParseError as error:
            raise DotParseError(f"line {number}: {error}") from None
    raise DotParseError(f"line {statements[-1][0]}: the graph is not closed (missing '}}')")
