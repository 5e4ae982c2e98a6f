"""The pytest11 entry point: pytest glue only (options, ini, marker, fixture)."""

from __future__ import annotations
