"""``tlgraph`` (and ``python -m pytest_tlgraph``): draw a model, diff two snapshots, read
(and merge) the last run's report, accept its failing calls one by one or review them
in the terminal, outside pytest. A thin layer over the public API.

Every error exits 2 with one line naming the cause and the remedy, without a traceback
(``tlgraph accept`` exits 1 when it refused a call and wrote the others).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from pytest_tlgraph.cli.model import CommandError
from pytest_tlgraph.draw.canvas import MAX_DPI, check_dpi
from pytest_tlgraph.option_table import option_specs
from pytest_tlgraph.render import RENDERERS
from pytest_tlgraph.snapshots.settings import setting

__all__ = ["build_parser", "main"]

_EXAMPLES = """examples:
  tlgraph draw models.py:Net --color-by flops -o net.png
  tlgraph diff old.gv new.gv -o diff.png
  tlgraph report
  tlgraph accept tests/test_models.py::test_cnn
  tlgraph review
run tlgraph COMMAND --help for a command's options and an example"""
_DRAW_EXAMPLE = """example:
  tlgraph draw torchvision.models:resnet18 --input-shape 1,3,224,224 \\
      --collapse auto --color-by flops -o resnet18.png
  tlgraph draw models.py:Net -o net.gv        (inputs from Net().example_input_array)"""
_DIFF_EXAMPLE = """example:
  git show main:__snapshots__/test_zoo/test_mlp.gv | tlgraph diff - \\
      __snapshots__/test_zoo/test_mlp.gv -o mlp-diff.png"""
_REPORT_EXAMPLE = """example:
  tlgraph report                  (reads ./tlgraph-results, or ../tlgraph-results ...)
  tlgraph report build/tlgraph    (the folder given to --tlgraph-results)
  tlgraph report shard-1/tlgraph-results shard-2/tlgraph-results -o merged
                                  (one report.html, summary.json, summary.md of both)"""
_ACCEPT_EXAMPLE = """example:
  tlgraph accept tests/test_models.py::test_cnn     (every failing call of that test)
  tlgraph accept 'tests/test_models.py::test_zoo[mlp]' --results build/tlgraph
  tlgraph accept --all                              (every failing call of the last run)
  tlgraph accept --results shard-1/tlgraph-results --results shard-2/tlgraph-results \\
      tests/test_models.py::test_cnn --call depth1  (one call, from CI shards)"""
_REVIEW_EXAMPLE = """example:
  tlgraph review                  (each pending call: a accept, s skip, q quit)
  tlgraph review --open --results shard-1/tlgraph-results --results shard-2/tlgraph-results"""


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
    """The ``tlgraph`` parser with its five commands."""
    parser = _Parser(
        prog="tlgraph",
        description="Draw PyTorch model graphs and their snapshot diffs (pytest-tlgraph).",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for add in (_add_draw, _add_diff, _add_report, _add_accept, _add_review):
        add(commands)
    return parser


def _add_draw(commands: argparse._SubParsersAction[_Parser]) -> None:
    """``tlgraph draw``: capture a model and draw it."""
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


def _add_diff(commands: argparse._SubParsersAction[_Parser]) -> None:
    """``tlgraph diff``: the structural diff of two DOT snapshots."""
    raw = argparse.RawDescriptionHelpFormatter
    diff = commands.add_parser(
        "diff",
        help="draw the structural diff of two DOT snapshots",
        epilog=_DIFF_EXAMPLE,
        formatter_class=raw,
        description="Draw what changed between two stored .gv snapshots: added nodes green,\n"
        "removed red and dashed, changed rows as - old / + new.",
    )
    diff.add_argument("old", metavar="OLD.gv", help="the old snapshot (- reads stdin)")
    diff.add_argument("new", metavar="NEW.gv", help="the new snapshot (- reads stdin)")
    diff.add_argument(
        "--full",
        action="store_true",
        help="draw the whole union of both graphs (default: the changes and a few hops "
        "around them, each run of other unchanged nodes one grey node)",
    )
    _add_output(diff)


def _add_report(commands: argparse._SubParsersAction[_Parser]) -> None:
    """``tlgraph report``: the last run's report and summary; merged shards."""
    raw = argparse.RawDescriptionHelpFormatter
    report = commands.add_parser(
        "report",
        help="print where the last run's report is and its summary; merge CI shards",
        epilog=_REPORT_EXAMPLE,
        formatter_class=raw,
        description="Print the path of report.html and the summary of every snapshot failure\n"
        "the last pytest run recorded. Several results folders (the shards of a CI run)\n"
        "are merged into one report.html, summary.json and summary.md (-o).",
    )
    report.add_argument(
        "results",
        nargs="*",
        default=[],
        metavar="DIR",
        help="the results folder (default: tlgraph-results, here or in the nearest "
        "parent folder that has one); exit 2 when there is none. Several folders (the "
        "shards of a CI run) are merged: each call once, with the shard it came from",
    )
    report.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="OUT",
        help="the folder a merge writes report.html, summary.json and summary.md into "
        "(default: tlgraph-merged when several DIRs are given); a report already there "
        "is kept unless --overwrite is given",
    )
    report.add_argument(
        "--overwrite",
        action="store_true",
        help="let a merge replace report.html, summary.json and summary.md in OUT",
    )


