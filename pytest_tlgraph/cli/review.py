"""``tlgraph review``: the calls pending review, one at a time, in the terminal.

Each call shows its title, its story (the structure section of its report, the drift
line first) and the paths of its structural diff drawing and of the whole graph (opened
in the image viewer with ``--open``), then asks: ``a`` accept (its ``.gv`` and ``.png``
written together or not at all, as ``tlgraph accept`` does), ``s`` skip, ``q`` quit.
Nothing is written for a call that is not accepted. The answers are read a line at a
time from standard input, so the loop can be driven by a script too; the end of input
quits.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pytest_tlgraph.cli.output import say

if TYPE_CHECKING:
    from pytest_tlgraph.review.merge import MergedCall

__all__ = ["run_review"]

#: The drawings a review shows (and opens), in order, with their names.
_DRAWINGS: Final = (("graphdiff", "diff drawing"), ("graphdiff_full", "whole graph"))
_PROMPT: Final = "[a]ccept, [s]kip, [q]uit? "
#: Story lines shown per call before the rest is counted (report.html has them all).
_STORY_LINES: Final = 16


def _viewer() -> list[str] | None:
    """The command that opens a file in the desktop's viewer, if this machine has one."""
    if sys.platform == "darwin":
        return ["open"]
    if sys.platform == "win32":
        return ["explorer"]
    found = shutil.which("xdg-open")
    return [found] if found else None


def _open(paths: list[Path]) -> str | None:
    """Open ``paths`` in the viewer; the line saying why not, when it cannot."""
    command = _viewer()
    if command is None:
        return "no image viewer found (xdg-open); open the paths above yourself"
    for path in paths:
        try:
            subprocess.Popen(
                [*command, str(path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError as error:
            return f"could not open {path} ({error.strerror or error}); open it yourself"
    return None


def _show(call: MergedCall, number: int, count: int, merged: bool, view: bool) -> None:
    """Print one call: title, story, drawings (and open them)."""
    from pytest_tlgraph.cli.accept import label
    from pytest_tlgraph.cli.commands import shown
    from pytest_tlgraph.review.merge import conflict_line

    outcome = call.entry.outcome
    say(f"[{number}/{count}] {label(call, merged)}")
    say(f"  {outcome.title or '?'}")
    flag = conflict_line(call.shard, call.conflict)
    if flag is not None:
        say(f"  {flag}")
    lines = list(outcome.story) or [outcome.headline]
    drawings = outcome.images
    paths = [call.entry.root / drawings[kind] for kind, _ in _DRAWINGS if kind in drawings]
    for text in lines[:_STORY_LINES]:
        say(f"    {text}")
    if len(lines) > _STORY_LINES:
        say(f"    ... and {len(lines) - _STORY_LINES} more lines (report.html has them all)")
    for kind, name in _DRAWINGS:
        if kind in drawings:
            say(f"  {name}: {shown(call.entry.root / drawings[kind])}")
    if view and paths:
        problem = _open(paths)
        if problem is not None:
            say(f"  {problem}")


def _answer() -> str:
    """``a``, ``s`` or ``q`` from standard input (asked again on anything else; the end
    of input is ``q``)."""
    while True:
        sys.stdout.write(_PROMPT)
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            sys.stdout.write("\n")
            return "q"
        word = line.strip().lower()
        if not _typed():  # a script answers: its answer is shown, as typed ones are
            say(word)
        if word in ("a", "accept", "s", "skip", "q", "quit"):
            return word[0]
        say("  answer a (accept), s (skip) or q (quit)")


def _typed() -> bool:
    """Standard input is a terminal (the answer is on screen already)."""
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def run_review(args: argparse.Namespace) -> int:
    """``tlgraph review``: 0 when no accepted call was refused, 1 when one was."""
    from pytest_tlgraph.cli.accept import Locks, Refused, accept_one, label
    from pytest_tlgraph.cli.commands import shards_of, shown
    from pytest_tlgraph.review.merge import merge_pending

    shards = shards_of(args.results, "review")
    merged = len(shards) > 1
    locks = Locks(shards, "review")
    accepted, skipped, refused = 0, 0, 0
    try:
        damaged: list[str] = []
        waiting = [call for call in merge_pending(shards, damaged) if not call.entry.accepted]
        for line in damaged:
            say(f"tlgraph review: {line}", file=sys.stderr)
        if not waiting:
            where = f"{shards[0].name}/" if not merged else "the results folders"
            say(f"no call pending review in {where}: nothing to review")
            return 0
        for number, call in enumerate(waiting, start=1):
            _show(call, number, len(waiting), merged, args.open)
            answer = _answer()
            if answer == "q":
                break
            if answer == "s":
                skipped += 1
                say(f"  skipped {label(call, merged)}")
                continue
            try:
                written = accept_one(call)
            except Refused as why:
                refused += 1
                say(f"  refused {label(call, merged)}: {why}", file=sys.stderr)
                continue
            accepted += 1
            say(f"  accepted: wrote {', '.join(shown(p) for p in written)}")
    finally:
        locks.release()
    left = len(waiting) - accepted - skipped - refused
    parts = [f"{accepted} accepted", f"{skipped} skipped"]
    parts += [f"{refused} refused"] if refused else []
    parts += [f"{left} not reviewed"] if left else []
    tail = "; rerun pytest to check them" if accepted else ""
    say(", ".join(parts) + tail)
    return 1 if refused else 0
