"""Render the gallery of real models: docs/images/gallery/*.png and docs/gallery.md.

Each entry draws one corpus model (tests/corpus: Hugging Face models from tiny configs,
torch's own layers) with the options a reviewer would reach for, on both pages, with
the pinned ``graphviz-pure`` renderer at 96 dpi, so the files are byte-identical on
every machine (masked nothing: no entry encodes a timing). The page lists, per image,
the options, the visible nodes, the size in pixels and the lowest text contrast.

Usage::

    PYTHONPATH=. python scripts/gallery.py
    PYTHONPATH=. python scripts/gallery.py --out /tmp/gallery
"""

from __future__ import annotations

import argparse
import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from pytest_tlgraph import capture
from tests.colours import lowest_contrast
from tests.corpus import build

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "docs" / "images" / "gallery"
PAGE = ROOT / "docs" / "gallery.md"
DPI = 96


@dataclass(frozen=True)
class Entry:
    """One gallery picture: a corpus model and its draw options."""

    stem: str
    model: str
    title: str
    note: str
    options: dict[str, Any] = field(default_factory=dict)


ENTRIES = (
    Entry(
        "gpt2_auto_flops",
        "gpt2",
        'GPT-2, `collapse="auto"`, `color_by="flops"`',
        "The two blocks fold into one `x2` cluster (the count first, bold, at the top) "
        "that draws the first block; auto spends its 60 nodes where the FLOPs are, so the "
        "block is drawn op by op and the position and mask arithmetic is one segment. The "
        "costliest nodes are the darkest on the light page (the brightest on the dark one), "
        "and every node's text is chosen to read on its fill.",
        {"collapse": "auto", "color_by": "flops"},
    ),
    Entry(
        "llama_depth2",
        "llama",
        "Llama, `depth=2`",
        "Each decoder layer is a cluster whose attention, MLP and norms are boxes; a fixed "
        "depth never folds, so both layers are drawn.",
        {"depth": 2},
    ),
    Entry(
        "t5_auto",
        "t5",
        'T5, `collapse="auto"`',
        "Encoder and decoder opened heaviest first until 60 nodes; the first block of "
        "each stack differs (relative position bias), so nothing folds.",
        {"collapse": "auto"},
    ),
    Entry(
        "bert_plain",
        "bert",
        "BERT, plain",
        "Every op. Rows inside a cluster name the module relative to it (`@query`); the "
        "input and outputs are named `input_ids`, `last_hidden_state`, `pooler_output`.",
        {},
    ),
    Entry(
        "sequential_auto",
        "sequential_2000",
        '`Sequential` of 2,000 `Linear, ReLU` pairs, `collapse="auto"`',
        "4,000 module calls fold to one pair in an `x2000 @0-3999 (Linear, ReLU)` cluster.",
        {"collapse": "auto"},
    ),
    Entry(
        "lstm",
        "lstm_bidirectional",
        "Bidirectional two-layer LSTM",
        "The params row wraps at 80 characters on argument boundaries; the args row shows "
        "the salient args only; outputs are named by their path (`[0]`, `[1][0]`).",
        {},
    ),
)


def render(out: Path) -> list[str]:
    """Write every picture into ``out``; return the page's lines."""
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Gallery",
        "",
        "Real models from the test corpus (`tests/corpus`: Hugging Face `transformers` "
        "built from tiny configs, torch's own layers), drawn with pytest-tlgraph 0.2 on "
        "both pages. Regenerate with `PYTHONPATH=. python scripts/gallery.py`.",
        "",
    ]
    for entry in ENTRIES:
        case = build(entry.model)
        trace = capture(case.model, case.inputs, kwargs=case.kwargs)
        lines += [f"## {entry.title}", "", entry.note, ""]
        for page in ("light", "dark"):
            drawing = trace.draw(page=page, **entry.options)
            png = drawing.png(dpi=DPI)
            name = f"{entry.stem}_{page}.png"
            (out / name).write_bytes(png)
            width, height = Image.open(io.BytesIO(png)).size
            facts = (
                f"{page} page: {len(drawing.nodes)} nodes, {width} x {height} px, lowest "
                f"text contrast {lowest_contrast(drawing):.2f}:1"
            )
            print(f"{name}: {facts}")
            lines += [f"![{entry.title}, {page} page](images/gallery/{name})", "", facts, ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Render the gallery (``--out`` for another folder; the page is written beside
    the default folder only)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    lines = render(args.out)
    if args.out == OUT_DIR:
        PAGE.write_text("\n".join(lines).rstrip() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
