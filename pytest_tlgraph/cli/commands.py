"""The ``tlgraph`` commands themselves: each takes the parsed arguments, does its work
through the public API, and raises :class:`CommandError` (one line) when it cannot."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_tlgraph.cli.model import CommandError
from pytest_tlgraph.cli.output import say
from pytest_tlgraph.diff.view.context import CONTEXT_HOPS
from pytest_tlgraph.escaping import reviewer
from pytest_tlgraph.option_table import option_specs
from pytest_tlgraph.paths import display_path

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_tlgraph.draw import Drawing
    from pytest_tlgraph.review.merge import MergedCall, Shard

__all__ = [
    "PROJECT_MARKERS",
    "draw_options",
    "project_root",
    "results_folder",
    "run_diff",
    "run_draw",
    "run_report",
    "shards_of",
    "shown",
]

_OUTPUTS = (".gv", ".dot", ".png", ".svg")
_DEFAULT_RESULTS = "tlgraph-results"
#: What marks a project's root folder (as pytest finds its rootdir).
PROJECT_MARKERS = (".git", "pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_DRAW_REMEDY = "draw fewer nodes with --collapse auto or --depth N, or write a .gv or .svg"
_DIFF_REMEDY = "write the diff as a .gv or .svg instead (-o diff.svg)"


def draw_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``Trace.draw`` keywords of the draw flags given (unset flags are left out)."""
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


def _write(drawing: Drawing, output: str | None, renderer: str, dpi: int, remedy: str) -> None:
    """Write the drawing's DOT, SVG or PNG; a PNG goes through the size guard (estimated
    before rendering, then read from the rendered image), as the fixture's do, and is
    refused with ``remedy`` when over its limits."""
    from pytest_tlgraph.draw.canvas import canvas_problem, png_problem
    from pytest_tlgraph.render import render_png, render_svg

    if output is None:
        sys.stdout.write(drawing.dot)
        return
    suffix = Path(output).suffix.lower()
    if suffix not in _OUTPUTS:
        raise CommandError(f"cannot write {output!r}: -o takes a .gv, .png or .svg path")
    if suffix in (".gv", ".dot"):
        data = drawing.dot.encode("utf-8")
    elif suffix == ".png":
        problem = canvas_problem(drawing, dpi, remedy)
        if problem is not None:
            raise CommandError(problem)
        data = render_png(drawing.dot, renderer=renderer, dpi=dpi)
        problem = png_problem(data, "PNG", remedy)
        if problem is not None:  # the estimate read low; nothing is written
            raise CommandError(problem)
    else:
        data = render_svg(drawing.dot, renderer=renderer)
    from pytest_tlgraph.disk.files import SnapshotWriteError, atomic_write

    try:  # never through a link, never into a FIFO or a device
        atomic_write(Path(output), data)
    except SnapshotWriteError as error:
        if error.reason is None:  # refused: a link, a FIFO, a file in the way
            raise CommandError(str(error)) from None
        raise CommandError(f"cannot write {output!r} ({error.reason}); check the folder") from None
    say(f"wrote {reviewer(output)}")  # as given, on one line


def run_draw(args: argparse.Namespace) -> None:
    """``tlgraph draw``: load the model and its inputs, capture, draw, write."""
    from pytest_tlgraph.capture.eval_capture import capture_in_eval_mode
    from pytest_tlgraph.cli.model import load_inputs, load_model, parse_shape, random_inputs
    from pytest_tlgraph.draw import draw_request
    from pytest_tlgraph.draw.request import DrawRequest

    try:  # checked before the (slow) model import and capture
        request = DrawRequest.parse(draw_options(args))
    except (TypeError, ValueError) as error:  # EncodingRefusal is a ValueError too
        raise CommandError(str(error)) from None
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
    # The fixture's capture: eval mode through the flags, model and RNG restored.
    trace = capture_in_eval_mode(
        model, inputs, kwargs, backward=args.backward, magnitudes=request.reads_magnitudes
    )
    try:
        drawing = draw_request(trace, request)
    except (TypeError, ValueError) as error:  # EncodingRefusal is a ValueError too
        raise CommandError(str(error)) from None
    _write(drawing, args.output, args.renderer, args.dpi, _DRAW_REMEDY)


