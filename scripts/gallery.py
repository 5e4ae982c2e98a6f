"""Render the gallery of real models: docs/images/gallery/*.png and docs/gallery.md.

Each entry draws one corpus model (tests/corpus: Hugging Face models from tiny configs,
torch's own layers) with the options a reviewer would reach for, on both pages, with
the pinned ``graphviz-pure`` renderer at 96 dpi, so the files are byte-identical on
every machine (masked nothing: no entry encodes a timing). The page lists, per image,
the options, the visible nodes, the size in pixels and the lowest text contrast.

A "before and after" section sets 0.2's drawings of the issue 24 cases (static files in
docs/images/gallery/before/, rendered once with pytest-tlgraph 0.2, commit e50550d, from
the same model definitions) beside this version's, which the script draws.

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
from pytest_tlgraph.trace import Trace
from tests.colours import lowest_contrast
from tests.corpus import build
from tests.corpus.production_configs import PRODUCTION, build_production, meta_inputs

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "docs" / "images" / "gallery"
#: 0.2's pictures of the before-and-after pairs, committed once (never regenerated).
BEFORE_DIR = OUT_DIR / "before"
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
        "llama_constants",
        "llama",
        "Llama, plain: the rotary tables as constants",
        "The rotary `cos` and `sin` tables are computed from the non-persistent `inv_freq` "
        "buffer and positions alone: each is one `const` node outside every module box, its values "
        "written as a digest, with an edge to every attention that reads it. A changed "
        "`rope_theta` changes the digest; a retrain changes nothing.",
        {},
    ),
    Entry(
        "llama_constants_auto",
        "llama",
        'Llama, `collapse="auto"`: constants outside the fold',
        "The two `const` tables sit outside the `x2` fold of decoder layers and feed it "
        "like an input, so the fold stays one cluster; the causal mask is "
        "`is_causal=True` on the attention, not a tensor.",
        {"collapse": "auto"},
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
    Entry(
        "attn_decoder_timesteps",
        "attn_decoder",
        'Attention decoder, `stack_by=True, direction="leftright"`: the timestep diagram',
        "The seq2seq tutorial's attention decoder, greedy-decoding three tokens: one column "
        "per pass, left to right, each pass's own ops top to bottom in dataflow order "
        "(every edge inside a pass points down); the edges from one step to the next cross "
        "between the columns. The key sits at the top.",
        {"stack_by": True, "direction": "leftright"},
    ),
)


@dataclass(frozen=True)
class Pair:
    """One before-and-after picture: 0.2's drawing (a static file in
    :data:`BEFORE_DIR`) beside this version's, both on the light page."""

    stem: str
    model: str  # a corpus entry, or a production config drawn on meta
    title: str
    before: str  # what 0.2 drew, one line
    after: str  # what changed, one line
    before_nodes: int
    options: dict[str, Any] = field(default_factory=lambda: {"collapse": "auto"})


PAIRS = (
    Pair(
        "llama3_8b_auto",
        "llama-3-8b",
        'Llama-3-8B, full config on meta, `collapse="auto"`: same class, same detail',
        "The final `model.norm` is drawn op by op (8 nodes) while every decoder layer's "
        "`LlamaRMSNorm` is a box.",
        "The final norm is one `@norm (LlamaRMSNorm)` box like the layers' norms, and "
        "the budget it freed opens the decoder layer down to its attention and MLP.",
        34,
    ),
    Pair(
        "gemma3_auto",
        "gemma3",
        'Gemma3 (tiny config), `collapse="auto"`: the budget goes to the compute',
        "Most nodes are mask and position plumbing (`arange`, `cumsum`, `diff`, `gt`, "
        "`le`, `and`) while both decoder layers are single boxes.",
        "Each connected run of plumbing is one segment node, and both decoder layers "
        "are open: attention and norms as boxes, the MLP op by op.",
        47,
    ),
    Pair(
        "inception_v3_auto",
        "inception_v3",
        'Inception v3, `collapse="auto"`: the branches show',
        "A 23-node chain of whole blocks hides every branch of every Inception block.",
        "The heaviest classes (`InceptionC`, `InceptionB`) are open: their parallel "
        "branch boxes feed each block's `cat`.",
        23,
    ),
    Pair(
        "mixtral_8x7b_fold",
        "mixtral-8x7b",
        'Mixtral-8x7B, full config on meta, `collapse="auto"`: the fold count reads first',
        "The fold's `x32` ends its plain title, at the cluster's bottom.",
        "The title leads with the count, in bold at the top: "
        "`x32 @model.layers.0-31 (MixtralDecoderLayer)`; the MoE block inside is open.",
        34,
    ),
)


def _trace(model: str) -> Trace:
    """The capture of a corpus entry, or of a production config on the meta device."""
    if model in PRODUCTION:
        args, kwargs = meta_inputs()
        return capture(build_production(model), args, kwargs=kwargs)
    case = build(model)
    return capture(case.model, case.inputs, kwargs=case.kwargs)


def _size(png: bytes) -> str:
    width, height = Image.open(io.BytesIO(png)).size
    return f"{width} x {height} px"


def render_pairs(out: Path) -> list[str]:
    """Draw the "after" side of every pair into ``out`` (``<stem>_after.png``) and
    return the page's section, 0.2's picture beside each."""
    lines = [
        "## Before and after (0.2 and 0.3)",
        "",
        "The cases of issue 24, on the light page. The left pictures were rendered once "
        "with pytest-tlgraph 0.2 (commit `e50550d`) from the same model definitions and "
        "are kept as they are in `images/gallery/before/`; the right ones are drawn by "
        "`scripts/gallery.py`.",
        "",
    ]
    for pair in PAIRS:
        before = (BEFORE_DIR / f"{pair.stem}.png").read_bytes()
        drawing = _trace(pair.model).draw(page="light", **pair.options)
        png = drawing.png(dpi=DPI)
        name = f"{pair.stem}_after.png"
        (out / name).write_bytes(png)
        after = f"{len(drawing.nodes)} nodes, {_size(png)}"
        print(f"{name}: {after}")
        lines += [
            f"### {pair.title}",
            "",
            "| 0.2 | 0.3 |",
            "| --- | --- |",
            f"| ![{pair.title}, 0.2](images/gallery/before/{pair.stem}.png) "
            f"| ![{pair.title}, 0.3](images/gallery/{name}) |",
            f"| {pair.before} {pair.before_nodes} nodes, {_size(before)}. "
            f"| {pair.after} {after}. |",
            "",
        ]
    return lines


def render(out: Path) -> list[str]:
    """Write every picture into ``out``; return the page's lines."""
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Gallery",
        "",
        "Real models from the test corpus (`tests/corpus`: Hugging Face `transformers` "
        "built from tiny configs, torch's own layers), drawn with this version of "
        "pytest-tlgraph on both pages. Regenerate with "
        "`PYTHONPATH=. python scripts/gallery.py`.",
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
    return lines + render_pairs(out)


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
