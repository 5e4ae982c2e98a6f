"""The keyword-only options of ``Trace.draw``, each declared once.

Every option is one field of :class:`DrawOptions`, declared with :func:`option`: its
name and type (the field), its default, its help text, its accepted values (``choices``,
which the command line and the reference also list) and its ``check`` (which refuses a
bad value naming the option, the value and the remedy, and returns the value as drawing
reads it). The command line's flags, ``tlgraph draw --help`` and the options reference
of docs/guide.md are generated from these declarations (:mod:`pytest_tlgraph.option_table`);
whether a drawing is volatile or reads magnitudes follows from its resolved sources
(:class:`pytest_tlgraph.draw.request.DrawRequest`, which parses the options once).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.suggest import did_you_mean

__all__ = [
    "LAYOUTS",
    "SIZE_SCALES",
    "SOURCE_OPTIONS",
    "Declared",
    "DrawOptions",
    "NodeSpecFn",
    "Source",
    "declared",
    "is_auto",
    "option",
]

#: A value source: builtin token, field name, or ``callable(record) -> number``.
Source = str | Callable[[Any], Any]
#: ``node_spec_fn(node, spec) -> spec or None``, applied last.
NodeSpecFn = Callable[[Any, dict[str, Any]], "dict[str, Any] | None"]

#: The accepted ``layout`` values: both mean dot, which draws every graph.
LAYOUTS: Final = ("auto", "dot")
#: How ``size_by`` maps values to area.
SIZE_SCALES: Final = ("sqrt", "linear")
#: The options whose value is a value source (a token, a field name or a callable).
SOURCE_OPTIONS: Final = ("color_by", "size_by", "stack_by")

#: ``check(name, value) -> value as drawing reads it``; raises on a bad value.
Check = Callable[[str, Any], Any]


@dataclass(frozen=True, slots=True)
class Declared:
    """What an option declares besides its name, type and default."""

    help: str
    choices: tuple[object, ...] | None = None
    check: Check | None = None


def option(
    default: Any,
    *,
    help: str,
    choices: tuple[object, ...] | None = None,
    check: Check | None = None,
) -> Any:
    """One option's declaration, as the default of its :class:`DrawOptions` field."""
    return dataclasses.field(default=default, metadata={"option": Declared(help, choices, check)})


def declared(name: str) -> Declared:
    """The declaration of the option ``name`` (``KeyError`` if there is none)."""
    return _DECLARED[name]


def is_auto(stack_by: Any) -> bool:
    """Whether ``stack_by`` asks for the derived ``pass_number`` annotation."""
    return stack_by is True or (isinstance(stack_by, str) and stack_by == "auto")


def _refuse_type(name: str, value: object, accepted: str) -> None:
    raise TypeError(f"draw({name}={value!r}) is not accepted; {name} takes {accepted}")


def _flag(name: str, value: Any) -> Any:
    if not isinstance(value, bool):
        _refuse_type(name, value, "True or False")
    return value


def _one_of(name: str, value: Any) -> Any:
    choices = _DECLARED[name].choices or ()
    if value not in choices:
        raise UsageError(
            f"draw({name}={value!r}) is not one of {choices}"
            f"{did_you_mean(value, choices)}; pick one of those"
        )
    return value


def _layout(name: str, layout: Any) -> Any:
    """Refuse a ``layout`` other than :data:`LAYOUTS`. 0.1's ``rank`` layout was slower
    than dot on every graph measured and is gone (docs/decisions.md)."""
    if layout in LAYOUTS:
        return layout
    if layout == "rank":
        raise UsageError(
            "draw(layout='rank') was removed: it was slower than dot on every graph "
            "measured. Drop layout= (dot draws every graph) and make a large graph small "
            "with collapse='auto' or depth=N"
        )
    raise UsageError(f"draw(layout={layout!r}) is not one of {LAYOUTS}; pick one of those")


def _depth(name: str, depth: Any) -> Any:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise UsageError(f"draw(depth={depth!r}) must be a non-negative int or None")
    return depth


def _budget(name: str, budget: Any) -> Any:
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
    ):
        raise UsageError(
            f"draw(collapse_budget={budget!r}) must be a positive int (the most "
            "visible nodes collapse='auto' aims for), e.g. collapse_budget=120"
        )
    return budget


def _source(name: str, value: Any) -> Any:
    # False means "off", exactly like None; the source itself is resolved (and an
    # unknown one refused) by the request, which reads the trace's record fields.
    return None if value is False else value


def _scale_type(name: str, value: Any) -> Any:
    # Its value is refused with the channels' refusal, after size_by is known.
    if not isinstance(value, (str, type(None))):
        _refuse_type(name, value, "None, 'sqrt' or 'linear'")
    return value


