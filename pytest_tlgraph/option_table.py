"""The draw options as one table: read from ``DrawOptions`` itself, plus their help texts.

The command line's flags (``tlgraph draw --color-by flops``) and the options reference
in the user's guide are both generated from :func:`option_specs`, which walks the
fields of :class:`~pytest_tlgraph.options.DrawOptions`: an option added there gets a
flag and a reference row without an edit here. Only the help texts are written by hand
(:data:`HELP`); an option without one is described from its type and default.
"""

from __future__ import annotations

import ast
import functools
import importlib
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, Final

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.options import _CHOICES, LAYOUTS, DrawOptions

__all__ = ["HELP", "OptionSpec", "markdown_table", "option_specs", "parse_callable"]

#: One sentence per option: what it does (values and default are added from the table).
HELP: Final = {
    "view": "unrolled draws one node per op call; rolled draws one node per layer",
    "direction": "which way the graph flows",
    "layout": "the layout engine: both values draw with dot (0.1's rank layout is gone)",
    "depth": "draw every module call nested deeper than N as one box (0 boxes every "
    "top-level call)",
    "collapse": "auto picks the deepest depth that fits the node budget and folds "
    "repeated blocks; max boxes every top-level call",
    "collapse_budget": "with collapse='auto': the most visible nodes the drawing may have "
    "after folding (default 60)",
    "color_by": "fill colour channel: a builtin source (time, bytes, flops, params, "
    "magnitude, grad_norm, device_time) or an op field name",
    "size_by": "node area channel: a builtin source (as color_by, plus dims) or a field name",
    "stack_by": "rank columns: true (or auto) pins multi-pass ops of one pass together; "
    "or a field name",
    "size_scale": "how size_by maps values to area: sqrt (when size_by is set) or linear",
    "page": "page palette",
    "show_legend": "draw the key of the active channels",
    "node_label_fields": "the label rows, in order, from: name, op, shape, dtype, "
    "shape_summary, bytes, args, params, module, pass, flops",
    "show_saved_for_backward": "add a row with the memory saved for backward",
    "show_redundant_args": "show every captured constructor arg: those at their default and "
    "those the checked suppression would hide",
    "node_spec_fn": "a node style applied last: a name from pytest_tlgraph.node_styles "
    "(attention_node_mode) or MODULE:FUNCTION",
}


#: Values of options that ``DrawOptions`` leaves to a later stage to check.
_MORE_CHOICES: Final = {"size_scale": ("sqrt", "linear"), "layout": LAYOUTS}


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One draw option: its ``DrawOptions`` field, command-line flag and value kind.

    ``kind`` is ``choice``, ``bool``, ``int``, ``float``, ``text``, ``source`` (a token
    or field name; ``true``/``false`` too when the option takes a bool), ``list``
    (comma-separated), ``callable`` (a name or ``MODULE:FUNCTION``) or ``literal``
    (a Python literal, else the text itself).
    """

    name: str
    default: object
    kind: str
    choices: tuple[str, ...]
    help: str
    takes_bool: bool = False

    @property
    def flag(self) -> str:
        """``--color-by`` for ``color_by``."""
        return "--" + self.name.replace("_", "-")

    @property
    def metavar(self) -> str:
        """What the flag's value looks like in ``--help``."""
        return {"int": "N", "float": "X", "list": "A,B,..", "callable": "FN"}.get(
            self.kind, "VALUE"
        )

    def parse(self, text: str) -> object:
        """The Python value ``Trace.draw`` takes for the flag's ``text``."""
        lowered = text.strip().lower()
        if lowered == "none" and self.default is None:
            return None
        if self.kind == "choice":
            if text not in self.choices:
                raise UsageError(f"{text!r} is not one of {', '.join(self.choices)}")
            return text
        if self.kind == "int":
            return int(text)
        if self.kind == "float":
            return float(text)
        if self.kind == "list":
            return tuple(part.strip() for part in text.split(",") if part.strip())
        if self.kind == "callable":
            return parse_callable(text)
        if self.takes_bool and lowered in ("true", "false"):
            return lowered == "true"
        if self.kind == "literal":
            try:
                return ast.literal_eval(text)
            except (ValueError, SyntaxError):
                return text
        return text

    def values_text(self) -> str:
        """The values column of the reference, e.g. ``rolled | unrolled``."""
        described = {
            "bool": "true / false",
            "int": "int",
            "float": "number",
            "source": "token or field name" + (" / true" if self.takes_bool else ""),
            "text": "text",
            "list": "comma-separated tokens",
            "callable": "name or MODULE:FUNCTION",
            "literal": "Python literal",
        }
        return " / ".join(self.choices) if self.kind == "choice" else described[self.kind]

    def full_help(self) -> str:
        """The help text with its default, as ``--help`` prints it."""
        default = "none" if self.default is None else str(self.default).lower()
        if isinstance(self.default, str):
            default = self.default
        return f"{self.help} (default: {default})"


