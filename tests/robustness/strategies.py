"""Hypothesis strategies of the robustness suite: snapshot names, module names and
damaged copies of real snapshot files."""

from __future__ import annotations

from hypothesis import strategies as st

__all__ = ["corruptions", "module_names", "snapshot_names"]

#: Characters file systems or syrupy treat specially.
SEPARATORS = list('/\\:*?"<>|.[] \t\n\x00~')

_any_char = st.characters(codec=None) | st.sampled_from(["\ud800", "\udfff", "\u2028"])


def snapshot_names() -> st.SearchStrategy[str]:
    """Names a user could pass as ``name=``: unicode of every kind, separators, and
    lengths from one character to well past the file-name limit."""
    short = st.text(_any_char | st.sampled_from(SEPARATORS), min_size=1, max_size=12)
    long = st.builds(
        lambda stem, n, tail: stem * n + tail,
        st.text(_any_char, min_size=1, max_size=3),
        st.integers(60, 160),
        st.text(st.sampled_from("0123456789"), max_size=2),
    )
    return short | long


def module_names() -> st.SearchStrategy[str]:
    """Submodule names from every code point class (``add_module`` refuses only ``.``
    and the empty name)."""
    return st.text(_any_char, min_size=1, max_size=8).filter(lambda s: "." not in s)


def corruptions(size: int) -> st.SearchStrategy[tuple[str, int, int]]:
    """``(kind, position, bit)``: truncate at ``position``, or flip ``bit`` there."""
    position = st.integers(0, max(size - 1, 0))
    return st.tuples(st.sampled_from(["truncate", "flip"]), position, st.integers(0, 7))


def corrupt(data: bytes, kind: str, position: int, bit: int) -> bytes:
    """Apply one :func:`corruptions` draw to ``data``."""
    if kind == "truncate":
        return data[:position]
    flipped = bytearray(data)
    flipped[position] ^= 1 << bit
    return bytes(flipped)