def _read_dot(path: str) -> str:
    """The text of a ``.gv`` given to ``tlgraph diff`` (``-``: standard input): a
    regular file of bounded size (``disk.bounded``), never a FIFO or a device."""
    from pytest_tlgraph.disk.bounded import read_regular, read_stream

    try:
        data = read_stream() if path == "-" else read_regular(path)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        cause = getattr(error, "strerror", None) or str(error)
        raise CommandError(f"cannot read {path!r} ({cause}); give a .gv snapshot file") from None


def run_diff(args: argparse.Namespace) -> int:
    """``tlgraph diff``: the structural diff drawing of two snapshots, and its summary.
    Exits as diff(1) does: 1 when the two files differ, 0 when they are the same, 2
    (:class:`CommandError`) on trouble."""
    if args.old == "-" and args.new == "-":
        raise CommandError("only one of OLD and NEW can be - (standard input)")
    old, new = _read_dot(args.old), _read_dot(args.new)
    try:
        from pytest_tlgraph.diff.view.comparison import compare
        from pytest_tlgraph.diff.view.drawing import draw_comparison
    except ImportError:
        raise CommandError(
            "this pytest-tlgraph has no structural diff drawing (diff.view); upgrade pytest-tlgraph"
        ) from None
    from pytest_tlgraph.diff.view.story import recolour_line, story_lines

    try:
        comparison = compare(old, new)
    except ValueError as error:  # DotParseError names the side and the line
        raise CommandError(
            f"cannot diff {args.old} and {args.new}: not tlgraph drawings ({error}); give "
            "two .gv snapshots written by pytest-tlgraph"
        ) from None
    summary = story_lines(comparison)
    schemas = comparison.old.schema, comparison.new.schema
    if schemas[0] != schemas[1]:  # nothing pairs across two schemas: a false diff
        said = [f"schema {v}" if v else "no schema: 0.3" for v in schemas]
        raise CommandError(
            f"cannot diff {args.old} ({said[0]}) and {args.new} ({said[1]}): drawings of "
            "two schemas do not pair; redraw the older one with this version "
            "(pytest --snapshot-update, or tlgraph draw)"
        )
    drawing = draw_comparison(comparison, context=None if args.full else CONTEXT_HOPS)
    rescale = recolour_line(comparison)
    _write(drawing, args.output, args.renderer, args.dpi, _DIFF_REMEDY)
    if args.output is not None:
        say("\n".join(summary if rescale is None else [*summary, rescale]))
    return 0 if old == new else 1


def project_root(here: Path | None = None) -> Path:
    """The project ``tlgraph accept`` runs in: the nearest folder from ``here`` (the
    current folder) up that has an ini file or ``.git``, as pytest finds its rootdir;
    ``here`` itself when none has."""
    start = (here or Path.cwd()).resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    return start


def results_folder(given: str | None, command: str = "report") -> Path:
    """The folder ``tlgraph report`` (or ``accept``) reads: the one given, else
    ``tlgraph-results`` in the current folder or the nearest parent that has one, up to
    the project's root (a folder with an ini file or ``.git``): pytest run from a
    subfolder writes it at the rootdir. A project whose ini file sets
    ``tlgraph_results`` is read there (``inifile.ini_results``)."""
    from pytest_tlgraph.results.runs import last_run

    if given is not None:
        root = Path(given)
        if root.exists() and not root.is_dir():
            raise CommandError(f"{given!r} is a file; give the results folder")
        if not root.is_dir():
            raise CommandError(
                f"no results folder {given}: give the folder pytest wrote "
                "(--tlgraph-results, default tlgraph-results)"
            )
        return last_run(root)
    from pytest_tlgraph.cli.inifile import ini_results

    here = Path.cwd()
    for folder in (here, *here.parents):
        configured = ini_results(folder)  # the project's ini: tlgraph_results = DIR
        if configured is not None and configured.is_dir():
            return last_run(configured)
        if (folder / _DEFAULT_RESULTS).is_dir():
            return last_run(folder / _DEFAULT_RESULTS)
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            break  # the project's root: a folder above it is another project's
    folder_flag = f"tlgraph {command} {'--results ' if command != 'report' else ''}DIR"
    raise CommandError(
        f"no results folder {_DEFAULT_RESULTS}/ here or in a parent folder: the last run "
        f"passed (a passing run leaves none) or wrote elsewhere; run tlgraph {command} "
        f"where pytest ran, or give the folder: {folder_flag}"
    )


