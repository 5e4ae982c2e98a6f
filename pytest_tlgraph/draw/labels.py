"""Label rows per visible node (docs/decisions.md, "Labels"): plain text, top to bottom.

Rows are plain text here; ``dot.py`` escapes them and sets the bold title.

Default rows, in order: the title (bold; ``(xN)`` on rolled multi-pass nodes), the
shape summary (rolled nodes whose passes vary in shape, and an op drawn by a repeat
fold for repetitions that vary in shape: ``1x16x4x4->1x16x16x16``, first to last),
``shape, bytes``, the
saved-for-backward row (only with ``show_saved_for_backward=True``), the args row
(redundant args suppressed unless ``show_redundant_args=True``), the params row and
``@module``. ``node_label_fields`` replaces them with the rows of its tokens, in order
(see :data:`LABEL_FIELDS`).
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pytest_tlgraph.constructors import ModuleArgs
from pytest_tlgraph.draw.callrows import grad_row, operand_row, short_dtype, visible_args
from pytest_tlgraph.draw.encoding.units import format_bytes, format_flops
from pytest_tlgraph.draw.plan import PlanNode, relative_address, wrap_row
from pytest_tlgraph.draw.salient import hidden_defaults
from pytest_tlgraph.draw.suppression import hidden_args, input_shape, output_shape
from pytest_tlgraph.errors import EncodingRefusal
from pytest_tlgraph.memo import remember
from pytest_tlgraph.options import DrawOptions
from pytest_tlgraph.trace import Layer, Op, Shape, Trace, shape_summary

__all__ = [
    "LABEL_FIELDS",
    "Row",
    "args_row",
    "check_label_fields",
    "dtype_name",
    "format_shape",
    "node_rows",
    "node_texts",
    "row_texts",
    "saved_for_backward_row",
]

Record = Op | Layer


@dataclass(frozen=True, slots=True)
class Row:
    """One label row: its plain text and whether it is drawn bold."""

    text: str
    bold: bool = False


# Shapes repeat across a graph's nodes: each distinct one is formatted once (and each
# distinct shape row, ``shape, bytes``, written once).
_shape_texts: dict[tuple[int, ...], str] = {}
_shape_rows: dict[tuple[Any, ...], str] = {}
_SHAPE_MEMO_LIMIT: Final = 4096


def format_shape(shape: tuple[int, ...] | None) -> str:
    """``(2, 32)`` -> ``2x32``; a 0-d shape reads ``scalar``."""
    if shape is None:
        return "?"
    text = _shape_texts.get(shape)
    if text is None:
        written = "x".join(str(d) for d in shape) if shape else "scalar"
        text = remember(_shape_texts, shape, written, _SHAPE_MEMO_LIMIT)
    return text


def _shape_row(shape: tuple[int, ...], size: int | None, dtype: str | None = None) -> str:
    """The shape row: ``2x32, 256 B`` (the shape alone when the size is unknown), the
    dtype between them when it is not the default floating one (``1x8, bf16, 16 B``)."""
    key = (shape, size, dtype)
    row = _shape_rows.get(key)
    if row is None:
        parts = [format_shape(shape)]
        if dtype is not None:
            parts.append(short_dtype(dtype))
        if size is not None:
            parts.append(format_bytes(size))
        row = remember(_shape_rows, key, ", ".join(parts), _SHAPE_MEMO_LIMIT)
    return row


def _odd_dtype(record: Record, trace: Trace | None) -> str | None:
    """The record's dtype name when it is not the trace's default floating dtype."""
    name = dtype_name(record.dtype)
    default = trace.default_dtype if trace is not None else "float32"
    return None if name is None or name == default else name


def dtype_name(dtype: Any) -> str | None:
    """``torch.float16`` -> ``float16`` (framework namespace dropped); ``None`` stays."""
    if dtype is None:
        return None
    return str(dtype).rpartition(".")[2]


def _rolled_multipass(record: object) -> bool:
    return isinstance(record, Layer) and record.num_passes > 1


def _title(node: PlanNode, trace: Trace | None = None) -> str:
    """The bold title: the label (with ``(xN)`` on rolled multi-pass nodes); an input or
    output is titled by its name (``input_ids``, ``logits``) when the trace has one."""
    record = node.record
    if trace is not None and (node.kind == "input" or node.kind == "output"):
        return trace.io_names.get(node.id, node.id)
    return f"{record.label} (x{record.num_passes})" if _rolled_multipass(record) else node.id


def _shape_summary(node: PlanNode, record: Record, trace: Trace | None) -> str | None:
    """The shape summary row: a rolled node's across its passes, or an op node's drawn
    by a repeat fold across the repetitions it stands for (its members, one each), so
    a fold fed 16x16, 8x8 and 4x4 maps never reads as the first one's shape alone."""
    if isinstance(record, Layer):
        return record.shape_summary
    if trace is None or len(node.members) < 2:
        return None
    return shape_summary([trace.op(label).shape for label in node.members])