def _add_accept(commands: argparse._SubParsersAction[_Parser]) -> None:
    """``tlgraph accept``: write chosen failing calls' received drawings."""
    raw = argparse.RawDescriptionHelpFormatter
    accept = commands.add_parser(
        "accept",
        help="write the received drawings of chosen failing calls into their snapshots",
        epilog=_ACCEPT_EXAMPLE,
        formatter_class=raw,
        description="Accept failing tlgraph_snapshot calls of the last pytest run one by "
        "one:\nwrite each call's received .gv and .png into its snapshot files (both or "
        "neither),\nand nothing else. tlgraph report lists the calls pending review.",
    )
    accept.add_argument(
        "nodeids",
        nargs="*",
        metavar="NODEID",
        help="a test's node id as pytest prints it (every failing call of it), or a file "
        "or tests/file.py::test above it",
    )
    accept.add_argument("--all", action="store_true", help="accept every failing call")
    accept.add_argument(
        "--call",
        default=None,
        metavar="NAME",
        help="only the call of that name= (or snapshot name, test_x.1) of the tests named",
    )
    _add_results(accept)


def _add_review(commands: argparse._SubParsersAction[_Parser]) -> None:
    """``tlgraph review``: walk the pending calls one at a time."""
    raw = argparse.RawDescriptionHelpFormatter
    review = commands.add_parser(
        "review",
        help="walk the pending calls one at a time: accept, skip or quit",
        epilog=_REVIEW_EXAMPLE,
        formatter_class=raw,
        description="Show each call pending review (its story and the paths of its diff\n"
        "drawings) and ask: a accept (write its .gv and .png, both or neither), s skip,\n"
        "q quit. Nothing is written until a call is accepted; tlgraph accept does the\n"
        "same without asking.",
    )
    review.add_argument(
        "--open", action="store_true", help="open each call's diff drawings in the image viewer"
    )
    _add_results(review)


def _add_results(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results",
        action="append",
        default=None,
        metavar="DIR",
        help="a results folder (default: tlgraph-results, here or in the nearest parent "
        "folder that has one); repeat it for the shards of a CI run",
    )


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write a .gv, .png or .svg file (default: the DOT text on standard output)",
    )
    parser.add_argument(
        "--renderer",
        choices=RENDERERS,
        default=setting("renderer").default,
        help="pure (graphviz-pure, identical on every machine) or system "
        "(Graphviz dot); default pure",
    )
    parser.add_argument(
        "--dpi", type=_dpi, default=96, help=f"PNG resolution, 1 to {MAX_DPI} (default 96)"
    )


def _dpi(text: str) -> int:
    """``--dpi``: a whole number from 1 to ``MAX_DPI``, checked before any capture."""
    try:
        return check_dpi(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad --dpi {text!r}: give a whole number from 1 to {MAX_DPI}, e.g. --dpi 96"
        ) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; 0 on success, 2 (with one line on stderr) on an error."""
    from pytest_tlgraph.cli.accept import run_accept
    from pytest_tlgraph.cli.commands import run_diff, run_draw, run_report
    from pytest_tlgraph.cli.output import say
    from pytest_tlgraph.cli.review import run_review
    from pytest_tlgraph.errors import TlgraphError

    args = build_parser().parse_args(argv)
    runs: dict[str, Callable[[argparse.Namespace], int | None]] = {
        "draw": run_draw, "diff": run_diff, "report": run_report, "accept": run_accept,
        "review": run_review,
    }  # fmt: skip
    try:
        code = runs[args.command](args)
    except (CommandError, TlgraphError) as error:
        first = str(error).strip().splitlines() or [type(error).__name__]
        say(f"tlgraph {args.command}: error: {first[0]}", file=sys.stderr)
        return 2
    except SystemExit as error:  # the model's own code exited (import, factory, forward)
        say(f"tlgraph {args.command}: error: {_exited(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return code or 0


def _exited(error: SystemExit) -> str:
    """The one line for a model whose code called ``sys.exit()`` while a command ran:
    the command stops there, writes nothing, and never exits 0 for it."""
    return (
        f"the model's code called sys.exit({error.code!r}) (importing its module, building "
        "it or running forward), so nothing was written; keep the module's script part "
        "under if __name__ == '__main__':"
    )
