"""Draw the real changes of tests/corpus/changes.py and their structural diffs.

For each change (``CHANGES`` and the edits that move things around, ``MOVES``), both
sides are captured and written as ``<out>/<name>/{old,new}-{full,depth1,depth2,auto}.gv``
(the full drawing, ``depth=1``, ``depth=2`` and ``collapse="auto"``); then
``tlgraph diff old.gv new.gv -o <view>-diff.png`` draws each pair and the summary it
prints is shown here, so the diff drawings and summaries of one version can be set
beside another's.

With ``--docs`` it also draws the reviewer's edits (``tests/corpus/reviewer.py``) of two
models, the GPT and the 4-stage CNN, under ``collapse="auto"`` and the GPT's under
``depth=1``: each pair compared in process, its story and its diff drawing (with
context) put in ``docs/diffs.md``.

Usage::

    PYTHONPATH=. python scripts/change_diffs.py
    PYTHONPATH=. python scripts/change_diffs.py --out /tmp/changes block_inserted
    PYTHONPATH=. python scripts/change_diffs.py --docs   # docs/diffs.md and its pictures
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import torch

from pytest_tlgraph import capture
from pytest_tlgraph.diff.view.comparison import compare
from pytest_tlgraph.diff.view.drawing import draw_comparison
from pytest_tlgraph.diff.view.story import story_lines
from pytest_tlgraph.trace import Trace
from tests.corpus.changes import CHANGES as EDITS
from tests.corpus.changes import MOVES
from tests.corpus.reviewer import EDITS as REVIEWER_EDITS

#: Every change the script draws, by name.
CHANGES = {**EDITS, **MOVES}

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = Path("/tmp/tlgraph-changes")
#: The drawings compared per change: the file stem and its draw options.
VIEWS: dict[str, dict[str, object]] = {
    "full": {},
    "depth1": {"depth": 1},
    "depth2": {"depth": 2},
    "auto": {"collapse": "auto"},
}


def _write_views(trace: Trace, folder: Path, side: str) -> None:
    """Write the ``side`` (old or new) drawings of ``trace`` into ``folder``."""
    for view, options in VIEWS.items():
        dot = trace.draw(**options).dot
        (folder / f"{side}-{view}.gv").write_text(dot, encoding="utf-8")


def _diff(folder: Path, view: str) -> str:
    """Run ``tlgraph diff`` on one view's pair; its output (the summary) as text."""
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest_tlgraph", "diff",
            str(folder / f"old-{view}.gv"), str(folder / f"new-{view}.gv"),
            "-o", str(folder / f"{view}-diff.png"),
        ],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    text = (done.stdout + done.stderr).rstrip()
    if done.returncode not in (0, 1):
        text += f"\n(tlgraph diff exited {done.returncode})"
    return text


#: The view ``docs/diffs.md`` shows of each change, and what the change is.
DOCS_VIEWS: dict[str, tuple[str, str]] = {
    "block_inserted": ("full", "a third `BasicBlock` in ResNet-18's `layer1`"),
    "same_type_inserted": ("full", "`Dropout(0.1)` in front of MobileNetV3's `Dropout(0.2)`"),
    "activation_swapped": ("auto", "ReLU -> SiLU in every `BasicBlock`"),
    "kernel_changed": ("depth2", "every `BasicBlock` conv 3x3 -> 5x5"),
    "width_changed": ("auto", "ResNet-18's base width 8 -> 16"),
    "stem_kernel_changed": ("full", "the stem conv 7x7 -> 5x5"),
    "head_inserted": ("full", "a `BasicBlock` inserted in front of ResNet-18's `layer2.0`"),
    "middle_inserted": ("depth1", "a `BasicBlock` inserted between `layer2.0` and `layer2.1`"),
    "block_removed": ("full", "ResNet-18 without `layer3.1`"),
    "blocks_swapped": ("full", "`layer1.0` and `layer1.1` (one of them GELU) swap places"),
    "fold_broken": ("auto", "GELU in the third of four folded `BasicBlock` s"),
    "decoder_fold_broken": ("auto", "GELU in the third of four Llama decoder layers"),
    "olmo2_fold_broken": ("auto", "GELU in the second of OLMo2's two decoder layers"),
    "fold_count_changed": ("auto", "four `BasicBlock` s in `layer1`, then three"),
    "box_moved": ("depth1", "an `Identity` in front of `layer2`'s blocks moves them one index on"),
    "order_swapped": ("full", "the stem runs ReLU before BatchNorm"),
    "helper_refactored": ("full", "q/k/v projections in a helper that runs them value first"),
}
#: The reviewer's edits shown in ``docs/diffs.md``: the model, the view, its draw options.
REVIEWER_VIEWS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("gpt", "auto", {"collapse": "auto"}),
    ("cnn", "auto", {"collapse": "auto"}),
    ("gpt", "depth1", {"depth": 1}),
)
#: What each reviewer model is, for the page.
REVIEWER_MODELS = {
    "gpt": "a GPT of four pre-norm blocks (`blocks.0-3`), each edit in `blocks.2`",
    "cnn": "a CNN of four stages of two `ConvBlock` s (`stages.0-3`), each edit in `stages.2`",
}
#: The resolution of the reviewer edits' pictures (small: many on one page).
REVIEWER_DPI = 56
#: The story lines shown above each reviewer edit's picture.
REVIEWER_LINES = 4
DOCS_PAGE = ROOT / "docs" / "diffs.md"
DOCS_IMAGES = ROOT / "docs" / "images" / "diffs"


