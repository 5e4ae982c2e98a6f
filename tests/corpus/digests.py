"""Print the DOT digests of corpus models as JSON: ``{name: {view: sha256}}``.

Run in a subprocess by ``test_determinism`` (each with its own ``PYTHONHASHSEED``)::

    PYTHONHASHSEED=1 python -m tests.corpus.digests gemma3 llama
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from typing import Any

from pytest_tlgraph import capture
from tests.corpus.registry import build

#: The views compared: every op's label, edge and params row; the boxes, folds and
#: segments of the glance, with their signatures.
VIEWS: dict[str, dict[str, Any]] = {"full": {}, "auto": {"collapse": "auto"}}


def digests(names: Sequence[str]) -> dict[str, dict[str, str]]:
    """Each model's DOT digest per view of :data:`VIEWS`."""
    out = {}
    for name in names:
        case = build(name)
        trace = capture(case.model, case.inputs, kwargs=case.kwargs)
        out[name] = {
            view: hashlib.sha256(trace.draw(**options).dot.encode()).hexdigest()
            for view, options in VIEWS.items()
        }
    return out


if __name__ == "__main__":
    json.dump(digests(sys.argv[1:]), sys.stdout)
