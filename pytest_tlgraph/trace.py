"""The frozen data model of a captured forward pass: ``Op``, ``Layer``, ``ModuleCall``, ``Trace``.

Everything here is plain Python data (a dtype is kept by its name, ``float32``), so a
``Trace`` holds no torch object and no activations: its size is O(number of ops),
whatever the tensor sizes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from itertools import pairwise
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pytest_tlgraph.fields import MEASURED, PASS_SUMMED, PER_PASS, check_record

if TYPE_CHECKING:
    from pytest_tlgraph.draw import Drawing

__all__ = [
    "MEASUREMENT_FIELDS",
    "SUMMED_FIELDS",
    "CallArg",
    "Layer",
    "ModuleCall",
    "Op",
    "Shape",
    "Trace",
    "check_twin",
    "freeze",
    "frozen_builder",
    "outermost_first",
    "param_elements",
    "shape_summary",
]

Shape = tuple[int, ...]
ParamInfo = tuple[str, Shape, bool]


def _fmt_shape(shape: Sequence[int]) -> str:
    # A 0-d pass reads "scalar" (as in the shape row), never an empty string.
    return "x".join(str(d) for d in shape) if shape else "scalar"


def shape_summary(shapes: Sequence[tuple[int, ...] | None]) -> str | None:
    """``Layer.shape_summary`` for the per-pass output shapes
    (docs/decisions.md, "One house (0.4)")."""
    if len(shapes) < 2 or any(s is None for s in shapes):
        return None
    concrete = [s for s in shapes if s is not None]
    if all(s == concrete[0] for s in concrete):
        return None
    first, last = concrete[0], concrete[-1]
    ranks = {len(s) for s in concrete}
    if len(ranks) == 1:
        varying = [axis for axis in range(len(first)) if len({s[axis] for s in concrete}) > 1]
        if len(varying) == 1:
            values = [s[varying[0]] for s in concrete]
            pairs = list(pairwise(values))
            if all(a >= b for a, b in pairs) or all(a <= b for a, b in pairs):
                return f"{values[0]}->{values[-1]}"
            return f"{min(values)}-{max(values)}"
    return f"{_fmt_shape(first)}->{_fmt_shape(last)}"


def outermost_first(calls: Mapping[tuple[str, int], ModuleCall]) -> list[ModuleCall]:
    """Every call of ``calls`` (by key), each after the call it runs in when that one is
    in ``calls`` too, without a walk up the module tree per call: a model nested a
    thousand deep costs a thousand steps, not half a million."""
    placed: set[tuple[str, int]] = set()
    out: list[ModuleCall] = []
    for call in calls.values():
        todo = [call]
        while (up := todo[-1].parent) is not None and up in calls and up not in placed:
            todo.append(calls[up])
        for c in reversed(todo):
            if c.key not in placed:
                placed.add(c.key)
                out.append(c)
    return out


def param_elements(params: tuple[ParamInfo, ...] | None) -> int | None:
    """How many parameter (and buffer) elements the entries of ``params`` hold."""
    if params is None:
        return None
    total = 0
    for _, shape, _ in params:
        numel = 1
        for dim in shape:
            numel *= dim
        total += numel
    return total


#: Numeric per-op measurements, in the order the spec lists them
#: (:data:`pytest_tlgraph.fields.FIELDS`, which declares each with its unit and rules).
MEASUREMENT_FIELDS: Final = MEASURED

#: Fields whose rolled (multi-pass) value is the exact cross-pass total, not one pass.
SUMMED_FIELDS: Final = PASS_SUMMED

#: Fields that are per-pass measurements of run-to-run noise: never single-valued
#: across passes, even when two passes happen to read the same number.
PER_PASS_FIELDS: Final = PER_PASS


@dataclass(frozen=True, slots=True)
class CallArg:
    """One argument of a recorded call that is not at its declared default.

    ``text`` is its canonical writing (``-1``, ``(0, 2, 1)``, ``tanh``, ``bfloat16``,
    ``(:, 0)``), a tensor named by where it comes from: ``in2`` (the op's second
    in-edge, ``in1[0]`` the first output of an op with several), ``param weight`` (a
    parameter or buffer), ``const 1x8`` (a tensor made before the capture).
    ``operand`` says the value is tensors only (drawn as edges and the params row);
    ``value`` is the same value as plain data, for checks that compare.
    """

    name: str
    text: str
    operand: bool
    value: Any


R = TypeVar("R")


def _frozen_slots(cls: type) -> Any:
    """The slots of ``cls``; ``TypeError`` unless it is a frozen slotted dataclass
    without ``__post_init__`` (whose instances a class switch may produce)."""
    params = getattr(cls, "__dataclass_params__", None)
    slots = vars(cls).get("__slots__")
    if params is None or not params.frozen or slots is None or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a frozen slotted dataclass without __post_init__")
    return slots


def frozen_builder(cls: type[R]) -> Callable[..., R]:
    """A constructor for the frozen slotted dataclass ``cls`` with its ``__init__``'s
    signature, for the stages that build thousands of records per draw.

    A frozen ``__init__`` must set every field through ``object.__setattr__`` (several
    times slower than a plain slot store). The builder fills an unfrozen twin with the
    same slots and then gives the object its real class: the result is an ordinary,
    fully frozen ``cls`` instance (equality, hashing, pickling and ``replace`` as usual).
    Like the dataclass's own ``__init__``, the builder is written as source for its
    fields (one function call per record, no argument packing).
    """
    slots = _frozen_slots(cls)
    twin = type(f"_{cls.__name__}Builder", cls.__bases__, {"__slots__": slots})
    check_twin(twin, cls)
    namespace: dict[str, Any] = {"_new": object.__new__, "_twin": twin, "_cls": cls}
    return _exec_builder(fields(cls), namespace)  # type: ignore[arg-type]


_FACTORY: Final = object()  # the default of a field whose default is a factory's value


def _exec_builder(specs: Sequence[Any], namespace: dict[str, Any]) -> Callable[..., Any]:
    """The builder function for the dataclass fields ``specs``: parameters in field
    order (defaults as the dataclass has them), each stored in the twin's slot, then
    the class switch."""
    params: list[str] = []
    body = ["    _built_ = _new(_twin)"]
    for spec in specs:
        name = spec.name
        if not spec.init or spec.kw_only is True or name.startswith("_"):
            raise TypeError(f"field {name!r} is not a plain public __init__ parameter")
        if spec.default is not MISSING:
            namespace[f"_default_{name}"] = spec.default
            params.append(f"{name}=_default_{name}")
        elif spec.default_factory is not MISSING:
            namespace[f"_factory_{name}"] = spec.default_factory
            params.append(f"{name}=_FACTORY")
            body.append(f"    if {name} is _FACTORY:\n        {name} = _factory_{name}()")
        else:
            params.append(name)
        body.append(f"    _built_.{name} = {name}")
    body += ["    _built_.__class__ = _cls", "    return _built_"]
    namespace["_FACTORY"] = _FACTORY
    exec(f"def build({', '.join(params)}):\n" + "\n".join(body), namespace)
    return namespace["build"]  # type: ignore[no-any-return]


def check_twin(mutable: type, frozen: type) -> None:
    """Raise ``TypeError`` unless instances of the slotted class ``mutable`` can be
    frozen into ``frozen`` with :func:`freeze`: a frozen slotted dataclass without
    ``__post_init__`` whose slots are ``mutable``'s, in the same order."""
    slots = _frozen_slots(frozen)
    if vars(mutable).get("__slots__") != slots or mutable.__bases__ != frozen.__bases__:
        raise TypeError(f"{mutable.__name__} does not have the slots of {frozen.__name__}")


