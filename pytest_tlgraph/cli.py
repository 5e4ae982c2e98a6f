"""``tlgraph`` (and ``python -m pytest_tlgraph``): draw a model, diff two snapshots, read
the last run's report, outside pytest. A thin layer over the public API.

Every error exits 2 with one line naming the cause and the remedy, without a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from pytest_tlgraph.cli_model import CommandError
from pytest_tlgraph.option_table import option_specs

__all__ = ["build_parser", "main"]

_DRAW_EXAMPLE = """example:
  tlgraph draw torchvision.models:resnet18 --input-shape 1,3,224,224 \\
      --collapse auto --color-by flops -o resnet18.png
  tlgraph draw models.py:Net -o net.gv        (inputs from Net().example_input_array)"""
_DIFF_EXAMPLE = """example:
  git show main:__snapshots__/test_zoo/test_mlp.gv | tlgraph diff - \\
      __snapshots__/test_zoo/test_mlp.gv -o mlp-diff.png"""
_REPORT_EXAMPLE = """example:
  tlgraph report                  (reads ./tlgraph-results)
  tlgraph report build/tlgraph    (the folder given to --tlgraph-results)"""
_OUTPUTS = (".gv", ".dot", ".png", ".svg")


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (cause and remedy), exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def _add_draw_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("draw options (the keywords of Trace.draw)")
    for spec in option_specs():
        dest = "draw_" + spec.name
        if spec.kind == "bool":
            group.add_argument(
                spec.flag,
                dest=dest,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=spec.full_help(),
            )
            continue
        kwargs: dict[str, Any] = {"metavar": spec.metavar}
        if spec.kind == "choice":
            kwargs = {"choices": spec.choices}
        group.add_argument(
            spec.flag, dest=dest, default=argparse.SUPPRESS, help=spec.full_help(), **kwargs
        )


def build_parser() -> argparse.ArgumentParser:
    """The ``tlgraph`` parser with its three commands."""
    parser = _Parser(
        prog="tlgraph",
        description="Draw PyTorch model graphs and their snapshot diffs (pytest-tlgraph).",
        epilog="run tlgraph COMMAND --help for a command's options and an example",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    raw = argparse.RawDescriptionHelpFormatter
    draw = commands.add_parser(
        "draw",
        help="draw a model",
        epilog=_DRAW_EXAMPLE,
        formatter_class=raw,
        description="Capture one forward pass of a model and draw it.",
    )
    draw.add_argument(
        "target",
        metavar="MODULE:FACTORY",
        help="the model: a module (or "
        ".py file) and a class or function that builds it with no arguments",
    )
    inputs = draw.add_mutually_exclusive_group()
    inputs.add_argument(
        "--input-shape",
        action="append",
        default=[],
        metavar="SHAPE",
        help="one random input of this shape, e.g. 1,3,224,224 (repeat for each positional input)",
    )
    inputs.add_argument(
        "--inputs",
        metavar="FILE.pt",
        help="inputs saved with torch.save: "
        "a tensor, a tuple of tensors, or a dict of keyword tensors",
    )
    draw.add_argument(
        "--dtype",
        action="append",
        default=[],
        help="dtype of the --input-shape inputs: once for all, or once per input (float32)",
    )
    draw.add_argument(
        "--backward", action="store_true", help="also run backward (needed for grad_norm)"
    )
    _add_output(draw)
    _add_draw_options(draw)
    diff = commands.add_parser(
        "diff",
        help="draw the structural diff of two DOT snapshots",
        epilog=_DIFF_EXAMPLE,
        formatter_class=raw,
        description="Draw what changed between two stored .gv "
        "snapshots: added nodes green, removed red and dashed, changed rows as - old / + new.",
    )
    diff.add_argument("old", metavar="OLD.gv", help="the old snapshot (- reads stdin)")
    diff.add_argument("new", metavar="NEW.gv", help="the new snapshot (- reads stdin)")
    _add_output(diff)
    report = commands.add_parser(
        "report",
        help="print where the last run's report is and its summary",
        epilog=_REPORT_EXAMPLE,
        formatter_class=raw,
        description="Print the path of report.html and the summary of every snapshot "
        "failure the last pytest run recorded.",
    )
    report.add_argument(
        "results",
        nargs="?",
        default="tlgraph-results",
        metavar="DIR",
        help="the results folder (default: tlgraph-results)",
    )
    return parser


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write a .gv, .png or .svg file (default: the DOT text on standard output)",
    )
    parser.add_argument(
        "--renderer",
        choices=("pure", "system"),
        default="pure",
        help="pure (graphviz-pure, identical on every machine) or system "
        "(Graphviz dot); default pure",
    )
    parser.add_argument("--dpi", type=int, default=96, help="PNG resolution (default 96)")


def _draw_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for spec in option_specs():
        dest = "draw_" + spec.name
        if not hasattr(args, dest):
            continue
        raw = getattr(args, dest)
        if spec.kind in ("bool", "choice"):
            options[spec.name] = raw
            continue
        try:
            options[spec.name] = spec.parse(raw)
        except (ValueError, ImportError) as error:
            cause = "" if spec.kind in ("int", "float") else f" ({error})"
            raise CommandError(
                f"bad {spec.flag} {raw!r}{cause}; expected {spec.values_text()}"
            ) from None
    return options


def _write(dot: str, output: str | None, renderer: str, dpi: int) -> None:
    from pytest_tlgraph.render import render_png, render_svg

    if output is None:
        sys.stdout.write(dot)
        return
    suffix = Path(output).suffix.lower()
    if suffix not in _OUTPUTS:
        raise CommandError(f"cannot write {output!r}: -o takes a .gv, .png or .svg path")
    if suffix in (".gv", ".dot"):
        data = dot.encode("utf-8")
    elif suffix == ".png":
        data = render_png(dot, renderer=renderer, dpi=dpi)
    else:
        data = render_svg(dot, renderer=renderer)
    try:
        Path(output).write_bytes(data)
    except OSError as error:
        raise CommandError(
            f"cannot write {output!r} ({error.strerror}); check the folder"
        ) from None
    print(f"wrote {output}")


def _run_draw(args: argparse.Namespace) -> None:
    import torch

    from pytest_tlgraph import capture
    from pytest_tlgraph.cli_model import load_inputs, load_model, parse_shape, random_inputs

    options = _draw_options(args)
    if args.dtype and not args.input_shape:
        raise CommandError("--dtype applies to --input-shape inputs; add --input-shape")
    for shape in args.input_shape:  # checked before the (slow) model import
        parse_shape(shape)
    model = load_model(args.target)
    kwargs: dict[str, Any] = {}
    if args.input_shape:
        inputs: Any = random_inputs(args.input_shape, args.dtype)
    elif args.inputs:
        inputs, kwargs = load_inputs(args.inputs)
    else:
        example = getattr(model, "example_input_array", None)
        if example is None:
            raise CommandError(
                f"{args.target} has no example_input_array; give --input-shape 1,3,224,224 "
                "(one per input) or --inputs FILE.pt"
            )
        inputs = example
        if isinstance(example, dict):
            inputs, kwargs = (), dict(example)
    model.eval()
    with torch.random.fork_rng(devices=[]):
        trace = capture(model, inputs, kwargs=kwargs, backward=args.backward)
    try:
        drawing = trace.draw(**options)
    except (TypeError, ValueError) as error:  # EncodingRefusal is a ValueError too
        raise CommandError(str(error)) from None
    _write(drawing.dot, args.output, args.renderer, args.dpi)


def _read_dot(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        cause = getattr(error, "strerror", None) or str(error)
        raise CommandError(f"cannot read {path!r} ({cause}); give a .gv snapshot file") from None


def _run_diff(args: argparse.Namespace) -> None:
    if args.old == "-" and args.new == "-":
        raise CommandError("only one of OLD and NEW can be - (standard input)")
    old, new = _read_dot(args.old), _read_dot(args.new)
    try:
        from pytest_tlgraph.snapshots import graph_diff
    except ImportError:
        raise CommandError(
            "this pytest-tlgraph has no structural diff drawing (graph_diff); upgrade "
            "pytest-tlgraph"
        ) from None
    from pytest_tlgraph.snapshots.graphdata import DotParseError, parse_dot
    from pytest_tlgraph.snapshots.report import summary_lines
    from pytest_tlgraph.snapshots.structure import summarize

    try:
        summary = summary_lines(summarize(parse_dot(old), parse_dot(new)))
        drawing = graph_diff(old, new)
    except (DotParseError, ValueError) as error:
        raise CommandError(
            f"cannot diff {args.old} and {args.new}: not tlgraph drawings ({error}); give "
            "two .gv snapshots written by pytest-tlgraph"
        ) from None
    _write(drawing.dot, args.output, args.renderer, args.dpi)
    if args.output is not None:
        print("\n".join(summary))


def _run_report(args: argparse.Namespace) -> None:
    from pytest_tlgraph.snapshots.artifacts import REPORT_NAME, ResultsDir

    root = Path(args.results)
    if root.exists() and not root.is_dir():
        raise CommandError(f"{args.results!r} is a file; give the results folder")
    records = ResultsDir(root).read_records()
    report = root / REPORT_NAME
    if not records:
        print(
            f"no snapshot failures recorded in {root}/: the last run passed, or ran with "
            "another --tlgraph-results folder"
        )
        return
    count = len(records)
    where = str(report) if report.is_file() else f"{report} (not written yet)"
    print(f"report: {where}")
    print(f"{count} snapshot failure{'s' if count != 1 else ''} in the last run:")
    for record in records:
        print(f"  {record.get('title', '?')}")
        for heading, lines in record.get("sections", ())[:1]:
            if heading.startswith("structure"):
                print("\n".join(f"    {line}" for line in lines))
        for kind, rel in record.get("images", {}).items():
            print(f"    {kind + ':':<9} {root / rel}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 on success, 2 (with one line on stderr) on an error."""
    from pytest_tlgraph.errors import TlgraphError

    args = build_parser().parse_args(argv)
    run = {"draw": _run_draw, "diff": _run_diff, "report": _run_report}[args.command]
    try:
        run(args)
    except (CommandError, TlgraphError) as error:
        first = str(error).strip().splitlines() or [type(error).__name__]
        print(f"tlgraph {args.command}: error: {first[0]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 0
