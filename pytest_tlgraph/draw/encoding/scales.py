"""Scale transforms and min-max normalisation for the channels."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pytest_tlgraph.errors import EncodingRefusal

__all__ = ["normalise", "transform"]


def transform(values: Mapping[str, float], scale: str, *, source: str) -> dict[str, float]:
    """Apply ``scale`` to every value; ``sqrt`` of a negative value refuses."""
    if scale == "linear":
        return dict(values)
    if scale == "sqrt":
        for node_id, value in values.items():
            if value < 0:
                raise EncodingRefusal(
                    "encoding_value_invalid",
                    cause=f"size_scale='sqrt' cannot take the negative value {value} of "
                    f"{source!r} on node {node_id!r}.",
                    remedy="use size_scale='linear', or a source with non-negative values.",
                )
        return {node_id: math.sqrt(value) for node_id, value in values.items()}
    # The request refuses every other scale (DrawRequest.parse).
    raise AssertionError(f"unknown size scale {scale!r}")


def normalise(values: Mapping[str, float]) -> tuple[tuple[float, float] | None, dict[str, float]]:
    """Linear min-max over the values: ``(domain, node -> f in [0, 1])``.

    No values or a constant domain give no fractions (every node stays unencoded).
    """
    if not values:
        return None, {}
    lo, hi = min(values.values()), max(values.values())
    if lo == hi:
        return (lo, hi), {}
    span = hi - lo
    return (lo, hi), {node_id: (value - lo) / span for node_id, value in values.items()}