def shown(path: Path) -> str:
    """``path`` as printed: resolved, relative to the current folder, absolute when it
    cannot be."""
    return display_path(path.resolve(), Path.cwd().resolve())


def shards_of(given: Sequence[str] | None, command: str = "report") -> list[Shard]:
    """The results folders a command reads: each one given (once), else the one
    :func:`results_folder` finds; each named as given (or as found, relative here)."""
    from pytest_tlgraph.review.merge import Shard

    if not given:
        root = results_folder(None, command)
        return [Shard(shown(root), root)]
    out: list[Shard] = []
    for folder in given:
        root = results_folder(folder, command)
        if any(s.root.resolve() == root.resolve() for s in out):
            continue  # the same folder twice is read once
        out.append(Shard(folder.rstrip("/") or folder, root))
    return out


def _print_failure(call: MergedCall, merged: bool) -> None:
    """One failure: its title (with its shard when merged), its story, why a drawing is
    missing, and each of its images once."""
    from pytest_tlgraph.review.merge import conflict_line
    from pytest_tlgraph.review.report import MAX_STORY_LINES

    entry = call.entry
    outcome = entry.outcome
    shard = f" (shard {call.shards()})" if merged else ""
    say(f"  {outcome.title or '?'}{shard}{' (accepted)' if entry.accepted else ''}")
    flag = conflict_line(call.shard, call.conflict)
    if flag is not None:
        say(f"    {flag}")
    story = outcome.story
    for line in story[:MAX_STORY_LINES] or [outcome.headline]:
        say(f"    {line}")
    if len(story) > MAX_STORY_LINES:
        say(f"    ... and {len(story) - MAX_STORY_LINES} more (every change: report.html)")
    for line in outcome.notes:
        say(f"    {line}")
    for kind, rel in outcome.images.items():
        say(f"    {kind + ':':<15} {shown(entry.root / rel)}")


def run_report(args: argparse.Namespace) -> None:
    """``tlgraph report``: the report's path and the last run's failures; every path it
    prints is relative to the current folder. Several results folders (or ``-o``) are
    merged into one report.html, summary.json and summary.md."""
    from pytest_tlgraph.results.artifacts import REPORT_NAME
    from pytest_tlgraph.review.merge import merge_pending

    shards = shards_of(args.results)
    merged = len(shards) > 1 or args.output is not None
    damaged: list[str] = []
    calls = merge_pending(shards, damaged)
    for line in damaged:
        say(f"tlgraph report: {line}", file=sys.stderr)
    out = Path(args.output or _MERGED)
    written = _write_merged(shards, calls, out, args.overwrite) if merged else None
    counts = _call_counts(shards[0].root) if not merged else _merged_counts(written)
    if counts is not None:
        say(f"snapshot calls in the {'merged runs' if merged else 'last run'}: {counts}")
    if written is not None:
        names = ", ".join(s.name for s in shards)
        say(f"merged {len(shards)} results folder{'s' * (len(shards) != 1)} ({names}) into "
            f"{shown(written)}/: {REPORT_NAME}, summary.json, summary.md")  # fmt: skip
    if not calls:
        where = f"{shown(shards[0].root)}/" if not merged else "the results folders"
        say(f"no snapshot failures recorded in {where}: the last run passed")
        return
    count = len(calls)
    if written is not None:
        report = written / REPORT_NAME
    else:
        root = shards[0].root
        report = root / ("tlgraph-" + REPORT_NAME)  # written there when report.html is a user's
        if not report.is_file():
            report = root / REPORT_NAME
    where = shown(report) if report.is_file() else f"{shown(report)} (not written yet)"
    say(f"report: {where}")
    upgrade = _upgrade_line(calls)
    if upgrade is not None:
        say(upgrade)
    runs = "the merged runs" if merged else "the last run"
    say(f"{count} snapshot failure{'s' if count != 1 else ''} in {runs}:")
    for call in calls:
        _print_failure(call, merged)
    _print_review(calls, merged)


_MERGED = "tlgraph-merged"


def _upgrade_line(calls: Sequence[MergedCall]) -> str | None:
    """The run's one line when every failure is of a kind an upgrade causes."""
    from pytest_tlgraph.review.drift import run_upgrade_line

    return run_upgrade_line([call.entry.outcome for call in calls])


