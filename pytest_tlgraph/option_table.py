"""The draw options as one table, read from their declarations in ``DrawOptions``.

The command line's flags (``tlgraph draw --color-by flops``), ``tlgraph draw --help`` and
the options reference in the user's guide are all generated from :func:`option_specs`,
which walks the fields of :class:`~pytest_tlgraph.options.DrawOptions` and their
declarations (:func:`~pytest_tlgraph.options.option`: help text and choices): an option
declared there gets a flag, a help line and a reference row without an edit here.
"""

from __future__ import annotations

import ast
import functools
import importlib
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any

from pytest_tlgraph.errors import UsageError
from pytest_tlgraph.options import Declared, DrawOptions

__all__ = ["OptionSpec", "markdown_list", "markdown_table", "option_specs", "parse_callable"]


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


def _kind(choices: tuple[object, ...] | None, hint: Any) -> tuple[str, tuple[str, ...], bool]:
    if choices is not None:
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
        declaration: Declared = field.metadata["option"]  # declared with options.option()
        kind, choices, takes_bool = _kind(declaration.choices, hints[field.name])
        specs.append(OptionSpec(field.name, default, kind, choices, declaration.help, takes_bool))
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


def markdown_list() -> str:
    """The one-paragraph list of draw options of docs/usage.md: each keyword, with its
    values where they are a choice (``view`` (``unrolled``/``rolled``))."""
    parts = []
    for spec in option_specs():
        values = "/".join(f"`{c}`" for c in spec.choices)
        parts.append(f"`{spec.name}` ({values})" if spec.kind == "choice" else f"`{spec.name}`")
    return "Draw options: " + ", ".join(parts) + ".\n"
