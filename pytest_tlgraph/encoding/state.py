"""The encoding state: every detail the drawing leaves out (ENCODING.md §3.6)."""

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
    """One active channel: its source, values, domain and what it drew."""

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


@final
@dataclass(frozen=True, slots=True)
class EncodingState:
    """``channels`` (channel name -> ``ChannelState``), ``notes`` and ``aggregation``."""

    channels: Mapping[str, ChannelState]
    notes: tuple[str, ...]
    aggregation: tuple[str, ...]

    def describe(self) -> str:
        """All of the state as stable, human-readable text (used in failure reports).

        Raw measured values are summarised by their formatted domain, never listed, so
        the text is as stable as the drawing it describes.
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
                groups = ", ".join(
                    f"{value}: {len(ids)} nodes" for value, ids in channel.groups.items()
                )
                lines.append(f"  groups: {groups}")
        if self.aggregation:
            lines.append("aggregation:")
            lines.extend(f"  {line}" for line in self.aggregation)
        if self.notes:
            lines.append("notes:")
            lines.extend(f"  {note}" for note in self.notes)
        return "\n".join(lines)
