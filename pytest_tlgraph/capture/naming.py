"""Names of captured calls: the function name without namespace or dunder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

# Reflected and true-division dunders read as the operation a user would name.
_ALIASES: Final = {
    "radd": "add",
    "rsub": "sub",
    "rmul": "mul",
    "truediv": "div",
    "rtruediv": "div",
    "rdiv": "div",
    "floordiv": "floor_divide",
    "rfloordiv": "floor_divide",
    "rmatmul": "matmul",
    "rpow": "pow",
    "rand": "and",
    "ror": "or",
    "rxor": "xor",
    "iadd": "add_",
    "isub": "sub_",
    "imul": "mul_",
    "itruediv": "div_",
}


def func_name(func: Callable[..., Any]) -> str:
    """``torch.nn.functional.linear`` -> ``linear``; ``Tensor.__add__`` -> ``add``;
    a property getter such as ``Tensor.T.__get__`` -> ``T``."""
    name = getattr(func, "__name__", None) or type(func).__name__
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        name = getattr(owner, "__name__", name)
    if name.startswith("__") and name.endswith("__") and len(name) > 4:
        name = name[2:-2]
        name = _ALIASES.get(name, name)
    return name