def saved_for_backward_row(record: Record) -> str | None:
    """``saved for backward: 2 tensors, 288 B``, only where retention measured positive.

    ``None`` when nothing was saved or no backward graph was built (the measurement is
    ``None``), so an absent row makes no claim. On a rolled multi-pass layer the values
    are cross-pass sums and the row ends `` (total across passes)``.
    """
    count, size = record.num_autograd_tensors, record.autograd_memory
    if count is None or count <= 0 or size is None:
        return None
    noun = "tensor" if count == 1 else "tensors"
    text = f"saved for backward: {count} {noun}, {format_bytes(size)}"
    return text + " (total across passes)" if _rolled_multipass(record) else text


@dataclass(frozen=True, slots=True)
class _Varying:
    """An arg whose value differs between the passes of a rolled layer."""

    values: tuple[Any, ...]


_ATOMS: Final = frozenset({bool, int, float, str, type(None)})
_INTS: Final = frozenset({int})
# Kernel sizes, strides and paddings repeat across a graph: each is formatted once.
# (Keyed only by tuples of ints: equal tuples of other types, (True,) == (1,), read
# differently.)
_int_tuple_texts: dict[tuple[int, ...], str] = {}
_INT_TUPLE_MEMO_LIMIT: Final = 1024


def _format_arg(value: Any) -> str:
    kind = type(value)
    if kind in _ATOMS:  # the common case first: ints, bools, floats
        return str(value)
    if kind is tuple and _INTS.issuperset(map(type, value)):
        text = _int_tuple_texts.get(value)
        if text is None:
            text = "(" + ", ".join(map(str, value)) + ("," if len(value) == 1 else "") + ")"
            remember(_int_tuple_texts, value, text, _INT_TUPLE_MEMO_LIMIT)
        return text
    if isinstance(value, _Varying):
        return "/".join(_format_arg(v) for v in value.values)
    if isinstance(value, tuple):
        inner = ", ".join(_format_arg(v) for v in value)
        return "(" + inner + ("," if len(value) == 1 else "") + ")"
    return str(value)


def args_row(
    args: Mapping[str, Any] | None,
    *,
    family: str | None,
    input_shape: tuple[int, ...] | None,
    output_shape: tuple[int, ...] | None,
    show_redundant: bool = False,
) -> str | None:
    """``kernel_size=(3, 3), stride=(2, 2)``: a module's constructor args, in order.

    Args that provably duplicate a captured dimension are left out (the check and its
    closed family table live in :mod:`pytest_tlgraph.draw.suppression`): ``family`` is the
    module family, ``input_shape`` the shape of the module's single input (``None`` for
    several inputs or none), ``output_shape`` its output shape (``None`` when unknown or
    varying). A mismatch or a missing shape keeps the arg. Args at their constructor
    default that do not define the layer are left out too (:mod:`.salient`; needs the
    defaults capture recorded on ``args``). ``show_redundant=True`` shows every arg.
    ``None`` when no arg is left to show.
    """
    if not args:
        return None
    hidden: tuple[str, ...] = ()
    if not show_redundant:
        hidden = hidden_args(args, family, input_shape, output_shape)
        hidden += hidden_defaults(args)
    parts = [_arg_text(name, value) for name, value in args.items() if name not in hidden]
    return ", ".join(parts) if parts else None


def _arg_text(name: str, value: Any) -> str:
    """``kernel_size=(3, 3)``: one arg as an args row writes it."""
    return f"{name}={value if type(value) in _ATOMS else _format_arg(value)}"


def defaults_text(args: Mapping[str, Any] | None) -> str | None:
    """``eps=1e-05, momentum=0.1``: the args at their constructor default that an args
    row leaves out (unless it shows every arg), with their values: the drawing's
    ``tl_defaults``. A change from a default then reads ``eps 1e-05 (default) ->
    1e-06``, and a default that moves with torch changes the DOT. ``None`` when no arg
    is at its default."""
    if not args:
        return None
    # Every op of a module with constructor args asks (the drawing's ``tl_defaults``),
    # and blocks repeat: each distinct set of args is checked and written once.
    key = _row_key(args, None, None, None, False)
    if key is not None:
        text = _defaults_texts.get(key, _UNSET)
        if text is not _UNSET:
            return text  # type: ignore[return-value]
    hidden = set(hidden_defaults(args))
    parts = [_arg_text(name, value) for name, value in args.items() if name in hidden]
    text = ", ".join(parts) if parts else None
    if key is not None:
        remember(_defaults_texts, key, text, _ARGS_MEMO_LIMIT)
    return text