def freeze(record: object, frozen: type[R]) -> R:
    """Turn ``record``, an instance of a class checked with :func:`check_twin`, into an
    ordinary ``frozen`` instance in place (no copy): the recorder's records become the
    trace's without building each one again."""
    record.__class__ = frozen
    return record  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Op:
    """One node record in execution order: a torch call that returned a tensor, or an
    ``input`` / ``output`` record (``func`` equal to ``"input"`` / ``"output"``)."""

    label: str
    layer: str
    func: str
    pass_number: int
    num_passes: int
    index: int
    parents: tuple[str, ...]
    children: tuple[str, ...]
    shape: Shape | None
    #: The output's dtype by name (``float32``, ``bfloat16``; ``torch.`` left off).
    dtype: str | None
    module: str
    module_calls: tuple[tuple[str, int], ...]
    params: tuple[ParamInfo, ...]
    module_args: Mapping[str, Any] | None
    module_type: str | None
    module_family: str | None
    func_duration: float | None
    activation_memory: int | None
    flops_forward: int | None
    flops_backward: int | None
    flops_total: int | None
    macs_forward: int | None
    autograd_memory: int | None
    num_autograd_tensors: int | None
    magnitude: float | None
    grad_norm: float | None
    device_time: int | None
    #: Every argument of the call not at its declared default, in signature order.
    call: tuple[CallArg, ...] = ()
    #: ``"no_grad"``, ``"inference_mode"`` or ``"enable_grad"`` for an op that ran under
    #: another grad mode than the forward pass around it; ``None`` for the rest.
    grad_mode: str | None = None

    @property
    def has_function(self) -> bool:
        """False for input and output records, which count zero time and flops."""
        return self.func not in ("input", "output")

    @property
    def param_count(self) -> int | None:
        """How many parameter and buffer elements the op reads (the ``params`` token)."""
        return param_elements(self.params)


