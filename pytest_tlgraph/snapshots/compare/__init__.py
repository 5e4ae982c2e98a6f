"""The structural comparison of two drawings: one graph model per side, one pairing, one
comparison value every view reads."""

from __future__ import annotations

__all__: list[str] = []
