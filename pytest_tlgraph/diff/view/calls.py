"""What changed in the arguments of a call, read from the ``tl_call`` and ``tl_inside``
attributes the drawing writes (:mod:`pytest_tlgraph.draw.callrows`).

An op node's ``tl_call`` holds its whole call (``tensors=[in1, in2], dim=1``); a box,
fold or segment's ``tl_inside`` the calls of the ops it hides that have a non-tensor
argument (``softmax: dim=-1; scaled_dot_product_attention: is_causal=True``). Each
difference reads the way a reviewer checks it: ``dim -1 -> -2``, ``eps (default) ->
1e-06`` (an argument at its declared default is not written), ``inside:
scaled_dot_product_attention is_causal True -> False``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytest_tlgraph.diff.view.rows import RowEdit, args_edits, split_args
from pytest_tlgraph.draw.labels import MEMBER_FIELDS

__all__ = [
    "HiddenEdit",
    "call_edits",
    "inside_edits",
    "member_edits",
    "ordered_inputs",
    "reorder_edit",
]

_TENSOR: Final = r"(?:in\d+(?:\[\d+\])?|param [^,()\[\]]+|const [\dx]+|const scalar)"
_OPERAND: Final = re.compile(rf"{_TENSOR}|\[(?:{_TENSOR}(?:, )?)+\]|\((?:{_TENSOR}(?:, )?)+,?\)")
_EDGES: Final = re.compile(r"in\d+|\[(?:in\d+(?:, )?)+\]|\((?:in\d+(?:, )?)+,?\)")
#: At most this many argument changes inside one collapsed node are named.
MAX_INSIDE_EDITS: Final = 4


@dataclass(frozen=True, slots=True)
class _ArgChange:
    """One argument of a call changed: its name and both values (``(default)`` for
    one not written)."""

    name: str
    old: str
    new: str

    @property
    def text(self) -> str:
        """``dim -1 -> -2``."""
        return f"{self.name} {self.old} -> {self.new}"


@dataclass(frozen=True, slots=True)
class HiddenEdit:
    """One change in the ops a collapsed node hides, as its line reads (``text``:
    ``conv2d kernel_size (3, 3) -> (5, 5) (2 ops)``), with what the comparison weighs
    it by, as values: it never reads the line back."""

    text: str
    #: The line as the node's own row edit would say it, its function left out
    #: (``kernel_size (3, 3) -> (5, 5) (2 ops)``): a row that says it already wins.
    said_as: str
    #: The argument it gives both values of (``kernel_size``), if it is one.
    arg: str | None = None
    #: ``(function, what of it)`` (``("conv2d", "kernel_size")``, ``("conv2d",
    #: "shape")``): a call's argument change on a topic the ops' own edits name is
    #: said once. ``None``: a count, or a grad-mode line.
    topic: tuple[str, str] | None = None


def _overflow(edits: list[HiddenEdit]) -> list[HiddenEdit]:
    """At most :data:`MAX_INSIDE_EDITS` edits, then one counting the rest."""
    if len(edits) <= MAX_INSIDE_EDITS:
        return edits
    rest = f"and {len(edits) - MAX_INSIDE_EDITS} more"
    return [*edits[:MAX_INSIDE_EDITS], HiddenEdit(rest, rest)]


def _passes(text: str | None) -> list[dict[str, str]]:
    if not text:
        return [{}]
    return [split_args(part) for part in text.split(" | ")]


def _edits_of(before: dict[str, str], after: dict[str, str]) -> list[_ArgChange]:
    out = []
    for name in dict.fromkeys([*before, *after]):
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        present = now if was is None else was if now is None else None
        if present is not None and _OPERAND.fullmatch(present):
            continue  # tensors passed in the order the edges and params row tell
        if was is not None and now is not None and _EDGES.fullmatch(was) and _EDGES.fullmatch(now):
            continue  # in-edges alone: their numbers tell a reorder
        old = "(default)" if was is None else was
        new = "(default)" if now is None else now
        out.append(_ArgChange(name, old, new))
    return out


def call_edits(old: str | None, new: str | None) -> list[RowEdit]:
    """The argument changes between two versions of one op's ``tl_call``."""
    if old == new:
        return []
    before, after = _passes(old), _passes(new)
    if len(before) != len(after):
        return [RowEdit("call", f"call {old or '(defaults)'} -> {new or '(defaults)'}")]
    out: list[RowEdit] = []
    for was, now in zip(before, after, strict=True):
        for change in _edits_of(was, now):
            edit = RowEdit("call", change.text, arg=change.name)
            if edit not in out:
                out.append(edit)
    return out


def _inside_calls(text: str | None) -> list[tuple[str, dict[str, str]]]:
    out = []
    for part in (text or "").split("; "):
        func, sep, args = part.partition(": ")
        if sep:
            out.append((func, split_args(args)))
    return out


def inside_edits(old: str | None, new: str | None) -> list[HiddenEdit]:
    """``scaled_dot_product_attention is_causal True -> False``: the argument changes of
    the ops a collapsed node hides, the k-th call of a function against the k-th; at
    most :data:`MAX_INSIDE_EDITS`, then a count."""
    if old == new:
        return []
    before, after = _inside_calls(old), _inside_calls(new)
    seen: dict[str, int] = {}
    by_func: dict[tuple[str, int], dict[str, str]] = {}
    for func, args in before:
        seen[func] = seen.get(func, 0) + 1
        by_func[(func, seen[func])] = args
    seen = {}
    out: list[tuple[str, _ArgChange]] = []
    paired: set[tuple[str, int]] = set()
    for func, args in after:
        seen[func] = seen.get(func, 0) + 1
        key = (func, seen[func])
        paired.add(key)
        out += [(func, change) for change in _edits_of(by_func.get(key, {}), args)]
    for key, args in by_func.items():
        if key not in paired:
            out += [(key[0], change) for change in _edits_of(args, {})]
    return _overflow(_grouped_grad(out))


