"""Python numbers the forward read out of a tensor (``.item()``, ``.tolist()``,
``int(t)``, ``float(t)``), drawn as a reference to that read rather than as a literal.

A fake-quant scale read with ``.item()`` and passed to ``mul`` is data, not code: written
as the literal it happened to be, every retrain would change the drawing. The recorder
notes each number a read returns (:meth:`ReadTable.note`); when a recorded call passes
that very object (checked by identity), the argument becomes a :class:`ReadArg`, whose
skeleton is a :class:`ReadRef` to the tensor read: the tensor's producer is wired to
the call like any operand, and the argument is written ``in2.item()``.

Identity is what tells a read number from a literal, so only numbers Python never
shares are tracked: floats, and ints outside the small-int cache. ``int(t)`` returning
``3`` is indistinguishable from the literal ``3`` and stays a literal (a shape or an
index read so is a shape or an index: the drawing's shapes show it too).
"""

from __future__ import annotations

from typing import Any, Final

import torch

__all__ = ["READS", "ReadArg", "ReadRef", "ReadTable"]

#: The calls that turn a tensor into Python numbers, by recorded name.
READS: Final = frozenset({"item", "tolist", "__int__", "__float__", "__index__"})

#: ``tolist()`` results longer than this are not tracked element by element.
_TRACKED_ELEMENTS: Final = 64


def _fresh(value: Any) -> bool:
    """Whether ``value`` is an object no literal can share: a float, or an int outside
    CPython's cache of small ints (a bool never)."""
    kind = type(value)
    return kind is float or (kind is int and not -5 <= value <= 256)


class ReadArg:
    """A number a recorded call received from a read of ``tensor`` by ``method``."""

    __slots__ = ("method", "tensor", "value")

    def __init__(self, tensor: torch.Tensor, method: str, value: Any) -> None:
        self.tensor = tensor
        self.method = method
        self.value = value

    def skeleton(self, tensors: list[torch.Tensor], ref: Any) -> ReadRef:
        """This argument in a call skeleton: the read tensor appended to ``tensors``,
        ``ref(index)`` its place there."""
        tensors.append(self.tensor)
        return ReadRef(ref(len(tensors) - 1), self.method, type(self.value))


class ReadRef:
    """A read number in a call skeleton: ``ref`` is the read tensor's ``TensorRef``."""

    __slots__ = ("method", "ref", "value_type")

    def __init__(self, ref: Any, method: str, value_type: type) -> None:
        self.ref = ref
        self.method = method
        self.value_type = value_type

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is ReadRef
            and other.ref is self.ref
            and other.method == self.method
            and other.value_type is self.value_type
        )

    def __hash__(self) -> int:
        return hash((ReadRef, id(self.ref), self.method, self.value_type))

    def text(self, tensor_name: str) -> str:
        """``in2.item()`` for the read of ``in2``."""
        return f"{tensor_name}.{self.method}()"


class ReadTable:
    """The numbers read during one capture, by ``id`` (each kept alive until
    :meth:`release`, so an ``id`` is never reused for another number)."""

    def __init__(self) -> None:
        self._reads: dict[int, tuple[Any, torch.Tensor, str]] = {}

    def __bool__(self) -> bool:
        return bool(self._reads)

    def note(self, name: str, tensor: Any, value: Any) -> None:
        """Remember what the read ``name`` of ``tensor`` returned."""
        if not isinstance(tensor, torch.Tensor):
            return
        method = "tolist" if name == "tolist" else "item"
        reads = self._reads
        if type(value) is list:
            if len(value) <= _TRACKED_ELEMENTS:
                for v in value:
                    if _fresh(v):
                        reads[id(v)] = (v, tensor, method)
        elif _fresh(value):
            reads[id(value)] = (value, tensor, method)

    def _marked(self, value: Any) -> Any:
        kind = type(value)
        if kind is float or kind is int:
            found = self._reads.get(id(value))
            if found is not None and found[0] is value:
                return ReadArg(found[1], found[2], value)
            return value
        if kind is tuple or kind is list:
            inner = [self._marked(v) for v in value]
            if any(type(v) is ReadArg for v in inner):
                return inner if kind is list else tuple(inner)
        return value

    def mark(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any], bool]:
        """``args`` and ``kwargs`` with each read number replaced by its
        :class:`ReadArg`, and whether any was."""
        new_args = tuple(self._marked(a) for a in args)
        new_kwargs = {k: self._marked(v) for k, v in kwargs.items()} if kwargs else kwargs
        changed = any(a is not b for a, b in zip(args, new_args, strict=True)) or any(
            new_kwargs[k] is not kwargs[k] for k in kwargs
        )
        return new_args, new_kwargs, changed

    def release(self) -> None:
        """Forget every read."""
        self._reads.clear()
