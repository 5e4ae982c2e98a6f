"""A corpus of real third-party models, built by name from tiny configs.

Every entry is a factory returning a :class:`Case`: a freshly built model with random
weights (seeded, in eval mode) and the positional and keyword inputs of one forward.
Nothing is downloaded: Hugging Face models come from config objects, with the hub
switched offline before ``transformers`` is imported. Drawings, benchmarks and the
gallery reuse entries by name::

    from tests.corpus import build
    case = build("gpt2")
    trace = capture(case.model, case.inputs, kwargs=case.kwargs)
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from tests.corpus.registry import CORPUS, TRANSFORMERS, Case, build, names

__all__ = ["CORPUS", "TRANSFORMERS", "Case", "build", "names"]
