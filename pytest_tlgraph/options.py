"""The keyword-only options of ``Trace.draw`` (ENCODING.md §2), validated once."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.suggest import did_you_mean

__all__ = ["DrawOptions", "NodeSpecFn", "Source"]

#: A value source: builtin token, field name, or ``callable(record) -> number``.
Source = str | Callable[[Any], Any]
#: ``node_spec_fn(node, spec) -> spec or None``, applied last.
NodeSpecFn = Callable[[Any, dict[str, Any]], "dict[str, Any] | None"]

_CHOICES: Final[Mapping[str, tuple[object, ...]]] = {
    "view": ("unrolled", "rolled"),
    "direction": ("bottomup", "topdown", "leftright"),
    "collapse": (None, "auto", "max"),
    "page": ("light", "dark"),
}


_FLAGS: Final = ("show_legend", "show_saved_for_backward", "show_redundant_args")


def _check_types(kwargs: Mapping[str, Any]) -> None:
    """Refuse values of the wrong type with a ``TypeError`` naming option, value and the
    accepted values (a string where a flag belongs would otherwise read as True)."""

    def refuse(name: str, accepted: str) -> None:
        raise TypeError(f"draw({name}={kwargs[name]!r}) is not accepted; {name} takes {accepted}")

    for name in _FLAGS:
        if name in kwargs and not isinstance(kwargs[name], bool):
            refuse(name, "True or False")
    spec_fn = kwargs.get("node_spec_fn")
    if spec_fn is not None and not callable(spec_fn):
        refuse("node_spec_fn", "None or a callable (node, spec) -> spec or None")
    if not isinstance(kwargs.get("size_scale", ""), (str, type(None))):
        refuse("size_scale", "None, 'sqrt' or 'linear'")
    # Sources and label tokens are checked where they are resolved (EncodingRefusal).
    fields_ = kwargs.get("node_label_fields")
    if fields_ is not None and not isinstance(fields_, (str, Iterable)):
        refuse("node_label_fields", "None or a list of str tokens")


#: The accepted ``layout`` values: both mean dot, which draws every graph.
LAYOUTS: Final = ("auto", "dot")


def _check_layout(layout: object) -> None:
    """Refuse a ``layout`` other than :data:`LAYOUTS`. 0.1's ``rank`` layout was slower
    than dot on every graph measured and is gone (docs/decisions.md)."""
    if layout in LAYOUTS:
        return
    if layout == "rank":
        raise UsageError(
            "draw(layout='rank') was removed: it was slower than dot on every graph "
            "measured. Drop layout= (dot draws every graph) and make a large graph small "
            "with collapse='auto' or depth=N"
        )
    raise UsageError(f"draw(layout={layout!r}) is not one of {LAYOUTS}; pick one of those")


@dataclass(frozen=True, kw_only=True, slots=True)
class DrawOptions:
    """Every draw option with its default. Build it with :meth:`from_kwargs`."""

    view: str = "unrolled"
    direction: str = "bottomup"
    layout: str = "auto"
    depth: int | None = None
    collapse: str | None = None
    collapse_budget: int | None = None
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
        _check_types(kwargs)
        if "layout" in kwargs:
            _check_layout(kwargs["layout"])
        for name, choices in _CHOICES.items():
            if name in kwargs and kwargs[name] not in choices:
                raise UsageError(
                    f"draw({name}={kwargs[name]!r}) is not one of {choices}"
                    f"{did_you_mean(kwargs[name], choices)}; pick one of those"
                )
        depth = kwargs.get("depth")
        if depth is not None and (
            isinstance(depth, bool) or not isinstance(depth, int) or depth < 0
        ):
            raise UsageError(f"draw(depth={depth!r}) must be a non-negative int or None")
        budget = kwargs.get("collapse_budget")
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
                raise UsageError(
                    f"draw(collapse_budget={budget!r}) must be a positive int (the most "
                    "visible nodes collapse='auto' aims for), e.g. collapse_budget=120"
                )
            if kwargs.get("collapse") != "auto":
                raise UsageError(
                    f"draw(collapse_budget={budget}) only applies to collapse='auto'; "
                    "add collapse='auto', or drop collapse_budget"
                )
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