def _is_grad(change: _ArgChange) -> bool:
    """A grad-mode change (``grad (default) -> no_grad``), each value one word."""
    return change.name == "grad" and not any(" " in v for v in (change.old, change.new))


def _grad_text(change: _ArgChange) -> str:
    """``now runs under no_grad``, ``no longer runs under ...``, ``runs under ... (was ...)``."""
    was, now = change.old, change.new
    if was == "(default)":
        return f"now runs under {now}"
    if now == "(default)":
        return f"no longer runs under {was}"
    return f"runs under {now} (was {was})"


def _grouped_grad(edits: list[tuple[str, _ArgChange]]) -> list[HiddenEdit]:
    """Grad-mode changes inside one node, one line per change: ``mul now runs under
    no_grad`` for one op, ``now runs under no_grad (15 ops)`` for several; every other
    edit once."""
    funcs: dict[str, list[str]] = {}
    order: list[tuple[str, _ArgChange] | str] = []  # an edit, or a grad line's text
    for func, change in edits:
        if not _is_grad(change):
            order.append((func, change))
            continue
        text = _grad_text(change)
        if text not in funcs:
            order.append(text)
        funcs.setdefault(text, []).append(func)
    named: dict[str, HiddenEdit] = {}  # one line for an edit many ops share
    for item in order:
        if isinstance(item, str):
            ops = funcs[item]
            edit = (
                HiddenEdit(f"{ops[0]} {item}", item) if len(ops) == 1
                else HiddenEdit(f"{item} ({len(ops)} ops)", f"{item} ({len(ops)} ops)")
            )  # fmt: skip
        else:
            func, change = item
            text = change.text
            edit = HiddenEdit(f"{func} {text}", text, change.name, (func, change.name))
        named.setdefault(edit.text, edit)
    return list(named.values())


def ordered_inputs(preds: Sequence[str], positions: dict[str, int]) -> list[str] | None:
    """``preds`` in their drawn argument positions, or ``None`` when the edges carry
    none."""
    if len(preds) < 2 or not all(p in positions for p in preds):
        return None
    return sorted(preds, key=positions.__getitem__)


def reorder_edit(old: Sequence[str] | None, new: Sequence[str] | None) -> RowEdit | None:
    """``inputs reordered (skip, x) -> (x, skip)`` when the same inputs come in another
    order (``old`` already renamed to the received side's ids)."""
    if old is None or new is None or list(old) == list(new) or sorted(old) != sorted(new):
        return None
    return RowEdit("inputs", f"inputs reordered ({', '.join(old)}) -> ({', '.join(new)})")


def member_edits(old: Sequence[str] | None, new: Sequence[str] | None) -> list[HiddenEdit]:
    """``conv2d kernel_size (3, 3) -> (5, 5) (2 ops)``, ``conv2d params weight 8x8x3x3
    -> 8x8x5x5 (2 ops)``: what changed in the ops a collapsed node hides, in the full
    view's words, read from the two sides' ``tl_ops`` (each member's function, shape,
    args and params). Members are aligned on their functions (the k-th of a run with
    the k-th); the same edit on several ops reads once with their count; at most
    :data:`MAX_INSIDE_EDITS`, then a count. ``[]`` when a side has no list."""
    if not old or not new or old == new:
        return []
    before = [row.split(MEMBER_FIELDS)[: len(_FIELDS)] for row in old]
    after = [row.split(MEMBER_FIELDS)[: len(_FIELDS)] for row in new]
    if any(len(f) != len(_FIELDS) for f in (*before, *after)):
        return []  # a list this version did not write
    matcher = difflib.SequenceMatcher(
        a=[f[0] for f in before], b=[f[0] for f in after], autojunk=False
    )
    counts: dict[tuple[str, str, str | None], int] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("equal", "replace") or i2 - i1 != j2 - j1:
            continue
        for was, now in zip(before[i1:i2], after[j1:j2], strict=True):
            if was[0] != now[0]:
                continue  # another function: the function list says it
            for what, subject in _member_whats(was, now):
                key = (now[0], what, subject)
                counts[key] = counts.get(key, 0) + 1
    out = []
    for (func, what, subject), n in counts.items():
        said = what + (f" ({n} ops)" if n > 1 else "")
        out.append(HiddenEdit(f"{func} {said}", said, topic=(func, subject) if subject else None))
    return _overflow(out)


#: The fields of one member's row (``draw.labels.member_row``).
_FIELDS: Final = ("func", "shape", "args", "params")


def _member_whats(was: Sequence[str], now: Sequence[str]) -> list[tuple[str, str | None]]:
    """What changed in one hidden op, each with its subject (``shape``, ``dtype``,
    ``params``, an argument given both values; ``None`` for an argument only shown or
    no longer shown)."""
    out: list[tuple[str, str | None]] = []
    args = args_edits(was[2], now[2]) if was[2] != now[2] else []
    (dims, _, dtype), (new_dims, _, new_dtype) = was[1].partition(", "), now[1].partition(", ")
    if dims != new_dims:
        out.append((f"shape {was[1]} -> {now[1]}", "shape"))
    elif dtype != new_dtype:  # the same shape in another dtype (a cast's, say)
        out.append((f"dtype {dtype or '(default)'} -> {new_dtype or '(default)'}", "dtype"))
    out += [(edit.what, None if edit.shown_only else edit.arg) for edit in args]
    if was[3] != now[3]:
        out.append((f"params {was[3] or '(none)'} -> {now[3] or '(none)'}", "params"))
    return out
