"""Importing the package is cheap: torch is loaded on first use, not on import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_importing_the_package_does_not_import_torch() -> None:
    out = _run(
        "import sys, pytest_tlgraph\n"
        "from pytest_tlgraph import TraceError, RenderError, EncodingRefusal\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))"
    )
    assert out == "[]"


def test_the_public_names_load_torch_on_first_use() -> None:
    out = _run(
        "import sys, pytest_tlgraph\n"
        "capture = pytest_tlgraph.capture\n"
        "print('torch' in sys.modules, callable(capture), pytest_tlgraph.Trace.__name__)"
    )
    assert out == "True True Trace"


def test_every_public_name_resolves() -> None:
    import pytest_tlgraph

    for name in pytest_tlgraph.__all__:
        assert getattr(pytest_tlgraph, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pytest_tlgraph.nope  # noqa: B018
