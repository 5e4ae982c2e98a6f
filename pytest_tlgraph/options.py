"""The keyword-only options of ``Trace.draw`` (ENCODING.md §2), validated once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

from pytest_tlgraph.suggest import did_you_mean

__all__ = ["DrawOptions", "NodeSpecFn", "Source"]

#: A value source: builtin token, field name, or ``callable(record) -> number``.
Source = str | Callable[[Any], Any]
#: ``node_spec_fn(node, spec) -> spec or None``, applied last.
NodeSpecFn = Callable[[Any, dict[str, Any]], "dict[str, Any] | None"]

_CHOICES: Final[Mapping[str, tuple[object, ...]]] = {
    "view": ("unrolled", "rolled"),
    "direction": ("bottomup", "topdown", "leftright"),
    "layout": ("auto", "dot", "rank"),
    "collapse": (None, "auto", "max"),
    "page": ("light", "dark"),
}


@dataclass(frozen=True, kw_only=True, slots=True)
class DrawOptions:
    """Every draw option with its default. Build it with :meth:`from_kwargs`."""

    view: str = "unrolled"
    direction: str = "bottomup"
    layout: str = "auto"
    depth: int | None = None
    collapse: str | None = None
    color_by: Source | None = None
    size_by: Source | None = None
    stack_by: bool | Source | None = None
    size_scale: str | None = None
    page: str = "light"
    show_legend: bool = True
    node_label_fields: tuple[str, ...] | None = None
    show_saved_for_backward: bool = False
    show_redundant_args: bool = False
    node_spec_fn: NodeSpecFn | None = None

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> DrawOptions:
        """Validate names and enumerated values; unknown names raise ``TypeError``."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise TypeError(
                f"draw() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}"
                f"{did_you_mean(unknown[0], known)}; "
                f"valid options are: {', '.join(sorted(known))}"
            )
        for name, choices in _CHOICES.items():
            if name in kwargs and kwargs[name] not in choices:
                raise ValueError(
                    f"draw({name}={kwargs[name]!r}) is not one of {choices}"
                    f"{did_you_mean(kwargs[name], choices)}; pick one of those"
                )
        depth = kwargs.get("depth")
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 0
        ):
            raise ValueError(f"draw(depth={depth!r}) must be a non-negative int or None")
        fields_ = kwargs.get("node_label_fields")
        if fields_ is not None:
            if isinstance(fields_, str):
                raise TypeError("node_label_fields takes a list of tokens, not one string")
            kwargs["node_label_fields"] = tuple(fields_)
        for channel in ("color_by", "size_by", "stack_by"):
            if kwargs.get(channel) is False:  # False means "off", exactly like None
                kwargs[channel] = None
        return cls(**kwargs)

    @property
    def channels(self) -> tuple[str, ...]:
        """Names of the active channels, in a fixed order."""
        active = []
        if self.color_by is not None:
            active.append("color_by")
        if self.size_by is not None:
            active.append("size_by")
        if self.stack_by is not None:
            active.append("stack_by")
        return tuple(active)
