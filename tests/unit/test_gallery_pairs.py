"""The gallery's before-and-after pairs (scripts/gallery.py): each names a model the
script can build and has 0.2's picture committed beside it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import gallery  # noqa: E402

sys.path.remove(str(ROOT / "scripts"))

from tests.corpus import names  # noqa: E402
from tests.corpus.production_configs import PRODUCTION  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def test_every_pair_has_its_before_picture_and_a_model() -> None:
    stems = [pair.stem for pair in gallery.PAIRS]
    assert len(stems) == len(set(stems))
    for pair in gallery.PAIRS:
        before = gallery.BEFORE_DIR / f"{pair.stem}.png"
        assert before.read_bytes().startswith(PNG), before
        assert pair.model in PRODUCTION or pair.model in names(), pair.model


def test_the_pairs_cover_the_issue_24_cases() -> None:
    models = {pair.model for pair in gallery.PAIRS}
    assert {"llama-3-8b", "inception_v3"} <= models
    assert models & {"gemma3", "qwen2_moe"}
    assert any("fold" in pair.stem for pair in gallery.PAIRS)
    # Nothing else lives in the before folder: every picture there is a pair's.
    assert sorted(p.stem for p in gallery.BEFORE_DIR.glob("*.png")) == sorted(
        pair.stem for pair in gallery.PAIRS
    )
