"""The option table is DrawOptions: one flag per field, values that Trace.draw takes."""

from __future__ import annotations

import collections.abc
import dataclasses
import types
import typing
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from pytest_tlgraph import capture
from pytest_tlgraph.cli import build_parser
from pytest_tlgraph.cli import commands as cli_commands
from pytest_tlgraph.node_styles import attention_node_mode
from pytest_tlgraph.option_table import OptionSpec, markdown_table, option_specs
from pytest_tlgraph.options import DrawOptions, declared, option

#: One flag value per kind, and the Python value it must become.
SAMPLES: dict[str, tuple[str, Any]] = {
    "depth": ("1", 1),
    "color_by": ("flops", "flops"),
    "size_by": ("bytes", "bytes"),
    "size_scale": ("linear", "linear"),
    "node_label_fields": ("name,shape", ("name", "shape")),
    "node_spec_fn": ("attention_node_mode", attention_node_mode),
    "stack_by": ("true", True),
}
#: Options added later get a sample from their kind.
BY_KIND: dict[str, tuple[str, Any]] = {
    "int": ("2", 2),
    "float": ("0.5", 0.5),
    "list": ("name", ("name",)),
    "literal": ("3", 3),
}


def _draw_dests(argv: list[str]) -> dict[str, Any]:
    args = build_parser().parse_args(["draw", "m:f", *argv])
    return {k[5:]: v for k, v in vars(args).items() if k.startswith("draw_")}


def test_every_draw_option_is_a_flag_in_field_order() -> None:
    names = [spec.name for spec in option_specs()]
    assert names == [f.name for f in dataclasses.fields(DrawOptions)]
    flags = {action.dest: action.option_strings for action in _draw_parser()._actions}
    for spec in option_specs():
        assert spec.flag in flags["draw_" + spec.name]


def _draw_parser() -> Any:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices["draw"]


def test_defaults_come_from_the_dataclass() -> None:
    defaults = DrawOptions()
    for spec in option_specs():
        assert spec.default == getattr(defaults, spec.name)


def test_each_option_is_declared_once_with_its_help_choices_and_check() -> None:
    for field in dataclasses.fields(DrawOptions):
        declaration = declared(field.name)
        assert field.metadata["option"] is declaration
        assert declaration.help and declaration.check is not None, field.name
    specs = {spec.name: spec for spec in option_specs()}
    assert specs["size_scale"].choices == ("sqrt", "linear")
    assert specs["layout"].choices == ("auto", "dot")
    assert specs["collapse"].choices == ("auto", "max")  # None is the unset default


def test_an_option_added_to_drawoptions_gets_a_flag_without_edits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stand-in for a field another change adds: typed like the existing ones.
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Wider:
        view: str = option("unrolled", help="the view", choices=("unrolled", "rolled"))
        budget: int | None = option(None, help="a budget")
        ratio: float = option(0.5, help="a ratio")
        tags: tuple[str, ...] | None = option(None, help="some tags")

    from pytest_tlgraph import option_table

    monkeypatch.setattr(option_table, "DrawOptions", Wider)
    option_table.option_specs.cache_clear()
    try:
        specs = {s.name: s for s in option_table.option_specs()}
    finally:
        monkeypatch.undo()
        option_table.option_specs.cache_clear()
    assert specs["budget"].flag == "--budget"
    assert specs["budget"].parse("200") == 200
    assert specs["ratio"].parse("0.25") == 0.25
    assert specs["tags"].parse("a, b") == ("a", "b")
    assert "budget" in specs["budget"].full_help()


@pytest.mark.parametrize("spec", option_specs(), ids=lambda s: s.name)
def test_each_flag_parses_to_what_draw_accepts(spec: OptionSpec) -> None:
    if spec.kind == "choice":
        argv, expected = [spec.flag, spec.choices[-1]], spec.choices[-1]
    elif spec.kind == "bool":
        argv, expected = (
            [f"--no-{spec.flag[2:]}" if spec.default else spec.flag],
            (not spec.default),
        )
    else:
        text, expected = SAMPLES.get(spec.name) or BY_KIND.get(
            spec.kind, (str(spec.default), spec.default)
        )
        argv = [spec.flag, text]
    raw = _draw_dests(argv)[spec.name]
    value = raw if spec.kind in ("choice", "bool") else spec.parse(raw)
    assert value == expected
    # The value has the field's type, and DrawOptions' own checks take it (options whose
    # checks need a second option, such as a budget that needs collapse, are typed only).
    assert _fits(value, typing.get_type_hints(DrawOptions)[spec.name]), (value, spec.name)
    if spec.kind == "choice":
        assert getattr(DrawOptions.from_kwargs(**{spec.name: value}), spec.name) == value


def _fits(value: Any, hint: Any) -> bool:
    args = (
        typing.get_args(hint)
        if typing.get_origin(hint) in (typing.Union, types.UnionType)
        else (hint,)
    )
    for arg in args:
        origin = typing.get_origin(arg) or arg
        if origin is collections.abc.Callable and callable(value):
            return True
        plain = isinstance(origin, type) and origin is not collections.abc.Callable
        if plain and isinstance(value, origin) and (type(value) is not bool or origin is bool):
            return True
    return False


def test_unset_flags_leave_draws_defaults() -> None:
    assert _draw_dests([]) == {}


def test_none_turns_an_optional_option_off() -> None:
    depth = next(s for s in option_specs() if s.name == "depth")
    assert depth.parse("none") is None
    with pytest.raises(ValueError):
        depth.parse("two")


def test_flags_draw_what_the_keywords_draw() -> None:
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 2))).eval()
    trace = capture(model, torch.zeros(1, 4))
    argv = ["--depth", "1", "--color-by", "bytes", "--direction", "leftright", "--no-show-legend"]
    options = cli_commands.draw_options(build_parser().parse_args(["draw", "m:f", *argv]))
    assert options == {
        "depth": 1,
        "color_by": "bytes",
        "direction": "leftright",
        "show_legend": False,
    }
    expected = trace.draw(depth=1, color_by="bytes", direction="leftright", show_legend=False)
    assert trace.draw(**options).dot == expected.dot


def test_reference_table_has_a_row_per_option() -> None:
    table = markdown_table().splitlines()
    assert len(table) == 2 + len(option_specs())
    for spec, row in zip(option_specs(), table[2:], strict=True):
        assert row.startswith(f"| `{spec.flag}`")
        assert f"`{spec.name}`" in row


def test_the_usage_option_list_is_generated_from_the_declarations() -> None:
    import sys

    scripts = str(Path(__file__).resolve().parents[2] / "scripts")
    sys.path.insert(0, scripts)
    try:
        from render_options_reference import USAGE, with_list
    finally:
        sys.path.remove(scripts)
    text = USAGE.read_text(encoding="utf-8")
    assert with_list(text) == text, "stale: run python scripts/render_options_reference.py"
    listed = text.split("<!-- draw-options:start -->")[1].split("<!-- draw-options:end -->")[0]
    assert [f"`{f.name}`" in listed for f in dataclasses.fields(DrawOptions)] == [True] * len(
        dataclasses.fields(DrawOptions)
    )