def _module_args(record: Record) -> Mapping[str, Any] | None:
    """The record's args; on a rolled layer whose passes read different args, the
    values that differ are shown per pass (``in_features=4/8``) rather than dropped."""
    if record.module_args is not None or not isinstance(record, Layer):
        return record.module_args
    per_pass = [a for a in record.varying.get("module_args", ()) if a is not None]
    if not per_pass:
        return None
    merged: dict[str, Any] = {}
    for name in dict.fromkeys(name for args in per_pass for name in args):
        values = tuple(dict.fromkeys(args[name] for args in per_pass if name in args))
        merged[name] = values[0] if len(values) == 1 else _Varying(values)
    # Every pass is a call of one module: the torch class its args were read against,
    # and so its defaults, are the same in each.
    first = per_pass[0]
    if isinstance(first, ModuleArgs):
        return ModuleArgs(merged, first.torch_class, first.defaults)
    return ModuleArgs(merged)


def _record_args_row(record: Record, trace: Trace | None, show_redundant: bool) -> str | None:
    args = _module_args(record)
    if not args:
        # A call of a function: its own arguments (a module's computation shows its
        # constructor args instead; its call is on the node's ``tl_call``).
        return visible_args(record, trace) if record.call != () else None
    source: Shape | None = None
    if trace is None:
        # A record drawn without its trace cannot be checked: show every arg.
        show_redundant = True
    else:
        try:
            source = input_shape(record, trace)
        except KeyError:
            show_redundant = True
    family = record.module_family
    target = None if show_redundant else output_shape(record)
    key = _row_key(args, family, source, target, show_redundant)
    if key is not None:
        row = _args_rows.get(key, _UNSET)
        if row is not _UNSET:
            return row  # type: ignore[return-value]
    row = args_row(
        args,
        family=family,
        input_shape=source,
        output_shape=target,
        show_redundant=show_redundant,
    )
    if key is not None:
        remember(_args_rows, key, row, _ARGS_MEMO_LIMIT)
    return row


# Args rows repeat wherever a module does (a block repeated in a model, a model drawn
# again): each distinct row is checked and written once. Only rows of plain values (atoms
# and flat tuples of atoms) are memoised.
_args_rows: dict[tuple[Any, ...], str | None] = {}
#: :func:`defaults_text` of each distinct set of args, by the same key.
_defaults_texts: dict[tuple[Any, ...], str | None] = {}
_ARGS_MEMO_LIMIT: Final = 4096
_UNSET: Final = object()
_ATOMS_AND_TUPLES: Final = _ATOMS | {tuple}


def _row_key(
    args: Mapping[str, Any],
    family: str | None,
    source: Shape | None,
    target: Shape | None,
    show_redundant: bool,
) -> tuple[Any, ...] | None:
    """The memo key of an args row: everything the row reads. The values, which the row
    writes, are keyed by their :mod:`marshal` bytes (one call in C): marshal writes each
    value with its exact type, so ``1``, ``1.0`` and ``True`` (equal, yet read
    differently) get different keys, and so do ``0.0`` and ``-0.0``. The rest (names,
    family, the recorded defaults the args were read against, shapes, the flag) is only
    compared, so it is keyed as it is. ``None`` when a value is not a plain atom
    or a flat tuple of atoms, or cannot be marshalled (a subclass of an atom): such rows
    are written every time."""
    values = tuple(args.values())
    kinds = set(map(type, values))
    if not _ATOMS.issuperset(kinds):
        if not _ATOMS_AND_TUPLES.issuperset(kinds):
            return None
        for value in values:
            if type(value) is tuple and not _ATOMS.issuperset(map(type, value)):
                return None
    try:
        written = marshal.dumps(values, 2)
    except ValueError:
        return None
    defaults = args.defaults if isinstance(args, ModuleArgs) else None
    return (family, defaults, source, target, show_redundant, tuple(args), written)