def _label_fields(name: str, value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, (str, Iterable)):
        _refuse_type(name, value, "None or a list of str tokens")
    if isinstance(value, str):
        raise TypeError("node_label_fields takes a list of tokens, not one string")
    # The tokens themselves are checked where the rows are written (EncodingRefusal).
    return tuple(value)


def _spec_fn(name: str, value: Any) -> Any:
    if value is not None and not callable(value):
        _refuse_type(name, value, "None or a callable (node, spec) -> spec or None")
    return value


_VIEWS: Final = ("unrolled", "rolled")
_DIRECTIONS: Final = ("bottomup", "topdown", "leftright")
_COLLAPSES: Final = (None, "auto", "max")
_PAGES: Final = ("light", "dark")


@dataclass(frozen=True, kw_only=True, slots=True)
class DrawOptions:
    """Every draw option with its default, declared once (:func:`option`). Build it
    from keywords with :meth:`from_kwargs`."""

    view: str = option(
        "unrolled",
        help="unrolled draws one node per op call; rolled draws one node per layer",
        choices=_VIEWS,
        check=_one_of,
    )
    direction: str = option(
        "bottomup", help="which way the graph flows", choices=_DIRECTIONS, check=_one_of
    )
    layout: str = option(
        "auto",
        help="the layout engine: both values draw with dot (0.1's rank layout is gone)",
        choices=LAYOUTS,
        check=_layout,
    )
    depth: int | None = option(
        None,
        help="draw every module call nested deeper than N as one box (0 boxes every "
        "top-level call)",
        check=_depth,
    )
    collapse: str | None = option(
        None,
        help="auto picks the deepest depth that fits the node budget and folds "
        "repeated blocks; max boxes every top-level call",
        choices=_COLLAPSES,
        check=_one_of,
    )
    collapse_budget: int | None = option(
        None,
        help="with collapse='auto': the most visible nodes the drawing may have "
        "after folding (default 60)",
        check=_budget,
    )
    color_by: Source | None = option(
        None,
        help="fill colour channel: a builtin source (time, bytes, flops, params, "
        "magnitude, grad_norm, device_time) or an op field name",
        check=_source,
    )
    size_by: Source | None = option(
        None,
        help="node area channel: a builtin source (as color_by, plus dims) or a field name",
        check=_source,
    )
    stack_by: bool | Source | None = option(
        None,
        help="rank columns: true (or auto) pins multi-pass ops of one pass together; "
        "or a field name",
        check=_source,
    )
    size_scale: str | None = option(
        None,
        help="how size_by maps values to area: sqrt (when size_by is set) or linear",
        choices=SIZE_SCALES,
        check=_scale_type,
    )
    page: str = option("light", help="page palette", choices=_PAGES, check=_one_of)
    show_legend: bool = option(True, help="draw the key of the active channels", check=_flag)
    node_label_fields: tuple[str, ...] | None = option(
        None,
        help="the label rows, in order, from: name, op, shape, dtype, "
        "shape_summary, bytes, args, params, module, pass, flops",
        check=_label_fields,
    )
    show_saved_for_backward: bool = option(
        False, help="add a row with the memory saved for backward", check=_flag
    )
    show_redundant_args: bool = option(
        False,
        help="show every captured constructor arg: those at their default and "
        "those the checked suppression would hide",
        check=_flag,
    )
    node_spec_fn: NodeSpecFn | None = option(
        None,
        help="a node style applied last: a name from pytest_tlgraph.node_styles "
        "(attention_node_mode) or MODULE:FUNCTION",
        check=_spec_fn,
    )

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> DrawOptions:
        """Check every keyword with its option's declared check; unknown names raise
        ``TypeError``, bad values ``TypeError`` or ``ValueError`` naming the option."""
        unknown = sorted(set(kwargs) - _DECLARED.keys())
        if unknown:
            raise TypeError(
                f"draw() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}"
                f"{did_you_mean(unknown[0], _DECLARED)}; "
                f"valid options are: {', '.join(sorted(_DECLARED))}"
            )
        checked = {}
        for name, value in kwargs.items():
            check = _DECLARED[name].check
            checked[name] = value if check is None else check(name, value)
        budget = checked.get("collapse_budget")
        if budget is not None and checked.get("collapse") != "auto":
            raise UsageError(
                f"draw(collapse_budget={budget}) only applies to collapse='auto'; "
                "add collapse='auto', or drop collapse_budget"
            )
        return cls(**checked)

    @property
    def channels(self) -> tuple[str, ...]:
        """Names of the active channels, in a fixed order."""
        return tuple(name for name in SOURCE_OPTIONS if getattr(self, name) is not None)


#: Option name -> its declaration, in field order.
_DECLARED: Final[Mapping[str, Declared]] = {
    field.name: field.metadata["option"] for field in fields(DrawOptions)
}