def _kind(name: str, hint: Any) -> tuple[str, tuple[str, ...], bool]:
    if name in _CHOICES or name in _MORE_CHOICES:
        choices = _CHOICES.get(name) or _MORE_CHOICES[name]
        return "choice", tuple(str(c) for c in choices if c is not None), False
    args = typing.get_args(hint) if _is_union(hint) else (hint,)
    present = [a for a in args if a is not type(None)]
    takes_bool = bool in present
    if present == [bool]:
        return "bool", (), False
    if present == [str]:
        return "text", (), False
    if str in present:
        return "source", (), takes_bool
    if present and all(_is_callable(a) for a in present):
        return "callable", (), False
    if present == [int]:
        return "int", (), False
    if present in ([float], [int, float], [float, int]):
        return "float", (), False
    if len(present) == 1 and typing.get_origin(present[0]) in (tuple, list):
        return "list", (), False
    return "literal", (), takes_bool


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _is_callable(hint: Any) -> bool:
    import collections.abc

    return typing.get_origin(hint) is collections.abc.Callable or hint is Callable


@functools.cache
def option_specs() -> tuple[OptionSpec, ...]:
    """Every draw option, in ``DrawOptions`` field order."""
    hints = typing.get_type_hints(DrawOptions)
    specs = []
    for field in fields(DrawOptions):
        default = None if field.default is MISSING else field.default
        kind, choices, takes_bool = _kind(field.name, hints[field.name])
        text = HELP.get(field.name) or f"the draw option {field.name}"
        specs.append(OptionSpec(field.name, default, kind, choices, text, takes_bool))
    return tuple(specs)


def parse_callable(text: str) -> Callable[..., Any]:
    """``attention_node_mode`` (from ``pytest_tlgraph.node_styles``) or ``pkg.mod:func``."""
    module_name, _, attr = text.rpartition(":")
    module = importlib.import_module(module_name or "pytest_tlgraph.node_styles")
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise UsageError(f"{module.__name__} has no attribute {attr!r}") from None
    if not callable(value):
        raise UsageError(f"{text} is not callable")
    return typing.cast("Callable[..., Any]", value)


def markdown_table() -> str:
    """The options reference of the user's guide: flag, ``Trace.draw`` keyword, values,
    default and meaning, one row per option."""
    rows = [
        "| flag | `Trace.draw` keyword | values | default | meaning |",
        "|---|---|---|---|---|",
    ]
    for spec in option_specs():
        flag = (
            f"`{spec.flag}`" if spec.kind != "bool" else f"`{spec.flag}` / `--no-{spec.flag[2:]}`"
        )
        default = "`None`" if spec.default is None else f"`{spec.default!r}`"
        values = spec.values_text().replace("|", "\\|")
        rows.append(f"| {flag} | `{spec.name}` | {values} | {default} | {spec.help} |")
    return "\n".join(rows) + "\n"