def _params_row(record: Record) -> str | None:
    if not record.params:
        return None
    prefix = f"{record.module}." if record.module else ""
    parts = []
    for name, shape, trainable in record.params:
        short = name.removeprefix(prefix)
        parts.append(f"{short} {format_shape(shape)}" + ("" if trainable else " (frozen)"))
    return "params: " + ", ".join(parts)


#: The separator between the fields of one member's :func:`member_row`.
MEMBER_FIELDS: Final = " | "


def member_row(op: Op, default_dtype: Any = None, within: str = "") -> str:
    """One op a box, fold or segment hides, in the full view's words: ``conv2d |
    1x8x8x8 | kernel_size=(3, 3), padding=(1, 1), bias=False | weight 8x8x3x3 | conv1``
    (its function, shape with its dtype when not ``default_dtype``, every constructor
    arg, params, and its module's address below ``within``, the collapsed node's own
    address: left out when the op is the node's module's own). The drawing's ``tl_ops``
    lists one per member, so a comparison of any view opens it into the ops it hides,
    each at its module (a rename inside a box reads as one)."""
    shape = format_shape(op.shape)
    dtype = dtype_name(op.dtype)
    dtype = None if dtype == dtype_name(default_dtype) else dtype
    args = args_row(
        op.module_args, family=op.module_family, input_shape=None, output_shape=None,
        show_redundant=True,
    )  # fmt: skip
    params = _params_row(op)
    fields = [
        op.func,
        f"{shape}, {dtype}" if dtype else shape,
        args or "",
        params.removeprefix("params: ") if params else "",
    ]
    below = op.module[len(within) + 1 :] if within and op.module.startswith(within + ".") else ""
    if not within and op.module and op.module != within:
        below = op.module
    if below:
        fields.append(below)
    return MEMBER_FIELDS.join(fields)


# A module's params row is the same whenever it is drawn (a module called again, a
# model drawn again): each distinct one is written and wrapped once.
_params_lines: dict[tuple[Any, ...], tuple[str, ...]] = {}
_PARAMS_MEMO_LIMIT: Final = 1024


def _params_row_lines(record: Record) -> tuple[str, ...]:
    """The wrapped lines of the params row of ``record`` (which has params)."""
    key = (record.module, record.params)
    try:
        lines = _params_lines.get(key)
    except TypeError:  # the params of a record built by hand may not hash
        return _wrapped_params_row(record)
    if lines is None:
        lines = remember(_params_lines, key, _wrapped_params_row(record), _PARAMS_MEMO_LIMIT)
    return lines


def _wrapped_params_row(record: Record) -> tuple[str, ...]:
    row = _params_row(record)
    return () if row is None else wrap_row(row)


def _module_row(node: PlanNode, record: Record) -> str | None:
    """``@address`` relative to the innermost drawn cluster; ``None`` where the cluster
    already names the module."""
    if node.kind not in ("op", "layer") or not record.module:
        return None
    address = relative_address(record.module, node.within)
    return None if address is None else f"@{address}"


def _per_pass(record: Record, text: str) -> str:
    return f"{text} per pass" if _rolled_multipass(record) else text


def _field_row(token: str, node: PlanNode, record: Record, trace: Trace | None,
               options: DrawOptions) -> str | None:  # fmt: skip
    """The row of one ``node_label_fields`` token (see :data:`LABEL_FIELDS`)."""
    function = record.has_function
    if token == "op":
        return record.func if function else None
    if token == "shape":
        return None if record.shape is None else format_shape(record.shape)
    if token == "dtype":
        return dtype_name(record.dtype)
    if token == "shape_summary":
        return _shape_summary(node, record, trace)
    if token == "bytes":
        size = record.activation_memory
        return None if size is None else _per_pass(record, format_bytes(size))
    if token == "args":
        return _record_args_row(record, trace, options.show_redundant_args)
    if token == "params":
        return _params_row(record)
    if token == "module":
        return _module_row(node, record)
    if token == "pass":
        if not function:
            return None
        if isinstance(record, Layer):
            return f"{record.num_passes} pass" + ("" if record.num_passes == 1 else "es")
        return f"pass {record.pass_number}/{record.num_passes}"
    if token == "flops":
        flops = record.flops_forward
        return None if flops is None or not function else _per_pass(record, format_flops(flops))
    raise AssertionError(token)  # check_label_fields admits only known tokens