@dataclass(frozen=True, slots=True)
class Layer:
    """All passes of one layer: the record a rolled-view node stands for.

    Field values are the common value of every pass; where passes disagree the field
    reads ``None`` and ``varying[field]`` holds the per-pass values. Fields in
    ``SUMMED_FIELDS`` hold the exact cross-pass total instead.
    """

    label: str
    func: str
    ops: tuple[str, ...]
    num_passes: int
    parents: tuple[str, ...]
    children: tuple[str, ...]
    shape: Shape | None
    dtype: str | None
    module: str
    module_calls: tuple[tuple[str, int], ...]
    params: tuple[ParamInfo, ...]
    module_args: Mapping[str, Any] | None
    module_type: str | None
    module_family: str | None
    shape_summary: str | None
    varying: Mapping[str, tuple[Any, ...]]
    func_duration: float | None
    activation_memory: int | None
    flops_forward: int | None
    flops_backward: int | None
    flops_total: int | None
    macs_forward: int | None
    autograd_memory: int | None
    num_autograd_tensors: int | None
    magnitude: float | None
    grad_norm: float | None
    device_time: int | None
    #: The passes' common call arguments (``varying["call"]`` when they differ).
    call: tuple[CallArg, ...] | None = ()
    #: The passes' common grad mode (see :attr:`Op.grad_mode`).
    grad_mode: str | None = None

    @property
    def has_function(self) -> bool:
        """False for input and output layers."""
        return self.func not in ("input", "output")

    @property
    def param_count(self) -> int | None:
        """Parameter and buffer elements each pass reads; ``None`` when passes differ."""
        return None if "params" in self.varying else param_elements(self.params)


check_record(Op, MEASURED)
check_record(Layer, MEASURED)


@dataclass(frozen=True, slots=True)
class ModuleCall:
    """One call of a module's ``forward``: where it sits and which ops it issued."""

    address: str
    call_number: int
    type_name: str
    depth: int
    parent: tuple[str, int] | None
    ops: tuple[str, ...]
    module_args: Mapping[str, Any] | None = None
    module_family: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        """``(address, call_number)``: the call's identity within a trace."""
        return (self.address, self.call_number)


@dataclass(frozen=True, slots=True)
class Trace:
    """A captured forward pass. Frozen; draw it with :meth:`draw`."""

    ops: tuple[Op, ...]
    layers: Mapping[str, Layer]
    modules: tuple[ModuleCall, ...]
    model_name: str
    param_count: int
    device_join: str | None = None
    device_join_reason: str | None = None
    #: Input and output record label -> its title (``input_ids``, ``logits``); records
    #: without a name are titled by their label.
    io_names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Whether the capture measured output magnitudes (``capture(magnitudes=True)``):
    #: without them every ``magnitude`` is ``None`` and a channel reading it refuses.
    magnitudes: bool = True
    #: Whether the captured tensors held values: ``False`` when some op ran on the
    #: meta device or on fake tensors, whose magnitudes and grad norms are ``None``.
    values: bool = True
    #: The default floating dtype when the forward ran (``torch.get_default_dtype()``):
    #: an output of any other dtype names it on its shape row.
    default_dtype: str = "float32"
    _by_label: Mapping[str, Op] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_label", MappingProxyType({op.label: op for op in self.ops}))

    def op(self, label: str) -> Op:
        """The op with this label (``KeyError`` naming the nearest labels if none)."""
        try:
            return self._by_label[label]
        except KeyError:
            pass
        layer = self.layers.get(label)
        if layer is not None:
            hint = (
                f"{label!r} is a layer of {layer.num_passes} passes: ask for one of them "
                f"({layer.ops[0]!r} ... {layer.ops[-1]!r}), or use trace.layers[{label!r}]"
            )
        else:
            hint = "op labels read like 'linear_1' or 'linear_1:2'; trace.ops lists them all"
        raise KeyError(f"no op labelled {label!r} in this trace: {hint}") from None

    def draw(self, **options: Any) -> Drawing:
        """Draw the trace; see ``DrawOptions`` for the keyword-only options."""
        from pytest_tlgraph.draw import draw

        return draw(self, **options)
