"""Digests of the canonical DOT of every corpus model and every stored example.

``python scripts/dot_digests.py OUT`` captures each model of ``tests/corpus/registry.py``
once, draws it under a few option sets (plain, ``depth=1``, ``collapse="auto"``,
``color_by="flops"``) and writes one ``sha256  case/options`` line per drawing to
``OUT/corpus.txt``, and one line per ``examples/**/*.gv`` to ``OUT/examples.txt``.
A drawing that refuses writes the refusal's class and message instead of a digest.
Run it before and after a change that must not change stored bytes, then
``diff -r BEFORE AFTER``.

The script runs under ``PYTHONHASHSEED=0`` (it starts itself again with it): some corpus
models capture differently with the order a set of strings iterates in (``gemma3``
runs its two rotary embeddings in set order), which a random hash seed changes from one
process to the next.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The option sets every corpus model is drawn under, by name.
OPTION_SETS: dict[str, dict[str, Any]] = {
    "plain": {},
    "depth1": {"depth": 1},
    "auto": {"collapse": "auto"},
    "flops": {"color_by": "flops"},
}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corpus_lines(only: list[str] | None = None) -> list[str]:
    """One line per corpus model and option set: the DOT's digest or the refusal."""
    import torch

    from pytest_tlgraph import capture
    from tests.corpus.registry import build, names

    lines = []
    for name in only or names():
        case = build(name)
        with torch.random.fork_rng(devices=[]):
            trace = capture(case.model, case.inputs, kwargs=case.kwargs)
        for label, options in OPTION_SETS.items():
            try:
                result = _digest(trace.draw(**options).dot)
            except Exception as error:  # a refusal is a result too
                result = f"{type(error).__name__}: {error}"
            lines.append(f"{result}  {name}/{label}")
        print(name, file=sys.stderr, flush=True)
    return lines


def example_lines() -> list[str]:
    """One line per stored example ``.gv``: its bytes' digest."""
    return [
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(ROOT)}"
        for path in sorted((ROOT / "examples").rglob("*.gv"))
    ]


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if len(sys.argv) < 2:
        raise SystemExit("usage: python scripts/dot_digests.py OUT_FOLDER [CASE ...]")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    (out / "examples.txt").write_text("\n".join(example_lines()) + "\n", encoding="utf-8")
    lines = corpus_lines(sys.argv[2:] or None)
    (out / "corpus.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} corpus digests to {out}")


if __name__ == "__main__":
    main()