def _write_merged(
    shards: Sequence[Shard], calls: Sequence[MergedCall], out: Path, overwrite: bool = False
) -> Path:
    """Write the merged report.html, summary.json and summary.md into ``out``; a file
    of those names already there is kept (:class:`CommandError`) unless ``overwrite``."""
    from pytest_tlgraph.disk.files import SnapshotWriteError, atomic_write
    from pytest_tlgraph.results.artifacts import REPORT_NAME
    from pytest_tlgraph.review.drift import run_upgrade_line
    from pytest_tlgraph.review.html import write_html
    from pytest_tlgraph.review.merge import merge_calls, page_record
    from pytest_tlgraph.review.summary import (
        SUMMARY_JSON,
        SUMMARY_MD,
        render_markdown,
        summary_json,
    )

    if out.exists() and not out.is_dir():
        raise CommandError(f"-o {out} is a file; give a folder for the merged report")
    if any(out.resolve() == s.root.resolve() for s in shards):
        raise CommandError(
            f"-o {out} is one of the results folders; give another folder for the merged "
            "report (the shard's own report.html stays)"
        )
    taken = [n for n in (REPORT_NAME, SUMMARY_JSON, SUMMARY_MD) if os.path.lexists(out / n)]
    if taken and not overwrite:
        raise CommandError(
            f"{display_path(out / taken[0])} exists already, and tlgraph report never "
            "overwrites a report silently; give another -o, or add --overwrite to replace it"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandError(f"cannot make {out} ({error.strerror}); give a writable -o") from None
    project = project_root()
    records = [page_record(call, out, project) for call in calls]
    summaries = merge_calls(shards, out)  # passing calls too, where shards kept them
    upgrade = run_upgrade_line(summaries)
    names = [s.name for s in shards]
    files = {
        REPORT_NAME: None,
        SUMMARY_JSON: summary_json(summaries, shards=names),
        SUMMARY_MD: render_markdown(summaries, REPORT_NAME, shards=names).encode("utf-8"),
    }
    try:
        if records:
            notes = [] if upgrade is None else [upgrade]
            shard_roots = [s.root for s in shards]
            write_html(records, out, out / REPORT_NAME, notes=notes, shards=shard_roots)
        else:
            (out / REPORT_NAME).unlink(missing_ok=True)  # no failure: no stale page
        for name, data in files.items():
            if data is not None:
                atomic_write(out / name, data, anchor=out)
    except SnapshotWriteError as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        raise CommandError(f"cannot write into {out} ({error.strerror}); free space or "
                           "give another -o") from None  # fmt: skip
    return out


def _merged_counts(out: Path | None) -> str | None:
    return None if out is None else _call_counts(out)


def _print_review(calls: Sequence[MergedCall], merged: bool = False) -> None:
    """The calls pending review, one line each with its story, then those accepted."""
    waiting = [call for call in calls if not call.entry.accepted]
    done = [call for call in calls if call.entry.accepted]
    if waiting:
        n = len(waiting)
        say(f"{n} call{'s' if n != 1 else ''} pending review (tlgraph accept NODEID or --all):")
        for call in waiting:
            entry = call.entry
            line = entry.outcome.headline
            drift = entry.outcome.drift
            if drift is not None:
                line = f"{drift.line}; {line}"
            shard = f" (shard {call.shards()})" if merged else ""
            say(f"  {entry.nodeid} [{entry.name}]{shard}: {line}")
    if done:
        n = len(done)
        say(f"{n} call{'s' if n != 1 else ''} accepted since the run (rerun pytest to check):")
        for call in done:
            shard = f" (shard {call.shards()})" if merged else ""
            say(f"  {call.entry.nodeid} [{call.entry.name}]{shard}")


def _call_counts(root: Path) -> str | None:
    """``2 passed, 1 failed`` from ``summary.json`` (``--tlgraph-summary=json``), if any."""
    import json

    from pytest_tlgraph.disk.bounded import read_regular
    from pytest_tlgraph.review.summary import SUMMARY_JSON

    # The plugin writes tlgraph-summary.json only when summary.json is another tool's.
    mine = root / ("tlgraph-" + SUMMARY_JSON)
    try:
        path = mine if mine.is_file() else root / SUMMARY_JSON
        counts = json.loads(read_regular(path, follow=False))["counts"]
        return ", ".join(f"{int(n)} {verdict}" for verdict, n in sorted(counts.items())) or None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # no summary asked for, or not one we can read: the records suffice
