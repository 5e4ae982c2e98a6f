"""The measurement fields of a trace, each declared once: its type and how it
aggregates over the passes of a rolled layer, over the ops of a box or segment, and over
the boxes of a repeat fold.

Every set of fields the stages use is read from :data:`FIELDS`: the measurements a
rolled :class:`~pytest_tlgraph.trace.Layer` rolls up (``pytest_tlgraph.trace``), the
sums a collapsed record carries (``draw/collapse/records.py``), the sources with an
exact sum over ops, the volatile ones a snapshot masks and the ones read from tensor
values (``encoding/sources.py``). The records declare their slots for the type checker
and are checked against this table when their modules load (:func:`check_record`), so
a field added here without its slots (or the other way round) fails at once.
Nothing here imports anything.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final, Literal

__all__ = [
    "BOX_SUMMED",
    "FIELDS",
    "FOLD_FIRST",
    "MEASURED",
    "PASS_SUMMED",
    "PER_PASS",
    "SUMMABLE",
    "VALUE_READ",
    "VOLATILE",
    "Field",
    "check_record",
    "field",
]

#: Over the passes of a rolled layer: ``common`` (the passes' shared value, else
#: ``None`` with the per-pass values in ``Layer.varying``), ``sum`` (the exact
#: cross-pass total), ``each`` (run-to-run noise: never one value across passes).
PassRule = Literal["common", "sum", "each"]
#: Over the ops of a box or segment: ``sum`` (the exact sum, ``None`` when an op lacks
#: it) or ``n/a`` (collapsed nodes do not carry it).
BoxRule = Literal["sum", "n/a"]
#: Over the boxes of a repeat fold: ``first`` (the representative box's value: a fold
#: shows one instance, not the total) or ``n/a``.
FoldRule = Literal["first", "n/a"]


@dataclass(frozen=True, slots=True)
class Field:
    """One measurement field of ``Op`` and ``Layer``.

    ``stored`` is false for a value worked out from other fields (``param_count``, a
    property of ``Op`` and ``Layer``, from ``params``); ``volatile`` for run-to-run
    noise (snapshots mask a channel reading it); ``value_read`` for a measurement read
    from tensor values (``None`` on meta or fake tensors).
    """

    name: str
    kind: type
    passes: PassRule
    boxes: BoxRule
    folds: FoldRule
    volatile: bool = False
    value_read: bool = False
    stored: bool = True


#: Every measurement field, in the order the spec lists them (and the records hold them).
FIELDS: Final = (
    Field("func_duration", float, "each", "sum", "first", volatile=True),
    Field("activation_memory", int, "common", "sum", "first"),
    Field("flops_forward", int, "common", "sum", "first"),
    Field("flops_backward", int, "common", "sum", "first"),
    Field("flops_total", int, "common", "sum", "first"),
    Field("macs_forward", int, "common", "sum", "first"),
    Field("autograd_memory", int, "sum", "n/a", "n/a"),
    Field("num_autograd_tensors", int, "sum", "n/a", "n/a"),
    Field("magnitude", float, "common", "n/a", "n/a", value_read=True),
    Field("grad_norm", float, "common", "n/a", "n/a", value_read=True),
    Field("device_time", int, "sum", "sum", "first", volatile=True),
    Field("param_count", int, "common", "sum", "first", stored=False),
)
_BY_NAME: Final = {field.name: field for field in FIELDS}

#: The stored measurement slots of ``Op``, ``Layer`` and the recorder's ``RawOp``.
MEASURED: Final = tuple(f.name for f in FIELDS if f.stored)
#: Fields whose rolled (multi-pass) value is the exact cross-pass total.
PASS_SUMMED: Final = frozenset(f.name for f in FIELDS if f.passes == "sum")
#: Per-pass noise: never single-valued across passes, even when two passes agree.
PER_PASS: Final = frozenset(f.name for f in FIELDS if f.passes == "each")
#: The stored fields a box, segment and fold record carries, each an exact sum.
BOX_SUMMED: Final = tuple(f.name for f in FIELDS if f.stored and f.boxes == "sum")
#: The stored fields a fold record carries: its representative (first) box's values.
FOLD_FIRST: Final = tuple(f.name for f in FIELDS if f.stored and f.folds == "first")
#: Every field with an exact sum over a collapsed node's ops (``param_count`` too,
#: summed over the member ops by the draw's reader).
SUMMABLE: Final = frozenset(f.name for f in FIELDS if f.boxes == "sum")
#: Fields that read run-to-run noise.
VOLATILE: Final = frozenset(f.name for f in FIELDS if f.volatile)
#: Fields measured from tensor values.
VALUE_READ: Final = frozenset(f.name for f in FIELDS if f.value_read)


def field(name: str) -> Field:
    """The declaration of the measurement field ``name`` (``KeyError`` if none)."""
    return _BY_NAME[name]


def check_record(cls: type, expected: tuple[str, ...]) -> None:
    """Raise ``TypeError`` unless the measurement fields the dataclass ``cls`` declares
    are ``expected``, in that order and next to each other (a record out of step with
    :data:`FIELDS`; code that copies them all at once relies on the run)."""
    names = [f.name for f in fields(cls)]
    declared = tuple(name for name in names if name in _BY_NAME)
    start = names.index(declared[0]) if declared else 0
    if declared != expected or tuple(names[start : start + len(declared)]) != declared:
        missing = [name for name in expected if name not in declared]
        extra = [name for name in declared if name not in expected]
        raise TypeError(
            f"{cls.__name__} declares the measurement fields {declared}, not {expected} "
            f"(missing {missing}, not in pytest_tlgraph.fields: {extra}): declare each "
            "field in pytest_tlgraph/fields.py and give the record its slot, in order"
        )