def write_docs(out: Path) -> None:
    """``docs/diffs.md``: each change's summary in every view, and the diff drawing of
    one view (copied to ``docs/images/diffs/``), from the folders :func:`run` wrote."""
    DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Real changes, as a failure tells them",
        "",
        "Each change below is a real edit of a corpus model (`tests/corpus/changes.py`),",
        "drawn before and after and compared: the summary a failing test prints, in each",
        "view, and the structural diff drawing of one view (the changes and two hops around",
        "them; grey dashed nodes are runs of unchanged nodes). Made by",
        "`PYTHONPATH=. python scripts/change_diffs.py --docs`.",
        "",
    ]
    for name, (view, what) in DOCS_VIEWS.items():
        folder = out / name
        lines += [f"## {name}: {what}", ""]
        for shown in VIEWS:
            summary = (folder / f"{shown}-summary.txt").read_text(encoding="utf-8").strip()
            lines += [f"`{shown}`:", "", "```", summary, "```", ""]
        image = DOCS_IMAGES / f"{name}-{view}.png"
        image.write_bytes((folder / f"{view}-diff.png").read_bytes())
        lines += [f"![{name}, {view}](images/diffs/{image.name})", ""]
    lines += reviewer_section()
    DOCS_PAGE.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {DOCS_PAGE.relative_to(ROOT)}")


def _reviewer_dots(name: str, views: list[dict[str, object]]) -> list[tuple[str, str]]:
    """The stored and received DOT of reviewer edit ``name`` in each of ``views``."""
    edit = REVIEWER_EDITS[name]
    sides = []
    for build in (edit.before, edit.after):
        torch.manual_seed(0)
        sides.append(capture(build().eval(), edit.inputs(), kwargs=edit.kwargs() or None))
    before, after = sides
    return [(before.draw(**o).dot, after.draw(**o).dot) for o in views]


def reviewer_section() -> list[str]:
    """The page's second part: each reviewer edit of :data:`REVIEWER_VIEWS`, its story
    (first lines) and its diff drawing, written to ``docs/images/diffs/``."""
    lines = [
        "# The reviewer's edits, as the diff draws them",
        "",
        "Each edit of `tests/corpus/reviewer.py` changes one thing in one place of a small",
        "model; below, the story's first lines and the diff drawing (with context), in the",
        'view made for real models, `collapse="auto"`, and for the GPT also in `depth=1`.',
        "",
    ]
    for model, view, options in REVIEWER_VIEWS:
        lines += [f"## {model}, `{view}`: {REVIEWER_MODELS[model]}", ""]
        for name, edit in REVIEWER_EDITS.items():
            if edit.model != model:
                continue
            ((old, new),) = _reviewer_dots(name, [options])
            comparison = compare(old, new)
            story = story_lines(comparison)[:REVIEWER_LINES]
            image = DOCS_IMAGES / f"reviewer-{model}-{edit.kind}-{view}.png"
            image.write_bytes(draw_comparison(comparison).png(REVIEWER_DPI))
            lines += [f"### {model}/{edit.kind} (`{view}`)", "", "```", *story, "```", ""]
            lines += [f"![{model}/{edit.kind}, {view}](images/diffs/{image.name})", ""]
            print(f"drew {image.relative_to(ROOT)}")
    return lines


def run(out: Path, selected: list[str]) -> int:
    """Capture, draw and diff every change in ``selected``; the exit status."""
    unknown = [name for name in selected if name not in CHANGES]
    if unknown:
        print(
            f"error: no change {', '.join(unknown)}; changes: {', '.join(CHANGES)}",
            file=sys.stderr,
        )
        return 2
    for name in selected or list(CHANGES):
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        before, after = CHANGES[name]()
        for side, case in (("old", before), ("new", after)):
            trace = capture(case.model, case.inputs, kwargs=case.kwargs or None)
            _write_views(trace, folder, side)
        for view in VIEWS:
            print(f"== {name} / {view} ({folder / f'{view}-diff.png'})")
            text = _diff(folder, view)
            summary = "\n".join(line for line in text.splitlines() if not line.startswith("wrote "))
            (folder / f"{view}-summary.txt").write_text(summary + "\n", encoding="utf-8")
            print(text)
            print()
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line: the changes to draw (default: all) and the output folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("changes", nargs="*", help=f"changes to draw: {', '.join(CHANGES)}")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    parser.add_argument(
        "--docs", action="store_true", help="then write docs/diffs.md and its pictures"
    )
    options = parser.parse_args(argv)
    if options.docs and options.changes:
        parser.error("--docs draws every change: give no change names with it")
    status = run(options.out, options.changes)
    if status == 0 and options.docs:
        write_docs(options.out)
    return status


if __name__ == "__main__":
    sys.exit(main())
