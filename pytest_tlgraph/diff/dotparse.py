"""Read a stored canonical ``.gv`` back into the :class:`~pytest_tlgraph.draw.dot.DotGraph`
that ``dot.emit`` wrote it from: nodes with their attributes and clusters, edges,
nested clusters with their attributes, rank groups and the extra nodes (the key).

``emit(parse_gv(text)) == text`` for every drawing the plugin writes, so a stored
snapshot carries everything the structural diff needs. Only the canonical form is read:
one statement a line, every identifier quoted, labels HTML-like; anything else raises
:class:`DotParseError` naming the line. This is the one DOT reader of the comparison:
both sides of a failure, ``tlgraph diff`` and the pixel report's provenance checks read
drawings through it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Final

from pytest_tlgraph.draw.dot import DotGraph, NodeStatement
from pytest_tlgraph.draw.plan import Cluster
from pytest_tlgraph.errors import UsageError

__all__ = [
    "MAX_NESTING",
    "DotParseError",
    "ParsedGraph",
    "label_rows",
    "parse_attrs",
    "parse_gv",
    "strip_tags",
]


class DotParseError(UsageError):
    """The text is not canonical tlgraph DOT; the message names the line (a
    ``TlgraphError``, and a ``ValueError`` as before)."""


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


_ESCAPE: Final = re.compile(r"\\.")


def label_rows(body: str) -> tuple[str, ...]:
    """Plain-text rows of an HTML label body: ``<BR/>`` lines, or table rows (the key)."""
    if body.startswith("<TABLE"):
        return tuple(_table_row(row) for row in _elements(body, "TR"))
    if not body:
        return ()
    return tuple(html.unescape(strip_tags(part)) for part in body.split("<BR/>"))


def _table_row(row: str) -> str:
    """One key line: cell texts joined by spaces, a run of empty cells read ``[bar]``."""
    words: list[str] = []
    for cell in _elements(row, "TD"):
        text = html.unescape(strip_tags(cell))
        if text:
            words.append(text)
        elif not words or words[-1] != "[bar]":
            words.append("[bar]")
    return " ".join(words)


def _elements(text: str, tag: str) -> list[str]:
    """The content of each ``<TAG ...>content</TAG>`` of ``text``, left to right.

    What ``re.findall(r"<TAG[^>]*>(.*?)</TAG>", text, re.DOTALL)`` finds, in one pass:
    each search starts where the last ended, and an element left open ends the scan
    (no element can close after it), where the pattern would search the rest of the
    text again from each later opening, quadratic in the open ones.
    """
    opening, closing = f"<{tag}", f"</{tag}>"
    out: list[str] = []
    pos = 0
    while (start := text.find(opening, pos)) >= 0:
        content = text.find(">", start + len(opening)) + 1  # 0: the tag never closes
        end = text.find(closing, content) if content > 0 else -1
        if end < 0:
            break
        out.append(text[content:end])
        pos = end + len(closing)
    return out


def strip_tags(text: str) -> str:
    """``text`` without its tags: what ``re.sub(r"<[^>]*>", "", text)`` leaves, in one
    pass (a ``<`` that no ``>`` follows ends the scan instead of a search per ``<``)."""
    if "<" not in text:
        return text
    parts: list[str] = []
    pos = 0
    while (start := text.find("<", pos)) >= 0:
        end = text.find(">", start + 1)
        if end < 0:
            break
        parts.append(text[pos:start])
        pos = end + 1
    parts.append(text[pos:])
    return "".join(parts)


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


_QUOTED: Final = r'"(?:[^"\\]|\\.)*"'
_NODE: Final = re.compile(rf"\s*({_QUOTED}) (\[.*\]);", re.DOTALL)
_EDGE: Final = re.compile(rf"\s*({_QUOTED}) -> ({_QUOTED})(?: (\[.*\]))?;", re.DOTALL)
_MEMBER: Final = re.compile(rf"\s*({_QUOTED});", re.DOTALL)
_CLUSTER: Final = re.compile(rf"\s*subgraph ({_QUOTED}) \{{", re.DOTALL)
_DEFAULTS: Final = re.compile(r"\s*(graph|node|edge) (\[.*\]);", re.DOTALL)
_RANK: Final = re.compile(rf"\s*\{{ rank=same; ((?:{_QUOTED}; )*)\}}", re.DOTALL)
_PIN: Final = re.compile(rf"\s*\{{ rank=(min|max); ({_QUOTED}); \}}", re.DOTALL)
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_BARE: Final = re.compile(r"[^,\]\s]+")
_BRACKET: Final = re.compile(r"[<>]")
_QUOTED_AT: Final = re.compile(_QUOTED, re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParsedGraph:
    """A stored drawing read back: the emitter's input, and each cluster's title."""

    graph: DotGraph
    titles: dict[str, str]


def unquote(quoted: str) -> str:
    """The identifier inside a DOT quoted string: the inverse of ``dot.quote``, which
    doubles backslashes, escapes quotes and writes each control character as its
    visible escape (``\\x1f``, ``\\ud800``), so every identifier reads back as it was
    drawn and two different ones stay different."""
    if "\\" not in quoted:
        return quoted[1:-1]
    return _ESCAPES.sub(_unescape, quoted[1:-1])


_ESCAPES: Final = re.compile(r'\\(?:([\\"])|x([0-9a-f]{2})|u([0-9a-f]{4}))')


def _unescape(match: re.Match[str]) -> str:
    if match[1] is not None:
        return match[1]
    return chr(int(match[2] or match[3], 16))


def parse_attrs(text: str) -> dict[str, object]:
    """``[a="1", label=<...>, b=true]`` -> ``{"a": "1", "label": "<...>", "b": True}``.

    Values come back in the form ``attr_list`` writes them from: quoted strings as
    ``str``, HTML-like labels as ``str`` starting with ``<``, bare ``true``/``false``
    as ``bool``.
    """
    if not (text.startswith("[") and text.endswith("]")):
        raise DotParseError(f"not an attribute list: {text[:80]!r}")
    out: dict[str, object] = {}
    i, end = 1, len(text) - 1
    while i < end:
        name = _NAME.match(text, i)
        if name is None:
            raise DotParseError(f"attribute name expected at {text[i : i + 40]!r}")
        key, i = name[0][:-1], name.end()
        if text.startswith('"', i):
            match = _QUOTED_AT.match(text, i)
            if match is None:
                raise DotParseError(f"unterminated string in attribute {key}")
            out[key], i = unquote(match[0]), match.end()
        elif text.startswith("<", i):
            j = _html_end(text, i, end)
            if j < 0:
                raise DotParseError(f"unterminated HTML label in attribute {key}")
            out[key], i = text[i:j], j
        else:
            bare = _BARE.match(text, i)
            if bare is None or bare[0] not in ("true", "false"):
                raise DotParseError(f"unexpected value for attribute {key}")
            out[key], i = bare[0] == "true", bare.end()
        if text.startswith(", ", i):
            i += 2
        elif i != end:
            raise DotParseError(f"',' expected after attribute {key}")
    return out


def _html_end(text: str, start: int, end: int) -> int:
    """The index just past the ``>`` that closes the HTML-like label opened at
    ``start``, or -1 when it is not closed before ``end``. One scan of the brackets."""
    depth = 0
    for bracket in _BRACKET.finditer(text, start, end):
        depth += 1 if bracket[0] == "<" else -1
        if depth == 0:
            return bracket.end()
    return -1


def parse_gv(text: str) -> ParsedGraph:
    """Read canonical tlgraph DOT into the ``DotGraph`` it was emitted from."""
    lines = _statements(text)
    if not lines or lines[0][1] != "digraph tlgraph {":
        raise DotParseError("line 1: not a tlgraph drawing (expected 'digraph tlgraph {')")
    reader = _Reader()
    for number, line in lines[1:]:
        try:
            reader.statement(line)
        except DotParseError as error:
            raise DotParseError(f"line {number}: {error}") from None
    if not reader.closed or reader.stack:
        raise DotParseError(f"line {lines[-1][0]}: the graph is not closed (missing '}}')")
    return reader.parsed()


@dataclass
class _Reader:
    """What :func:`parse_gv` has read so far, one statement a line."""

    defaults: dict[str, dict[str, object]] = field(default_factory=dict)
    nodes: list[tuple[str, dict[str, object]]] = field(default_factory=list)
    extra: list[NodeStatement] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    edge_attrs: dict[tuple[str, str], dict[str, object]] = field(default_factory=dict)
    clusters: list[Cluster] = field(default_factory=list)
    cluster_attrs: dict[str, dict[str, object]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    member_of: dict[str, str] = field(default_factory=dict)
    ranks: list[tuple[str, ...]] = field(default_factory=list)
    order: list[tuple[str, str]] = field(default_factory=list)
    pins: list[tuple[str, str]] = field(default_factory=list)
    #: The clusters open around the current line, outermost first.
    stack: list[str] = field(default_factory=list)
    #: A cluster whose ``graph [...]`` line comes next.
    pending: str | None = None
    #: Past the nodes: a node statement now is an extra node.
    tail: bool = False
    closed: bool = False

    def statement(self, line: str) -> None:
        """Read one statement line (without its line number)."""
        if self.closed:
            raise DotParseError("text after the end of the graph")
        if self.pending is not None:
            self._cluster_attrs(self.pending, line)
        elif match := _DEFAULTS.fullmatch(line):
            if self.stack or match[1] in self.defaults:
                raise DotParseError(f"unexpected {match[1]} defaults: {line[:80]!r}")
            self.defaults[match[1]] = parse_attrs(match[2])
        elif match := _CLUSTER.fullmatch(line):
            self._open(unquote(match[1]))
        elif line.strip() == "}":
            if self.stack:
                self.stack.pop()
            else:
                self.closed = True
        elif match := _EDGE.fullmatch(line):
            self._edge(match)
        elif match := _NODE.fullmatch(line):
            node_id, attrs = unquote(match[1]), parse_attrs(match[2])
            if self.tail:
                self.extra.append(NodeStatement(node_id, None, attrs))
            else:
                self.nodes.append((node_id, attrs))
        elif match := _MEMBER.fullmatch(line):
            if not self.stack:
                raise DotParseError(f"a bare node outside any cluster: {line[:80]!r}")
            self.member_of[unquote(match[1])] = self.stack[-1]
        elif match := _RANK.fullmatch(line):
            self.tail = True
            self.ranks.append(tuple(unquote(q) for q in re.findall(_QUOTED, match[1])))
        elif match := _PIN.fullmatch(line):
            self.pins.append((match[1], unquote(match[2])))
        else:
            raise DotParseError(f"not canonical tlgraph DOT: {line[:80]!r}")

    def _cluster_attrs(self, cid: str, line: str) -> None:
        match = _DEFAULTS.fullmatch(line)
        if match is None or match[1] != "graph":
            raise DotParseError(f"cluster without attributes: {line[:80]!r}")
        attrs = parse_attrs(match[2])
        self.cluster_attrs[cid] = attrs
        self.titles[cid] = _title(attrs)
        self.pending = None

    def _open(self, cid: str) -> None:
        self.tail = True
        self.clusters.append(_cluster(cid, self.stack[-1] if self.stack else None))
        self.stack.append(cid)
        check_nesting(len(self.stack))
        self.pending = cid

    def _edge(self, match: re.Match[str]) -> None:
        self.tail = True
        edge = (unquote(match[1]), unquote(match[2]))
        attrs = parse_attrs(match[3]) if match[3] else {}
        if attrs == {"style": "invis"}:  # orders a rank, never data
            self.order.append(edge)
            return
        self.edges.append(edge)
        if attrs:
            self.edge_attrs[edge] = attrs

    def parsed(self) -> ParsedGraph:
        """The graph read, once the last ``}`` closed it."""
        missing = sorted({"graph", "node", "edge"} - set(self.defaults))
        if missing:
            raise DotParseError(f"no {', '.join(missing)} defaults: not a tlgraph drawing")
        graph = DotGraph(
            graph_attrs=self.defaults["graph"],
            node_defaults=self.defaults["node"],
            edge_defaults=self.defaults["edge"],
            nodes=[NodeStatement(n, self.member_of.get(n), a) for n, a in self.nodes],
            edges=self.edges,
            clusters=self.clusters,
            cluster_attrs=self.cluster_attrs,
            rank_groups=self.ranks,
            extra_nodes=self.extra,
            edge_attrs=self.edge_attrs,
            order_edges=self.order,
            rank_pins=self.pins,
        )
        return ParsedGraph(graph, self.titles)


def _cluster(cid: str, parent: str | None) -> Cluster:
    # Address and type are not stored apart from the title; the id is what links.
    return Cluster(id=cid, address=cid, type_name="", parent=parent)


def _title(attrs: dict[str, object]) -> str:
    label = str(attrs.get("label", ""))
    body = label[1:-1] if label.startswith("<") else label
    return html.unescape(strip_tags(body))