#: The ``node_label_fields`` tokens, each naming one row: ``name`` the bold title;
#: ``op`` the function name (``linear``); ``shape`` the output shape (``2x32``); ``dtype``
#: the output dtype without namespace (``float16``); ``shape_summary`` the across-pass
#: shape summary; ``bytes`` the output bytes; ``args`` the constructor args (checked
#: suppression applied); ``params`` the parameters read; ``module`` ``@address``;
#: ``pass`` ``pass 2/3`` on an op node, ``3 passes`` on a rolled node; ``flops`` forward
#: FLOPs (``16 FLOPs``). On rolled multi-pass nodes ``bytes`` and ``flops`` are the
#: passes' common value and read ``... per pass``. Input and output records have no
#: ``op``, ``pass`` or ``flops`` row. A token whose value is unset contributes no row.
LABEL_FIELDS: Final = (
    "name", "op", "shape", "dtype", "shape_summary", "bytes", "args", "params", "module",
    "pass", "flops",
)  # fmt: skip


def check_label_fields(fields: Sequence[object]) -> tuple[str, ...]:
    """The tokens of ``fields``; an unknown token refuses ``node_label_field_invalid``."""
    for token in fields:
        if not isinstance(token, str) or token not in LABEL_FIELDS:
            raise EncodingRefusal(
                "node_label_field_invalid",
                cause=f"node_label_fields has the unknown token {token!r}.",
                remedy=f"use only these tokens: {', '.join(LABEL_FIELDS)}.",
            )
    return tuple(str(token) for token in fields)


def _picked_rows(node: PlanNode, record: Record, trace: Trace | None,
                 options: DrawOptions, tokens: tuple[str, ...]) -> list[Row]:  # fmt: skip
    rows = []
    for token in tokens:
        if token == "name":
            rows.append(Row(_title(node, trace), bold=True))
            continue
        text = _field_row(token, node, record, trace, options)
        if text is not None:
            rows.extend(Row(line) for line in wrap_row(text))
    # A node is never drawn blank: with no row left, it keeps its title.
    return rows or [Row(_title(node, trace), bold=True)]


def _default_texts(node: PlanNode, record: Record, trace: Trace | None,
                   options: DrawOptions) -> tuple[str, ...]:  # fmt: skip
    """The default rows' texts of a full-detail node whose record is ``record`` (an op or
    a layer), title first (the only bold row)."""
    texts = [_title(node, trace)]
    summary = _shape_summary(node, record, trace)
    if summary is not None:
        texts.append(summary)
    if record.shape is not None:
        texts.append(_shape_row(record.shape, record.activation_memory, _odd_dtype(record, trace)))
    operand = operand_row(record) if record.call != () else None
    if operand is not None:
        texts.append(operand)
    if options.show_saved_for_backward:
        saved = saved_for_backward_row(record)
        if saved is not None:
            texts.extend(wrap_row(saved))
    args = _record_args_row(record, trace, options.show_redundant_args)
    if args is not None:
        texts.extend(wrap_row(args))
    grad = grad_row(record)
    if grad is not None:
        texts.append(grad)
    if record.params:
        texts.extend(_params_row_lines(record))
    module = _module_row(node, record)
    if module is not None:
        texts.append(module)
    return tuple(texts)


_TITLE_BOLD: Final = (0,)


def node_texts(
    node: PlanNode, *, trace: Trace | None, options: DrawOptions
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """:func:`node_rows` as plain data: the row texts and the indices of the bold rows
    (what a drawing needs, without a ``Row`` per line)."""
    record = node.record
    if options.node_label_fields is None and isinstance(record, (Op, Layer)):
        return _default_texts(node, record, trace, options), _TITLE_BOLD
    return row_texts(node_rows(node, trace=trace, options=options))


def row_texts(rows: Sequence[Row]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Rows as plain data: their texts and the indices of the bold ones."""
    return tuple(r.text for r in rows), tuple(i for i, r in enumerate(rows) if r.bold)


def node_rows(node: PlanNode, *, trace: Trace | None, options: DrawOptions) -> tuple[Row, ...]:
    """The label rows of one full-detail plan node (an op, layer, input or output) under
    ``options``; boxed nodes get theirs from the collapse stage.

    ``trace`` is the trace the node's record belongs to; with ``None`` (a record drawn
    detached) no arg can be checked, so every arg is shown.
    """
    tokens = None
    if options.node_label_fields is not None:
        tokens = check_label_fields(options.node_label_fields)
    record = node.record
    if not isinstance(record, (Op, Layer)):
        return (Row(_title(node, trace), bold=True),)
    if tokens is not None:
        return tuple(_picked_rows(node, record, trace, options, tokens))
    title, *texts = _default_texts(node, record, trace, options)
    return (Row(title, bold=True), *(Row(t) for t in texts))
