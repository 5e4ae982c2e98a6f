"""What changed in one node's label rows, said the way a reviewer reads it.

A node's rows after its title are of a few kinds (:func:`row_kind`: shape, args,
params, saved-for-backward, shape summary, the ``@module`` row); two versions of one
node are compared kind by kind, and each difference is one :class:`RowEdit` whose
``what`` names the edit alone (``kernel_size (3, 3) -> (5, 5)``,
``shape 1x16x8x8 -> 1x32x8x8``), without the node: the same edit on many nodes has the
same text, so the story groups them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pytest_tlgraph.diff.args import split_args
from pytest_tlgraph.draw.callrows import GRAD_MODES

__all__ = [
    "RowEdit",
    "args_edits",
    "multiset_minus",
    "row_edits",
    "row_kind",
    "split_args",
]

_ARG: Final = re.compile(r"[A-Za-z_]\w*=")
_SHAPE: Final = re.compile(r"(?:\d+(?:x\d+)*|scalar|\?)(?:, .+)?")
_SHAPE_SUMMARY: Final = re.compile(r"[\dx]+(?:->|-)[\dx]+")
_SIZE: Final = re.compile(r", [\d.,]+ (?:B|KB|MB|GB|TB)$")
_ROW_NAMES: Final = MappingProxyType(
    {
        "params": "params",
        "saved": "saved for backward",
        "shape": "shape",
        "summary": "shape summary",
        "row": "row",
        "operand": "operand",
        "grad": "grad mode",
    }
)
_PREFIXES: Final = ("params: ", "saved for backward: ")


@dataclass(frozen=True, slots=True)
class RowEdit:
    """One difference between two versions of a node's rows: its row kind and what it
    is, the node left out (``kernel_size (3, 3) -> (5, 5)``)."""

    kind: str
    what: str
    #: The argument an args row or call edit is about (``eps``), else ``None``.
    arg: str | None = None
    #: True for an args row edit that only says an argument is now shown or no longer
    #: shown (``now shows bias=True``), not both of its values.
    shown_only: bool = False
    #: For an ``old -> new`` edit, what changed (``params weight``) and both values
    #: (``8x8x3x3``, ``8x8x5x5``): the story groups alike edits from these, never by
    #: reading :attr:`what` back.
    subject: str = ""
    old: str = ""
    new: str = ""

    def __str__(self) -> str:
        return self.what


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
    if text in GRAD_MODES or ("/" in text and set(text.split("/")) <= {*GRAD_MODES, "grad"}):
        return "grad"
    if text.startswith("· ") or text.endswith(" ·"):
        return "operand"
    if _ARG.match(text):
        return "args"
    if _SHAPE.fullmatch(text):
        return "shape"
    if _SHAPE_SUMMARY.fullmatch(text):
        return "summary"
    return "row"


def multiset_minus(left: Iterable[str], right: Iterable[str]) -> tuple[str, ...]:
    """Items of ``left`` not matched in ``right``, counting repeats, in ``left`` order."""
    spare = Counter(right)
    out = []
    for item in left:
        if spare[item]:
            spare[item] -= 1
        else:
            out.append(item)
    return tuple(out)


def _grouped(rows: Sequence[str]) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for i, text in enumerate(rows, start=1):
        groups.setdefault(row_kind(i, text), []).append(text)
    return groups


def row_edits(
    old: Sequence[str],
    new: Sequence[str],
    old_defaults: str | None = None,
    new_defaults: str | None = None,
) -> list[RowEdit]:
    """The edits that turn one node's rows after the title (``old``) into ``new``; the
    ``@module`` row is left out (a moved node is the comparison's to name).
    ``old_defaults``, ``new_defaults``: the args each side's args row leaves out at
    their default (``tl_defaults``), so an arg that left or reached its default reads
    with both values (``eps 1e-05 (default) -> 1e-06``)."""
    before, after = _grouped(old), _grouped(new)
    out: list[RowEdit] = []
    for kind in dict.fromkeys([*after, *before]):
        was, now = before.get(kind, []), after.get(kind, [])
        if was == now or kind == "module":
            continue
        if kind == "args":
            out.extend(args_edits(", ".join(was), ", ".join(now), old_defaults, new_defaults))
        else:
            out.extend(_plain_edits(kind, was, now))
    return out


def args_edits(
    was: str, now: str, old_defaults: str | None = None, new_defaults: str | None = None
) -> list[RowEdit]:
    """The edits that turn one args row (``was``) into another: ``stride 1 -> 2``,
    ``eps 1e-05 (default) -> 1e-06`` (``*_defaults``: the args each side leaves out
    at their default), ``now shows bias=True``."""
    before, after = split_args(was), split_args(now)
    was_default = split_args(old_defaults) if old_defaults else {}
    now_default = split_args(new_defaults) if new_defaults else {}
    out = []
    for name, value in after.items():
        if name in before:
            if before[name] != value:
                what = f"{name} {before[name]} -> {value}"
                out.append(RowEdit("args", what, name, False, name, before[name], value))
        elif name in was_default and was_default[name] != value:
            old = f"{was_default[name]} (default)"
            out.append(RowEdit("args", f"{name} {old} -> {value}", name, False, name, old, value))
        else:
            out.append(RowEdit("args", f"now shows {name}={value}", name, shown_only=True))
    for name, value in before.items():
        if name in after:
            continue
        if name in now_default and now_default[name] != value:
            new = f"{now_default[name]} (default)"
            out.append(RowEdit("args", f"{name} {value} -> {new}", name, False, name, value, new))
        else:
            out.append(RowEdit("args", f"no longer shows {name}={value}", name, shown_only=True))
    return out


def _plain_edits(kind: str, was: list[str], now: list[str]) -> list[RowEdit]:
    name = _ROW_NAMES[kind]
    if kind == "grad":
        if not was:
            return [RowEdit(kind, f"now runs under {now[0]}")]
        if not now:
            return [RowEdit(kind, f"no longer runs under {was[0]}")]
    gone = tuple(_strip_prefix(t) for t in multiset_minus(was, now))
    added = tuple(_strip_prefix(t) for t in multiset_minus(now, was))
    if len(gone) == 1 and len(added) == 1:
        old, new = gone[0], added[0]
        if kind == "shape":
            old, new = _shape_only(old, new)
        shared = _shared_words(old, new)
        if shared:  # params weight 8x8x3x3 -> 8x8x5x5, not "-> weight 8x8x5x5"
            name, old, new = f"{name} {shared}", old[len(shared) + 1 :], new[len(shared) + 1 :]
        return [RowEdit(kind, f"{name} {old} -> {new}", subject=name, old=old, new=new)]
    out = [RowEdit(kind, f"now shows {name} {text}") for text in added]
    out.extend(RowEdit(kind, f"no longer shows {name} {text}") for text in gone)
    if not out:
        out.append(RowEdit(kind, "rows reordered" if kind == "row" else f"{name} rows reordered"))
    return out


def _shared_words(old: str, new: str) -> str:
    """The leading words two one-item row texts share, when both go on after them
    (``weight`` of ``weight 8x8x3x3``; none for a list like ``weight 8, bias 8``)."""
    if ", " in old or ", " in new:
        return ""
    a, b = old.split(" "), new.split(" ")
    n = 0
    while n < min(len(a), len(b)) - 1 and a[n] == b[n]:
        n += 1
    return " ".join(a[:n])


def _shape_only(old: str, new: str) -> tuple[str, str]:
    """A shape row's change without its byte size when the shape itself changed (the
    size follows the shape): ``1x16x8x8 -> 1x32x8x8``, not ``..., 4 KB -> ..., 8 KB``."""
    a, b = _SIZE.sub("", old), _SIZE.sub("", new)
    return (a, b) if a != b else (old, new)


def _strip_prefix(text: str) -> str:
    for prefix in _PREFIXES:
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text
