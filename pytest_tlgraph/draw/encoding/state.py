"""The encoding state: every detail the drawing leaves out
(docs/decisions.md, "One house (0.4)")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, final

__all__ = ["ChannelState", "EncodingState"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@final
@dataclass(frozen=True, slots=True)
class ChannelState:
    """One active channel: its source, values, domain and what it drew.

    ``values`` maps node id -> raw float for every eligible node that has a value;
    ``value_text`` the same nodes to the value as the key formats it (empty when the
    channel was masked for a snapshot). Exactly one of ``fills`` (colour), ``sizes``
    (``(width_in, height_in)`` minimums) and ``groups`` (annotation -> node ids) is
    filled, by channel.
    """

    source: str
    values: Mapping[str, float]
    domain: tuple[float, float] | None
    transform: str
    eligible: int
    encoded: int
    domain_text: tuple[str, str] | None = None
    fills: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    sizes: Mapping[str, tuple[float, float]] = field(default_factory=lambda: _EMPTY)
    groups: Mapping[Any, tuple[str, ...]] = field(default_factory=lambda: _EMPTY)
    value_text: Mapping[str, str] = field(default_factory=lambda: _EMPTY)

    def _node_lines(self) -> list[str]:
        lines = []
        for node_id, text in self.value_text.items():
            if node_id in self.fills:
                lines.append(f"    {node_id}: {text} -> {self.fills[node_id]}")
            elif node_id in self.sizes:
                width, height = self.sizes[node_id]
                lines.append(f"    {node_id}: {text} -> {width:.3f} x {height:.3f} in")
            else:
                lines.append(f"    {node_id}: {text} (unencoded)")
        return lines


@final
@dataclass(frozen=True, slots=True)
class EncodingState:
    """``channels`` (channel name -> ``ChannelState``), ``notes`` and ``aggregation``."""

    channels: Mapping[str, ChannelState]
    notes: tuple[str, ...]
    aggregation: tuple[str, ...]

    def describe(self) -> str:
        """All of the state as stable, human-readable text (used in failure reports).

        A pure function of the state: the same state always reads the same. Values are
        written as the key formats them; a channel masked for a snapshot lists none.
        """
        lines: list[str] = []
        for name, channel in self.channels.items():
            lines.append(f"{name}: {channel.source}")
            lines.append(f"  transform: {channel.transform}")
            if channel.domain_text is not None:
                lo, hi = channel.domain_text
                lines.append(f"  domain: {lo} .. {hi}")
            else:
                lines.append("  domain: none")
            lines.append(f"  encoded: {channel.encoded} of {channel.eligible} eligible nodes")
            if channel.groups:
                lines.append("  groups:")
                lines.extend(
                    f"    {value}: {', '.join(ids)}" for value, ids in channel.groups.items()
                )
            node_lines = channel._node_lines()
            if node_lines:
                lines.append("  nodes:")
                lines.extend(node_lines)
        if self.aggregation:
            lines.append("aggregation:")
            lines.extend(f"  {line}" for line in self.aggregation)
        if self.notes:
            lines.append("notes:")
            lines.extend(f"  {note}" for note in self.notes)
        return "\n".join(lines)
